#!/bin/bash
# run: waits
# mpquery record --pid and a process stopped (SIGSTOP) during its session
# (issue 41 item 9). Stopped until after the session's end: record waits
# 10 s for it, then sets the detach up to run when it continues and exits
# 1 in under 20 s, saying so (main's build: blocks 300 s); kill -CONT:
# the detach runs, the profile is written (ended by the detach) within
# 5 s. Stopped again and record interrupted (SIGINT) while it waits:
# it ends within 3 s, exit 1; kill -CONT: the profile written the same
# way. Stopped during the attach's dlopen (waiting 3 s for the loader's
# lock a second thread holds): record gives up after 10 s, exit 1, the
# call left to finish; kill -CONT: it does, the thread restores itself.
# A later record: exit 0 in under 10 s. After each: the process
# alive, traced by no one; at the end its output and exit status as
# never attached to ("done", 7).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/attach.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }

# session OUT: record into OUT in the background (r: its pid), the target
# stopped once its session started: the profiler's thread there and record
# no longer tracing it (the attach's call returned: mp_attach starts the
# thread before its end, and a stop between the two is the attach's case)
session() {
    $MPQ record -q --pid $tpid --duration 1 -o $1 7>&- 2> rec.err & r=$!
    started() {
        grep -qx mallocprof /proc/$tpid/task/*/comm 2>/dev/null &&
            [ "$(awk '$1 == "TracerPid:" { print $2 }' /proc/$tpid/status)" = 0 ]
    }
    for _ in $(seq 500); do started && break; sleep 0.01; done
    started || fail "the session did not start"
    kill -STOP $tpid
}
# ends_within S: record ended within S s (killed and failed if not); rrc its status
ends_within() {
    for _ in $(seq $(($1 * 10))); do kill -0 $r 2>/dev/null || break; sleep 0.1; done
    kill -0 $r 2>/dev/null && { kill -9 $r; kill -CONT $tpid; fail "record did not end within $1 s"; }
    wait $r
    rrc=$?
}
# written DB: the profile DB written by the detach within 5 s of the continue
written() {
    kill -CONT $tpid
    for _ in $(seq 50); do [ "$(q $1 "SELECT ended FROM process" 2>/dev/null)" = detach ] && break; sleep 0.1; done
    assert_eq "$(q $1 "SELECT ended FROM process")" detach "how $1's process ended, after the continue"
}

start_target attach_slow_call 3000
sleep 0.3
echo "== stopped during the attach's dlopen"
echo hold >&7
sleep 0.05
$MPQ record -q --pid $tpid --duration 0.3 -o d.db 7>&- 2> rec.err & r=$!
for _ in $(seq 500); do
    [ "$(awk '$1 == "TracerPid:" { print $2 }' /proc/$tpid/status)" = $r ] && break
    sleep 0.01
done
sleep 0.3
kill -STOP $tpid
ends_within 20
assert_eq "$rrc" 1 "record's exit status"
assert_match "$(cat rec.err)" "attach: the process stayed stopped \(SIGSTOP\): the call was left to finish" "what record said"
kill -CONT $tpid
sleep 3
alive "after the continue"
echo "== stopped through the session's end"
session a.db
ends_within 20
assert_eq "$rrc" 1 "record's exit status"
assert_match "$(cat rec.err)" "process $tpid \(attach_slow_cal\) stays stopped: its detach will be made when it continues" "what record said"
written a.db
alive "after the continue"
echo "== stopped, record interrupted while it waits"
session b.db
for _ in $(seq 100); do grep -q "waiting up to" rec.err && break; sleep 0.05; done
kill -INT $r
ends_within 3
assert_eq "$rrc" 1 "record's exit status after SIGINT"
written b.db
alive "after the continue"
echo "== a later record"
start=$(date +%s)
rec -q --pid $tpid --duration 0.3 -o c.db
assert_eq "$rrc" 0 "record's exit status ($(cat rec.err))"
[ $(( $(date +%s) - start )) -lt 10 ] || fail "the later record took over 10 s"
assert_eq "$(q c.db "SELECT ended FROM process")" detach "how c.db's process ended"
end_target
assert_eq "$trc" 7 "the target's exit status"
assert_eq "$(cat out.txt)" done "the target's output"
exit 0
