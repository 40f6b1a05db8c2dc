#!/bin/bash
# mpquery record --pid into a thread with little stack left (issue 41
# item 5): the calls run on a stack mapped for them, nothing of the
# thread's stack written. A worker thread with a 64 KiB stack waiting in
# read with under 7 KiB left (the main thread in pthread_join, never a
# safe point): attached, recorded, the worker alive (main's build: the
# worker dies with SIGSEGV). A main thread waiting in a SIGUSR1 handler
# on an 8 KiB alternate stack between two 8 KiB canaries of its malloc'd
# block: attached, no canary byte changed (main's build: 5,897 changed,
# exit 1). Both: exit status and output as without the attach, the
# profile's process ended by the detach, no anonymous code mapped after.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/attach.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }

# anonymous executable mappings: the calls' area has one (its code page) while it is mapped
anon_code() { awk '$2 ~ /x/ && $6 == ""' /proc/$1/maps; }

for mode in thread altstack; do
    echo "== $mode"
    start_target attach_small_stack $mode
    # waiting: the worker in read, or the main thread in read inside its handler
    for _ in $(seq 200); do
        [ "$(cut -d' ' -f1 /proc/$tpid/task/*/syscall 2>/dev/null | grep -cx 0)" -ge 1 ] && break
        sleep 0.05
    done
    rec -q --pid $tpid --duration 0.5 -o $mode.db
    assert_eq "$rrc" 0 "record's exit status ($(cat rec.err))"
    alive "after the session"
    assert_eq "$(anon_code $tpid)" "" "anonymous code mapped after the session"
    end_target
    assert_eq "$trc" 0 "the target's exit status"
    [ $mode = thread ] && assert_eq "$(cat out.txt)" "worker: under 7 KiB of stack left while waiting" "the worker's line"
    [ $mode = altstack ] && assert_eq "$(cat out.txt)" "altstack: 0 canary bytes changed" "the canaries"
    assert_eq "$(q $mode.db "SELECT ended FROM process")" detach "how the profile's process ended"
done
exit 0
