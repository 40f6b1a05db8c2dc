#!/bin/bash
# mpquery live shows how its process ended when the profile cannot say
# (issue 41, item 17): a SIGKILL leaves no final snapshot (process.ended
# ''), and live went on showing the process as if it ran.
#   - record --live (through tmux, at 120x30): the program killed by
#     SIGKILL; its process line says "ended: killed by SIGKILL" (what
#     record's waitpid saw, in info's words) and the help line "was killed
#     by SIGKILL (exit code 137)"; record exits 137, as the shell says.
#   - live DB (tmux): the same once the process is gone from this host:
#     "ended: killed (gone, no final snapshot)"; nothing while it runs.
#   - live --once: a process of another host (nothing can be told), a pid
#     now used by a process started later (gone), by one started before
#     the profile (it may be the profile's: nothing said), a zombie (gone).
# The profile's own ended value comes first (a return: "return 0").
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/live_steps
sh "$ROOT/tests/lib/deps.sh" tmux >deps.log 2>&1 || fail "tmux: $(cat deps.log)"
TM="tmux -L mpended$$ -f /dev/null"
on_exit "$TM kill-server 2>/dev/null"
screen() { $TM capture-pane -p -t "$1"; }
wait_screen() {
    for _ in $(seq 200); do screen "$1" | grep -Eq -- "$2" && return 0; sleep 0.1; done
    screen "$1"
    fail "the screen never showed /$2/"
}
proc_line() { printf '%s\n' "$1" | grep -E '^  live_steps \(pid [0-9]+\) '; }
once_line() { COLUMNS=120 LINES=30 "$MPQ" live "$1" --once | grep -E '^  live_steps \(pid [0-9]+\) ' | sed 's/) .* live/) N live/'; }

# ---- record --live, the program killed by SIGKILL
$TM new-session -d -s rec -x 120 -y 30 "cd $T && env -u COLUMNS -u LINES $MPQ record --live -o rec.db -- $P 100 300; echo REC-EXIT=\$?; sleep 60"
wait_screen rec "grow_large < main"
sh_pid=$($TM display -p -t rec '#{pane_pid}')
mpq=$(pgrep -P "$sh_pid") && prog=$(pgrep -P "$mpq") || fail "no program under record (shell $sh_pid)"
assert_eq "$(proc_line "$(screen rec)" | sed 's/) .* live/) N live/')" "  live_steps (pid $prog) N live" "running: no ending said"
kill -KILL "$prog"
wait_screen rec "q quit  \| the program was killed by SIGKILL"
s=$(screen rec)
assert_eq "$(printf '%s\n' "$s" | sed -n 30p)" \
  "c counter  s/S snapshot  / filter  q quit  | the program was killed by SIGKILL (exit code 137): q to quit" "the help line: killed by SIGKILL"
assert_match "$(proc_line "$s")" "^  live_steps \(pid $prog\) [0-9.]+ [KM]iB live, ended: killed by SIGKILL$" "its process line: killed by SIGKILL"
$TM send-keys -t rec q
wait_screen rec "REC-EXIT="
assert_match "$(screen rec)" "REC-EXIT=137" "record's exit code: 128 + 9"
assert_eq "$(q rec.db "SELECT pid, ended FROM process")" "$prog|" "the profile: no ending recorded (SIGKILL)"
assert_match "$("$MPQ" info rec.db)" "$prog live_steps: still running or killed \(no final snapshot\)" "... as info says"

# ---- live DB: the process killed while live watches
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=plain.db MP_INTERVAL=0.3 $P 100 300 >prog.out 2>prog.err &
prog=$!
for _ in $(seq 100); do [ -s plain.db ] && break; sleep 0.1; done
$TM new-session -d -s plain -x 120 -y 30 "cd $T && env -u COLUMNS -u LINES $MPQ live plain.db --interval 0.2; sleep 60"
wait_screen plain "live_steps \(pid $prog\)"
sleep 1
assert_eq "$(proc_line "$(screen plain)" | sed 's/) .* live/) N live/')" "  live_steps (pid $prog) N live" "live DB, running: no ending said"
assert_eq "$(once_line plain.db)" "  live_steps (pid $prog) N live" "... --once alike"
kill -KILL $prog
wait $prog; assert_eq "$?" 137 "the program killed by SIGKILL"
wait_screen plain "ended: killed"
assert_match "$(proc_line "$(screen plain)")" "^  live_steps \(pid $prog\) [0-9.]+ [KM]iB live, ended: killed \(gone, no final snapshot\)$" \
  "live DB: killed (gone, no final snapshot)"
