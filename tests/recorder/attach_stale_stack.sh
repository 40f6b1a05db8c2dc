#!/bin/bash
# mpquery record --pid judges a thread by its live frames, not by stale
# words: the target's one thread waits in read() with a 64 KiB buffer on
# its stack holding return addresses into malloc from earlier calls
# (tests/progs/attach_stale_stack.c). Its frames unwound by CFI are main
# and its callee: a safe point. (A scan of every stack word took the stale
# addresses for live calls: "no thread of the process came to a safe
# point in 5 s", exit 1.) The target reads on and ends as it would.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/attach.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }

start_target attach_stale_stack
for _ in $(seq 200); do grep -q ready out.txt && break; sleep 0.05; done
assert_eq "$(cat out.txt)" ready "the target's stack made"
rec -q --pid $tpid --duration 0.3 -o s.db
assert_eq "$rrc $(cat rec.err)" "0 " "record's exit status and messages"
alive "after the session"
echo x >&7
for _ in $(seq 100); do grep -q got out.txt && break; sleep 0.05; done
end_target
assert_eq "$trc" 0 "the target's exit status"
assert_eq "$(cat out.txt | tr '\n' ' ')" "ready got done " "the target's output"
assert_eq "$(q s.db "SELECT ended FROM process")" detach "how the profile's process ended"
exit 0
