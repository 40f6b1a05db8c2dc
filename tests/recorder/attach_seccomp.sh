#!/bin/bash
# run: waits
# mpquery record --pid and a process under seccomp (issue 41 item 8): its
# filters read (as root) and run over every system call an attach and a
# session make; attached only when all pass, else refused in one line
# naming the first call stopped and what the filter would do, exit 1, the
# process untouched (output and exit status as never attached to: "N
# lines", 3; no profile written). Main's build refused every process
# under seccomp, naming "Seccomp: 2".
#  - a filter that kills on openat: refused naming openat and the kill
#    (attached, the dlopen's openat would kill it with SIGSYS);
#  - a filter like Docker's default (tests/progs/attach_seccomp.c: an
#    allowlist, clone3 failing with ENOSYS, everything else killing; a
#    second thread under it too): attached and recorded, the 1000 blocks of 48 bytes it makes and frees
#    during the session counted exactly (last_sample and top --functions);
#  - mpquery itself under a seccomp filter (tests/progs/seccomp_exec.c):
#    the filters cannot be read (EACCES), refused saying so;
#  - a filter that fails mmap of executable memory with EPERM (the
#    dlopen's code mapping; the process's own mmaps pass): refused naming
#    mmap and EPERM.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/attach.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }

# refused MODE PATTERN [WRAPPER]: the target under filter MODE refused, saying it
# "runs under PATTERN; not attached" (PID in PATTERN: the target's pid)
refused() {
    echo "== $1${3:+, mpquery run by $(basename "$3")}"
    start_target attach_seccomp $1
    echo one >&7
    sleep 0.3
    assert_eq "$(awk '$1 == "Seccomp:" { print $2 }' /proc/$tpid/status)" 2 "$1: the target's seccomp mode"
    local pattern=${2//PID/$tpid}
    rm -f s.db
    MPQ="${3:-} $MPQ" rec -q --pid $tpid --duration 0.3 -o s.db
    assert_eq "$rrc" 1 "$1: record's exit status"
    assert_eq "$(wc -l < rec.err)" 1 "$1: lines record said"
    assert_match "$(cat rec.err)" "^mpquery: record: process $tpid \(attach_seccomp\) runs under $pattern; not attached\$" "$1: what record said"
    alive "$1: after the refusal"
    [ ! -e s.db ] || fail "$1: a profile was written"
    echo two >&7
    end_target
    assert_eq "$trc" 3 "$1: the target's exit status"
    assert_eq "$(cat out.txt)" "2 lines" "$1: the target's output"
}

if [ "$(id -u)" != 0 ]; then
    # not root: the filters cannot be read; refused, saying so
    refused openat "seccomp \(Seccomp: 2 in /proc/$tpid/status\): only root \(CAP_SYS_ADMIN\) can read its filters to know whether the system calls an attach makes pass"
    exit 0
fi
refused openat "a seccomp filter that would kill it \(SECCOMP_RET_KILL_PROCESS\) at openat"
# mpquery under a filter of its own: the kernel shows no filter to it
refused openat "seccomp \(Seccomp: 2 in /proc/PID/status\) and its filters cannot be read: reading them needs CAP_SYS_ADMIN, and mpquery under no seccomp filter of its own" $B/tests/seccomp_exec
refused errno "a seccomp filter that would fail the call \(SECCOMP_RET_ERRNO\) with EPERM at mmap"

echo "== docker"
start_target attach_seccomp docker
sleep 0.3
assert_eq "$(cat /proc/$tpid/task/*/status | awk '$1 == "Seccomp:" { print $2 }' | tr '\n' ' ')" "2 2 " \
    "docker: its two threads' seccomp mode"
( sleep 1; echo alloc >&7; sleep 0.3; echo free >&7 ) &
feeder=$!
rec -q --pid $tpid --duration 2.5 -o d.db
wait $feeder
assert_eq "$rrc" 0 "docker: record's exit status ($(cat rec.err))"
assert_eq "$(cat rec.err)" "" "docker: what record said"
alive "docker: after the session"
assert_eq "$(q d.db "SELECT ended FROM process")" detach "docker: how the profile's process ended"
assert_eq "$(by_function d.db keep_blocks)" "keep_blocks|1000|48000|1000|0" "docker: the blocks made and freed during the session"
assert_eq "$($MPQ top --functions --inclusive --format csv d.db | awk -F, '$NF == "keep_blocks" { print $8, $9, $10 }')" \
    "1000 48000 1000" "docker: keep_blocks in top --functions (ncalls, memtot, nfree)"
end_target
assert_eq "$trc" 3 "docker: the target's exit status"
assert_eq "$(cat out.txt)" "2 lines" "docker: the target's output"
exit 0
