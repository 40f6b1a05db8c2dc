#!/bin/bash
# mpquery record --pid refuses a process under seccomp (issue 41 item
# 8), in one line naming Seccomp in /proc/PID/status, exit 1, the process
# untouched: a filter that kills on openat (main's build: the dlopen's
# openat kills it with SIGSYS). Its output and exit status as never
# attached to ("2 lines", 3); no profile written.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/attach.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }

start_target attach_seccomp
echo one >&7
sleep 0.3
assert_eq "$(awk '$1 == "Seccomp:" { print $2 }' /proc/$tpid/status)" 2 "the target's seccomp mode"
rec -q --pid $tpid --duration 0.3 -o s.db
assert_eq "$rrc" 1 "record's exit status"
assert_eq "$(wc -l < rec.err)" 1 "lines record said"
assert_match "$(cat rec.err)" "process $tpid \(attach_seccomp\) runs under seccomp \(Seccomp: 2 in /proc/$tpid/status\).*not attached" "what record said"
alive "after the refusal"
[ ! -e s.db ] || fail "a profile was written"
echo two >&7
end_target
assert_eq "$trc" 3 "the target's exit status"
assert_eq "$(cat out.txt)" "2 lines" "the target's output"
exit 0
