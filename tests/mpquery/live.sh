# mpquery live through a pseudo-terminal (tmux, at 80x24 and 200x50): a
# program that grows in known steps (tests/progs/live_steps.c: 100 blocks
# of 1000 bytes from grow_small, 10 of 10000 from grow_large a step) is
# watched while it runs, its steps driven by the test (LIVE_STEPS_GATE, a
# snapshot a step by MP_SIGNAL); two captures differ, their rows those of
# mpquery top --snapshot S on the snapshot the header shows; the keys
# change the counter, the filter and the snapshot; a resize redraws; q
# leaves no alternate screen. The recorder is never held up: a program
# asking for 19 snapshots one after another under live loses none and
# prints the same.
# record --live: the view until the program ends, its output in FILE.log.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/live_steps
sh "$ROOT/tests/lib/deps.sh" tmux >deps.log 2>&1 || fail "tmux: $(cat deps.log)"
TM="tmux -L mplive$$ -f /dev/null"
on_exit "$TM kill-server 2>/dev/null"
screen() { $TM capture-pane -p -t "$1"; }
# wait_screen PANE REGEX: until the pane shows REGEX (20 s at most)
wait_screen() {
    for _ in $(seq 200); do screen "$1" | grep -Eq -- "$2" && return 0; sleep 0.1; done
    screen "$1"
    fail "the screen never showed /$2/"
}
# row TEXT LEAF: the fields of the row whose where column starts with LEAF
row() { printf '%s\n' "$1" | grep -E "^ *[0-9].*  $2 < main" | sed "s/  $2 < main.*//"; }
seq_of() { printf '%s\n' "$1" | sed -n 's/.* snapshot \([0-9]*\) of .*/\1/p'; }
# same_as_top SCREEN COUNTER ARGS...: the rows of grow_small and grow_large
# on the screen (counters, %, stack; the change column aside) are top's
same_as_top() {
    local s=$1 by=$2 S leaf t l; shift 2
    S=$(seq_of "$s")
    t=$($MPQ top live.db --by $by --snapshot $S "$@")
    for leaf in grow_small grow_large; do
        l=$(row "$s" $leaf)
        printf '%s\n' "$t" | grep -q "  $leaf < main" || { [ -z "$l" ] && continue; }
        # live: ncalls BY % [change] stack; top: ncalls BY % stack
        assert_eq "$(echo $l | awk '{print $1, $2, $3, $4, $NF}')" \
            "$(row "$t" $leaf | awk '{print $1, $2, $3, $4, $NF}')" "snapshot $S, $leaf by $by: top's row"
    done
}

# ---- not a terminal; --once on a file not there yet
$MPQ live nothing.db </dev/null >out 2>err; rc=$?
assert_eq "$rc $(cat err)" "2 mpquery: live: stdout and stdin must be a terminal (--once prints one frame)" "no terminal"
$MPQ live nothing.db --once >out 2>err; rc=$?
assert_eq "$rc $(cat err)" "2 mpquery: nothing.db: No such file or directory (no snapshot written yet)" "--once, no file"
echo junk >junk.db
$MPQ live junk.db --once >out 2>err; rc=$?
assert_eq "$rc $(cat err)" "2 mpquery: junk.db: not a mallocprof profile (not an SQLite database)" "--once, not a profile"

# ---- --once: one frame, exact (the exit snapshot: 4 steps, all freed)
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=once.db $P 4 0 >/dev/null || fail "live_steps failed"
COLUMNS=80 LINES=14 $MPQ live once.db --once --by memtot >once.txt || fail "live --once failed"
assert_eq "$(sed -e 's/ at [0-9-]* [0-9:]*$/ at DATE/' -e 's/^memlive, peak .*/memlive, peak LINE/' \
                 -e 's/(pid [0-9]*)/(pid N)/' once.txt)" \
"mpquery live once.db  snapshot 2 of 2 (latest) at DATE
memlive 4.00 KiB  memtot 785 KiB  ncalls 441  by memtot
memlive, peak LINE

