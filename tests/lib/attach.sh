# Shared by the attach tests of issue 41 (tests/recorder/attach_*.sh):
# a target program started on a fifo, recorded with a bound, ended.
# Sourced after lib.sh.

# start_target PROG ARGS...: $B/tests/PROG started, its stdin the fifo
# held open on fd 7, stdout in out.txt, stderr in err.txt; tpid its pid.
# Killed at the test's exit if still there.
start_target() {
    rm -f in && mkfifo in || fail "mkfifo failed"
    "$B/tests/$1" "${@:2}" < in > out.txt 2> err.txt &
    tpid=$!
    exec 7> in
    on_exit "kill -9 $tpid 2>/dev/null; rm -f $T/in"
}

# end_target: stdin closed, its end waited for (10 s at most); trc its
# exit status
end_target() {
    exec 7>&-
    for _ in $(seq 100); do kill -0 $tpid 2>/dev/null || break; sleep 0.1; done
    kill -0 $tpid 2>/dev/null && fail "the target did not end at the end of its stdin: $(cat /proc/$tpid/status | grep State)"
    wait $tpid
    trc=$?
}

# rec ARGS...: mpquery record, killed after 40 s (never hangs the suite);
# rrc its exit status, its stderr in rec.err
rec() {
    timeout -s KILL 40 $MPQ record "$@" 7>&- 2> rec.err
    rrc=$?
}

# alive: the target runs on, traced by no one
alive() {
    kill -0 $tpid 2>/dev/null || fail "the target died: $(cat out.txt err.txt)"
    assert_eq "$(awk '$1 == "TracerPid:" { print $2 }' /proc/$tpid/status)" 0 "$1: the target's tracer"
}