kill -0 $prog 2>/dev/null && fail "pid $prog still runs"
assert_eq "$(once_line plain.db)" "  live_steps (pid $prog) N live, ended: killed (gone, no final snapshot)" "... --once alike"
$TM send-keys -t plain q

# ---- --once: what can and cannot be told
cp plain.db other_host.db && sqlite3 other_host.db "UPDATE process SET host = 'elsewhere.invalid'"
assert_eq "$(once_line other_host.db)" "  live_steps (pid $prog) N live" "another host's process: nothing said"
sleep 30 & later=$!
cp plain.db reused.db && sqlite3 reused.db "UPDATE process SET pid = $later"
assert_eq "$(once_line reused.db)" "  live_steps (pid $later) N live, ended: killed (gone, no final snapshot)" \
  "its pid now a process started later (sleep): gone"
kill $later; wait $later 2>/dev/null
cp plain.db before.db && sqlite3 before.db "UPDATE process SET pid = $$"
assert_eq "$(once_line before.db)" "  live_steps (pid $$) N live" "its pid a process started before the profile (this shell): nothing said"
# a zombie: killed, its parent (python) not waiting for it
$PY3 - "$LIB" "$P" <<'EOF' >zombie.pid &
import os, signal, subprocess, sys, time
env = dict(os.environ, LD_PRELOAD=sys.argv[1], MP_QUIET="1", MP_OUT="zombie.db", MP_INTERVAL="0.2")
p = subprocess.Popen([sys.argv[2], "100", "300"], env=env, stdout=subprocess.DEVNULL)
while not os.path.exists("zombie.db") or os.path.getsize("zombie.db") == 0: time.sleep(0.05)
time.sleep(0.5)
os.kill(p.pid, signal.SIGKILL)
print(p.pid, flush=True)
time.sleep(30)      # never waits: a zombie meanwhile
EOF
py=$!
for _ in $(seq 100); do [ -s zombie.pid ] && break; sleep 0.1; done
zpid=$(cat zombie.pid)
for _ in $(seq 50); do [ "$(awk '{print $3}' /proc/$zpid/stat 2>/dev/null)" = Z ] && break; sleep 0.1; done
assert_eq "$(awk '{print $3}' /proc/$zpid/stat)" Z "pid $zpid is a zombie (/proc)"
assert_eq "$(once_line zombie.db)" "  live_steps (pid $zpid) N live, ended: killed (gone, no final snapshot)" "a zombie: gone"
kill $py; wait $py 2>/dev/null

# format version 1 has no ending at all: nothing said; version 2 has one
# (the fixture's process, as info says it: no final snapshot), of a pid gone
source "$ROOT/tests/lib/fixtures.sh"
old_fixture 1 && old_fixture 2
true & wait $!; dead=$!
kill -0 $dead 2>/dev/null && fail "pid $dead runs"
for v in 1 2; do sqlite3 v$v.db "UPDATE process SET host = '$(hostname)', pid = $dead" || fail "cannot edit v$v.db"; done
NO_PROFILE_CHECK="$NO_PROFILE_CHECK v1.db v2.db"
assert_match "$("$MPQ" info v1.db)" "$dead app: not recorded \(a file of format version 1\)" "v1.db: no ending recorded (info)"
assert_eq "$(COLUMNS=100 "$MPQ" live v1.db --once | grep '(pid ')" "  app (pid $dead) 3.18 KiB live" "... live says none"
assert_match "$("$MPQ" info v2.db)" "$dead app: still running or killed \(no final snapshot\)" "v2.db: no final snapshot (info)"
assert_eq "$(COLUMNS=100 "$MPQ" live v2.db --once | grep '(pid ')" "  app (pid $dead) 3.18 KiB live, ended: killed (gone, no final snapshot)" \
  "... live: its pid gone, killed"

# ---- the profile's own value first
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=done.db $P 1 0 >/dev/null || fail "live_steps failed"
assert_eq "$(once_line done.db)" "  live_steps (pid $(q done.db 'SELECT pid FROM process')) N live, ended: return 0" \
  "a process that returned: its recorded ending"
NO_PROFILE_CHECK="$NO_PROFILE_CHECK other_host.db reused.db before.db"
echo PASS