ncalls    memtot      %  change  stack  where
   441   785 KiB  100.0                 (total: 3 stacks in 3 rows)
   400   391 KiB   49.7          15     grow_small < main
    40   391 KiB   49.7          17     grow_large < main
     1  4.00 KiB    0.5          13     _IO_file_doallocate < … < main

processes: 1
  live_steps (pid N) 4.00 KiB live, ended: return 0

c counter  s/S snapshot  / filter  q quit" "--once at 80x14: the frame"

# a write killed midway (a hot journal beside the file): live reads the last
# commit from its copy (the copy's journal rolled back), the files untouched
hot_journal once.db hot.db
sum=$(md5sum hot.db hot.db-journal)
COLUMNS=80 LINES=14 $MPQ live hot.db --once --by memtot >hot.txt 2>hot.err || fail "live --once hot.db failed: $(cat hot.err)"
assert_eq "$(sed -n 5,9p hot.txt)" "$(sed -n 5,9p once.txt)" "a hot journal: the last committed rows"
assert_eq "$(md5sum hot.db hot.db-journal)" "$sum" "the file and its journal left as they were"

# ---- live at 80x24, started before the recorder wrote anything
$TM new-session -d -s live -x 80 -y 24 "cd $T && env -u COLUMNS -u LINES $MPQ live live.db; echo LIVE-EXIT=\$?; sleep 60"
wait_screen live "waiting for live.db: no snapshot written yet"
echo "  ok: waits for the file"
# the steps driven (LIVE_STEPS_GATE): a snapshot after each (MP_SIGNAL)
mkdir gate
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=live.db MP_SIGNAL=SIGUSR2 LIVE_STEPS_GATE=$T/gate $P 10 0 >prog.out 2>prog.err &
prog=$!
# step_snapshot K: after step K, one snapshot (the signal's), committed
step_snapshot() {
    for _ in $(seq 400); do [ -e gate/done.$1 ] && break; sleep 0.05; done
    [ -e gate/done.$1 ] || fail "live_steps never finished step $1"
    kill -USR2 $prog
    for _ in $(seq 400); do
        [ "$(q live.db "SELECT count(*) FROM snapshot WHERE reason = 'signal'" 2>/dev/null)" = $(($1 + 1)) ] && return
        sleep 0.05
    done
    fail "no snapshot for step $1"
}
step_snapshot 0
wait_screen live "grow_large < main"
one=$(screen live)
S1=$(seq_of "$one")
same_as_top "$one" memlive
assert_eq "$(printf '%s\n' "$one" | sed -n 24p)" "c counter  s/S snapshot  / filter  q quit" "80x24: the help line is line 24"
assert_match "$(printf '%s\n' "$one" | sed -n 1p)" "^mpquery live live.db  snapshot $S1 of $S1 \(latest\) at " "the header: the latest snapshot"
assert_match "$one" "live_steps \(pid $prog\) " "the process tree"
assert_eq "$(row "$one" grow_small | awk '{print $1}') $(row "$one" grow_large | awk '{print $1}')" "100 10" "step 1: grow_small's 100 calls, grow_large's 10"
touch gate/go.1
step_snapshot 1
wait_screen live "^ +200 .*  grow_small < main"
two=$(screen live)
same_as_top "$two" memlive
assert_match "$(row "$two" grow_small)" "^ +200 +195 KiB +[0-9.]+ +\+97\.7 KiB +[0-9]+ *$" "step 2: 200 calls, the change column +97.7 KiB"

# ---- keys: counter, filter, snapshot
$TM send-keys -t live c
wait_screen live "by maxlive"
assert_match "$(screen live | sed -n 5p)" "^ncalls +maxlive +% +change +stack +where" "c: the maxlive column"
$TM send-keys -t live / l a r g e Enter
wait_screen live "by maxlive  filter large"
s=$(screen live)
assert_eq "$(row "$s" grow_small)" "" "the filter: grow_small left out"
same_as_top "$s" maxlive --filter large
$TM send-keys -t live s
wait_screen live "snapshot [0-9]+ of [0-9]+ at"
s=$(screen live)
same_as_top "$s" maxlive --filter large
echo "  ok: s: an earlier snapshot, $(seq_of "$s"), top's rows"
$TM send-keys -t live S S S S S S S S S S S S S S S S S S S S
wait_screen live "\(latest\)"
echo "  ok: S past the last: the latest again"

