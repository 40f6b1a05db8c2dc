#!/bin/bash
# mpquery record --pid never calls into a thread with the allocator on
# its stack (issue 41 item 6): the main thread sleeps 5 s in a SIGUSR1
# handler that interrupted malloc or free (its innermost frame a waiting
# nanosleep, as safe as any), a second thread waits in read. The attach
# goes into the second thread: the record ends with 0 in under 30 s (the
# detach waits for the handler: malloc_trim takes the arena's lock), the
# target ends its loop and exits 0 with its lines; the profile's process
# ended by the detach. Main's build calls into the main thread: its
# dlopen waits for the lock the thread holds itself, 60 s, and the record
# fails.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/attach.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }

start_target attach_in_malloc 5
for _ in $(seq 200); do grep -q caught out.txt && break; sleep 0.05; done
assert_eq "$(cat out.txt)" caught "the handler interrupted the allocator"
start=$(date +%s)
rec -q --pid $tpid --duration 0.3 -o m.db
took=$(( $(date +%s) - start ))
assert_eq "$rrc" 0 "record's exit status ($(cat rec.err))"
[ $took -lt 30 ] || fail "the record took $took s"
alive "after the session"
end_target
assert_eq "$trc" 0 "the target's exit status"
assert_eq "$(cat out.txt | tr '\n' ' ')" "caught done " "the target's output"
assert_eq "$(q m.db "SELECT ended FROM process")" detach "how the profile's process ended"
exit 0
