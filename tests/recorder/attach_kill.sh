#!/bin/bash
# run: waits
# mpquery record --pid ended by a signal during a call into the process
# (issue 41 item 7). The target's main thread is called into while a
# second thread holds the dynamic loader's lock for 2.5 s (a line "hold"),
# so that the call waits there; the signal comes 0.5 s into that wait.
# kill -9 during the first dlopen: the call finishes by itself and the
# thread restores itself (main's build: the int3 it returns to kills the
# process with SIGTRAP); a record after it works (exit 0, a profile ended
# by the detach). SIGHUP, SIGINT, SIGTERM, SIGQUIT during mp_attach (its
# rebinding waits for the lock): the call ends, the session is detached
# at once, exit 0, a profile ended by the detach. kill -9 during
# mp_attach: the session goes on without mpquery, the process's exit
# writes it (ended "exit"). After each: the process alive, traced by no
# one, reading its stdin; at the end its output and exit status as never
# attached to ("done", 7).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/attach.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }

# during SIG OUT: mpquery record into OUT, SIG sent 0.5 s after it traces
# the target, in the 2.5 s the loader's lock is held; rrc its exit status
during() {
    echo hold >&7
    sleep 0.05
    $MPQ record -q --pid $tpid --duration 0.3 -o $2 7>&- 2> rec.err & local r=$!
    for _ in $(seq 500); do
        [ "$(awk '$1 == "TracerPid:" { print $2 }' /proc/$tpid/status)" = $r ] && break
        sleep 0.01
    done
    sleep 0.5
    kill -$1 $r
    for _ in $(seq 200); do kill -0 $r 2>/dev/null || break; sleep 0.1; done
    kill -0 $r 2>/dev/null && { kill -9 $r; fail "record did not end within 20 s of SIG$1"; }
    wait $r
    rrc=$?
    sleep 2.5       # the hold over: the call returned, the thread restored
}

start_target attach_slow_call 2500
sleep 0.3
echo "== kill -9 during the first dlopen"
during KILL k0.db
assert_eq "$rrc" 137 "record's exit status"
alive "after kill -9"
echo line >&7
rec -q --pid $tpid --duration 0.3 -o after.db
assert_eq "$rrc" 0 "a record after the kill ($(cat rec.err))"
assert_eq "$(q after.db "SELECT ended FROM process")" detach "how that profile's process ended"
for sig in HUP INT TERM QUIT; do
    echo "== SIG$sig during mp_attach"
    during $sig s$sig.db
    assert_eq "$rrc" 0 "record's exit status after SIG$sig ($(cat rec.err))"
    alive "after SIG$sig"
    assert_eq "$(q s$sig.db "SELECT ended FROM process")" detach "how the profile's process ended"
done
echo "== kill -9 during mp_attach"
during KILL k1.db
assert_eq "$rrc" 137 "record's exit status"
alive "after kill -9"
echo line >&7
end_target
assert_eq "$trc" 7 "the target's exit status"
assert_eq "$(cat out.txt)" done "the target's output"
assert_eq "$(q k1.db "SELECT ended FROM process")" exit "how the session left running ended"
exit 0