for k in $(seq 2 9); do touch gate/go.$k; done
wait $prog; assert_eq "$?" 0 "the program's exit status under live"
assert_eq "$(cat prog.out) $(cat prog.err)" "pid $prog " "the program's output: its own line only"

# ---- resize, then q
$TM resize-window -t live -x 200 -y 50
for _ in $(seq 300); do [ "$(screen live | sed -n 50p)" = "c counter  s/S snapshot  / filter  q quit" ] && break; sleep 0.1; done
assert_eq "$(screen live | sed -n 50p)" "c counter  s/S snapshot  / filter  q quit" "resized to 200x50: redrawn, the help line on line 50"
$TM send-keys -t live q
wait_screen live "LIVE-EXIT=0"
assert_eq "$($TM display -p -t live '#{alternate_on} #{cursor_flag}')" "0 1" "q: the normal screen, the cursor shown"

# ---- a file that stops being a profile: the last frame stays, the problem said
cp once.db swap.db
$TM new-session -d -s term -x 80 -y 24 "cd $T && $MPQ live swap.db --by memtot; echo TERM-EXIT=\$?; sleep 60"
wait_screen term "live_steps \(pid"
echo junk >swap.db.new && mv swap.db.new swap.db
wait_screen term "q quit  \| swap.db: not a mallocprof profile \($"
assert_eq "$(screen term | sed -n 7p)" "   400   391 KiB   49.7          15     grow_small < main" "the last good frame stays"
NO_PROFILE_CHECK="$NO_PROFILE_CHECK swap.db"

# ---- SIGTERM: the terminal restored, exit 128 + 15
sh_pid=$($TM display -p -t term '#{pane_pid}')
kill -TERM $(pgrep -P $sh_pid) || fail "no live process under the pane's shell $sh_pid"
wait_screen term "TERM-EXIT=143"
assert_eq "$($TM display -p -t term '#{alternate_on} #{cursor_flag}')" "0 1" "SIGTERM: the normal screen, the cursor shown"

# ---- the writer is never held up: 19 snapshots, each asked for as soon as
# the one before is committed, under live --interval 0.1: none lost (the
# recorder says each one it loses); the wall times beside a run without
# live, for a person (a shared machine: no threshold)
ms() { date +%s%3N; }
# driven RUN DB: live_steps' 20 steps with a snapshot after each (the
# last one's at exit), into DB
driven() {
    local db=$2 g=$T/gate-$1 k n
    mkdir -p "$g"
    LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=$db MP_SIGNAL=SIGUSR2 LIVE_STEPS_GATE=$g $P 20 0 >$1.out 2>$1.err &
    prog=$!
    for k in $(seq 0 18); do
        for _ in $(seq 400); do [ -e $g/done.$k ] && break; sleep 0.02; done
        kill -USR2 $prog
        for _ in $(seq 400); do
            n=$(q $db "SELECT count(*) FROM snapshot WHERE reason = 'signal'" 2>/dev/null)
            [ "$n" = $((k + 1)) ] && break; sleep 0.02
        done
        [ "$n" = $((k + 1)) ] || fail "$1: no snapshot after step $k ($n)"
        touch $g/go.$((k + 1))
    done
    wait $prog; assert_eq "$?" 0 "$1: exit status"
}
t0=$(ms); driven base base.db; t_base=$(($(ms) - t0))
$TM new-session -d -s busy -x 200 -y 50 "cd $T && $MPQ live busy.db --interval 0.1; sleep 60"
t0=$(ms); driven busy busy.db; t_busy=$(($(ms) - t0))
echo "# 19 snapshots one after another: $t_busy ms under live --interval 0.1, $t_base ms without"
assert_eq "$(cat busy.err)" "" "no snapshot lost (the recorder says each one it loses)"
assert_eq "$(cat busy.out)" "pid $prog" "the program's output"
assert_eq "$(q busy.db "SELECT group_concat(reason || ' ' || n) FROM (SELECT reason, count(*) n FROM snapshot WHERE reason <> 'peak' GROUP BY 1 ORDER BY 1)")" \
    "exit 1,signal 19" "every snapshot asked for under live: 19 signal, 1 exit"
