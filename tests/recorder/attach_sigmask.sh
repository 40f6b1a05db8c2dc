#!/bin/bash
# An attach session leaves the target's signal mask as it was: a target
# that blocks SIGUSR1 and SIGRTMIN+3 is recorded three times; after each
# session its thread's SigBlk (/proc) is what it was before the first.
# (A later session's start released signals it had not held and unlocked
# locks it had not taken, fork.c's fork_new_session; record --pid puts
# the thread's mask back after its call, so the mask alone showed nothing:
# this guards what a user sees, the fix is in fork.c.)
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/attach.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }

start_target attach_sigmask
for _ in $(seq 200); do grep -q ready out.txt && break; sleep 0.05; done
assert_eq "$(cat out.txt)" ready "the target blocked its signals"
blk() { awk '$1 == "SigBlk:" { print $2 }' /proc/$tpid/task/$tpid/status; }
before=$(blk)
[ "$before" != 0000000000000000 ] || fail "the target's mask is empty: $before"
for i in 1 2 3; do
    rec -q --pid $tpid --duration 0.2 -o s$i.db
    assert_eq "$rrc $(cat rec.err)" "0 " "session $i: record's exit status and messages"
    assert_eq "$(blk)" "$before" "session $i: the thread's blocked signals after it"
done
alive "after the sessions"
end_target
assert_eq "$trc" 0 "the target's exit status"
assert_eq "$(cat out.txt | tr '\n' ' ')" "ready done " "the target's output"
exit 0
