#!/bin/bash
# run: waits
# record --pid where the process cannot write its profile (issue 41, item
# 4): checked before attaching, as the process's user and through its root
# (its mount namespace's mounts); refused in one line with a non-zero
# exit, the process not attached (no library mapped, no recorder thread),
# nothing on its stderr, its output and exit status those of a run never
# attached to. As root, the process another user's:
# - -o in a directory that user cannot write: exit 2;
# - -o an existing file (empty) that user cannot write: exit 2;
# - a container whose /tmp is read-only in its mount namespace (the
#   library visible there, so that only the profile is in question): exit 1;
# - and after attaching, a process killed during the session, which wrote
#   nothing: said in one line, exit 1.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/container.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }
[ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null || { echo "# not root, or no unshare -m: not tested"; exit 0; }
other_user
SERVER=$B/tests/attach_server
chmod 711 "$T"
PROG=unwrit$$       # the program's name: others may run a "prog"
cp $SERVER $PROG && chmod 755 $PROG

seq 1 50 | $SERVER > plain.out
plain_rc=$?

# started: the newest process named $PROG (its pid)
started() {
    local pid
    for _ in $(seq 100); do pid=$(pgrep -n -x $PROG) && { echo "$pid"; return 0; }; sleep 0.05; done
    fail "the program did not start"
}
# refused CASE RC REGEX...: record --pid of the $PROG started (CASE.*: its
# output, stderr, status) with the rest of the arguments, and what must hold
refused() {
    local case=$1 want=$2 regex=$3 pid out rc; shift 3
    pid=$(started)
    out=$($MPQ record --pid $pid --duration 1 "$@" 2>&1); rc=$?
    assert_match "$rc $out" "^$want ${regex//PID/$pid}$" "$case: refused"
    [ "$(echo "$out" | wc -l)" = 1 ] || fail "$case: more than one line: $out"
    ! grep -q libmallocprof /proc/$pid/maps && ! grep -qx mallocprof /proc/$pid/task/*/comm ||
        fail "$case: process $pid was attached to"
    wait
    assert_eq "$(cat $case.rc)" "$plain_rc" "$case: the program's exit status"
    cmp -s $case.out plain.out || fail "$case: the program's output differs from a run never attached to"
    assert_eq "$(cat $case.err)" "" "$case: the program's stderr"
}
as_other() { setpriv --reuid $OTHER_UID --regid $OTHER_GID --clear-groups "$@"; }

echo "== -o in a directory the process's user cannot write"
mkdir out && chmod 755 out
(seq 1 50 | (sleep 2; cat) | as_other ./$PROG > dir.out 2> dir.err; echo $? > dir.rc) &
refused dir 2 "mpquery: record: process PID \($PROG\), uid $OTHER_UID, cannot write its profile $T/out/p\.db: $T/out: Permission denied \(give an -o it can write\); not attached" -o $T/out/p.db
[ ! -e out/p.db ] || fail "out/p.db was made"

echo "== -o a file the process's user cannot write"
mkdir shared && chmod 1777 shared
: > shared/p.db
chmod 644 shared/p.db
(seq 1 50 | (sleep 2; cat) | as_other ./$PROG > file.out 2> file.err; echo $? > file.rc) &
refused file 2 "mpquery: record: process PID \($PROG\), uid $OTHER_UID, cannot write its profile $T/shared/p\.db: $T/shared/p\.db: Permission denied \(give an -o it can write\); not attached" -o $T/shared/p.db
assert_eq "$(stat -c %s shared/p.db)" 0 "the file left as it was"

echo "== a container whose /tmp is read-only"
LIBDIR=$(dirname "$MPQ")
container_root root $SERVER $PROG
SETUP='mkdir -p "$R'"$LIBDIR"'" && mount --bind "'"$LIBDIR"'" "$R'"$LIBDIR"'" &&
       mount --bind "$R/tmp" "$R/tmp" && mount -o remount,ro,bind "$R/tmp"'
(seq 1 50 | (sleep 2; cat) | (in_container root "$SETUP" /$PROG) > ro.out 2> ro.err; echo $? > ro.rc) &
refused ro 1 "mpquery: record: process PID \($PROG\), uid $OTHER_UID, cannot write its profile in its /tmp \(its mount namespace's\): /tmp: Read-only file system; not attached" -o $T/ro.db
[ ! -e ro.db ] || fail "ro.db was made"

echo "== a process killed while recorded: nothing written, said"
mkfifo kin
on_exit "rm -f $T/kin"      # a fifo: the profile check at the end opens every file
(./$PROG < kin > /dev/null 2>&1) &
exec 8> kin
pid=$(started)
$MPQ record --pid $pid -o $T/killed.db 2> killed.err & rec=$!
for _ in $(seq 400); do grep -qx mallocprof /proc/$pid/task/*/comm 2>/dev/null && break; sleep 0.05; done
grep -qx mallocprof /proc/$pid/task/*/comm || fail "no session started in process $pid"
kill -KILL $pid
wait $rec; rc=$?
exec 8>&-
assert_eq "$rc $(cat killed.err)" "1 mpquery: record: process $pid ($PROG) ended while recorded and wrote no profile to $T/killed.db (killed, or its own stderr says why)" "a session that wrote nothing"
wait
exit 0