wait_screen busy "ended: return 0"
$TM send-keys -t busy q

# ---- record --live at 200x50: -o with a placeholder, the output in FILE.log
$TM new-session -d -s rec -x 200 -y 50 "cd $T && env -u COLUMNS -u LINES $MPQ record --live -o 'rl-%p.db' -- $P 3 400; echo REC-EXIT=\$?; sleep 60"
wait_screen rec "the program ended \(exit code 0\): q to quit"
s=$(screen rec)
pid=$(printf '%s\n' "$s" | sed -n 's/.*live_steps (pid \([0-9]*\)).*/\1/p')
assert_match "$(printf '%s\n' "$s" | sed -n 1p)" "^mpquery live rl-$pid.db  snapshot [0-9]+ of [0-9]+ \(latest\)" "record --live: the header names the file"
assert_match "$(printf '%s\n' "$s" | sed -n 50p)" "^c counter  s/S snapshot  / filter  q quit  \| the program ended" "200x50: the help line on line 50"
$TM send-keys -t rec q
wait_screen rec "REC-EXIT=0"
assert_match "$(screen rec)" "mpquery: the program's output is in rl-$pid.db.log" "record --live says where the output went"
assert_eq "$(cat rl-$pid.db.log)" "pid $pid" "the program's output in the log"
assert_match "$(screen rec)" "mpquery: wrote rl-$pid.db: 1 process \(1 image\)" "record's line names the file"

# ---- record --pid --live at 80x24: a running program (not preloaded) seen
# during the session; q ends the session (the detach writes it), the
# program goes on and ends as it would
if [ "$(uname -m)" = x86_64 ]; then
    # its steps driven: 20 after the session started, then it holds until
    # the session is over
    mkdir gate-att
    (LIVE_STEPS_GATE=$T/gate-att $P 40 0 > att.out; echo $? > att.rc) &
    for _ in $(seq 50); do pid=$(sed -n 's/^pid //p' att.out 2>/dev/null); [ -n "$pid" ] && break; sleep 0.1; done
    [ -n "$pid" ] || fail "live_steps did not start"
    $TM new-session -d -s att -x 80 -y 24 "cd $T && env -u COLUMNS -u LINES $MPQ record --pid $pid --live -o att.db; echo ATT-EXIT=\$?; sleep 60"
    wait_screen att "^mpquery live att.db  snapshot"
    (for k in $(seq 1 20); do touch gate-att/go.$k; sleep 0.2; done) &
    wait_screen att "grow_small < main"
    s1=$(screen att)
    assert_match "$(printf '%s\n' "$s1" | sed -n 1p)" "^mpquery live att.db  snapshot [0-9]+ of [0-9]+ \(latest\)" "record --pid --live: the header"
    for _ in $(seq 300); do
        s2=$(screen att); [ "$(seq_of "$s2")" -gt "$(seq_of "$s1")" ] && break; sleep 0.1
    done
    [ "$(seq_of "$s2")" -gt "$(seq_of "$s1")" ] || fail "record --pid --live: no newer snapshot in 30 s: [$s1] [$s2]"
    $TM send-keys -t att q
    wait_screen att "ATT-EXIT=0"
    for k in $(seq 21 39); do touch gate-att/go.$k; done
    assert_match "$(screen att)" "record --pid's messages are in att.db.log" "record --pid --live says where its messages went"
    assert_eq "$(q att.db "SELECT ended FROM process")" "detach" "q ended the session with a detach"
    n=$(q att.db "SELECT SUM(ncalls) FROM last_sample s JOIN stack_frames f ON f.stack = s.stack AND f.depth = 0
                  WHERE f.function = 'grow_small'")
    [ "${n:-0}" -ge 100 ] && [ $((n % 100)) -eq 0 ] || fail "record --pid --live: grow_small's calls $n (steps of 100)"
    wait
    assert_eq "$(cat att.rc)" 0 "the attached program's exit status"
    assert_eq "$(cat att.out)" "pid $pid" "the attached program's output"
    echo "  ok: record --pid --live"
fi
echo PASS
