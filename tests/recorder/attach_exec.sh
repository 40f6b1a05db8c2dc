#!/bin/bash
# mpquery record --pid of a process that runs another program during the
# session (issue 41 item 10): every exec variant (execl, execlp, execle,
# execv, execvp, execve, execvpe) writes the session's profile before the
# exec, as under LD_PRELOAD: the process ended "exec", the 10 blocks of
# 1000 bytes allocated just before it in exec_marker, and record exits 0.
# The execl family used to reach libc's execv through the library's own
# PLT once dlopen'd, skipping the snapshot: "nothing was written".
source "$(dirname "$0")/../lib/lib.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }
PROG=$B/tests/attach_exec
on_exit "rm -f $T/in"

wait_attached() {
    for _ in $(seq 400); do grep -qx mallocprof /proc/$1/task/*/comm 2>/dev/null && return 0; sleep 0.05; done
    fail "no session started in process $1"
}

for v in execl execlp execle execv execvp execve execvpe; do
    rm -f in; mkfifo in
    ($PROG < in > $v.out 2>&1; echo $? > $v.rc) &
    sub=$!
    exec 7> in
    pid=
    for _ in $(seq 100); do pid=$(pgrep -P $sub -f "^$PROG\$") && break; sleep 0.05; done
    [ -n "$pid" ] || fail "$v: the program did not start"
    $MPQ record -q --pid $pid -o $v.db 2> $v.err 7>&- & rec=$!
    wait_attached $pid
    echo $v >&7
    exec 7>&-
    wait $rec || fail "$v: record --pid failed: $(cat $v.err)"
    wait
    assert_eq "$(cat $v.rc) $(cat $v.out)" "0 " "$v: the program's exit status and output (sleep's)"
    [ -f $v.db ] || fail "$v: no profile ($(cat $v.err))"
    assert_eq "$(q $v.db "SELECT ended FROM process")" exec "$v: how the process ended"
    assert_eq "$(by_function $v.db exec_marker)" "exec_marker|10|10000|0|10000" "$v: the blocks allocated before the exec"
    echo "  ok: $v"
done
exit 0
