#!/bin/bash
# run: waits
# record --pid into a container (issue 41, item 1): mpquery, as root, never
# follows a link the container's user planted in its /tmp and never
# resolves a name there outside the container's root. The container: a
# root of its own entered by pivot_root in a private mount namespace
# (tests/lib/container.sh), its program run as another user.
# - a link at the library copy's name to a host file: the host file is
#   unchanged, the link replaced by the copy (a root-owned regular file,
#   the library's bytes), and the session records all 200 requests;
# - the container's /tmp a link to a host directory: nothing lands there,
#   refused in one line, the process not attached;
# - the profile in its /tmp replaced by a link to a 0600 host file while
#   recorded: not copied, said in one line with exit status 1, the host
#   file's bytes in no file mpquery wrote;
# - a chroot in a mount namespace of its own (its maps name files by paths
#   that lead nowhere from either root): attached, all 200 requests.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/container.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }
[ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null || { echo "# not root, or no unshare -m: not tested"; exit 0; }
other_user
SERVER=$B/tests/attach_server
MPQLIB=$(dirname "$MPQ")/libmallocprof.so
COPY=libmallocprof-$(printf %x "$(stat -L -c %d "$MPQLIB")")-$(printf %x "$(stat -L -c %i "$MPQLIB")").so
chmod 711 "$T"      # the container's roots are under it
PROG=ctlinks$$      # the program's name: others may run a "prog"

# started: the pid of the newest $PROG once its root is not ours
started() {
    local pid
    for _ in $(seq 100); do
        pid=$(pgrep -n -x $PROG) && [ "$(stat -L -c %d:%i /proc/$pid/root 2>/dev/null)" != "$(stat -c %d:%i /)" ] &&
            { echo "$pid"; return 0; }
        sleep 0.05
    done
    fail "the program in the container did not start"
}
# unattached PID: no library of ours mapped, no recorder thread
unattached() {
    ! grep -q libmallocprof /proc/$1/maps && ! grep -qx mallocprof /proc/$1/task/*/comm ||
        fail "process $1 was attached to"
}

seq 1 200 | $SERVER > plain.out
plain_rc=$?

echo "== a link at the library copy's name, to a host file"
printf 'a host file\n' > victim
chmod 644 victim
cp victim victim.orig
container_root root1 $SERVER $PROG
ln -s "$T/victim" root1/tmp/$COPY && chown -h $OTHER_UID:$OTHER_GID root1/tmp/$COPY
(seq 1 200 | (sleep 3; cat) | (in_container root1 true /$PROG) > a.out 2> a.err; echo $? > a.rc) &
pid=$(started)
container_ready $pid
$MPQ record -q --pid $pid -o a.db 2> a.mpq; rc=$?
wait
cmp -s victim victim.orig || fail "the host file the link named was overwritten: $(stat -c %s victim) bytes"
echo "  ok: the host file the link named, unchanged"
assert_eq "$rc $(cat a.mpq)" "0 " "the attach, through a fresh copy"
assert_eq "$(stat -c '%F %U %a' root1/tmp/$COPY)" "regular file root 644" "the link replaced by a copy"
cmp -s root1/tmp/$COPY "$MPQLIB" || fail "the copy is not the library"
assert_eq "$(by_function a.db request | cut -d'|' -f1,2)" "request|200" "the session's requests"
assert_eq "$(cat a.rc)" "$plain_rc" "the program's exit status"
cmp -s a.out plain.out || fail "the program's output differs from a run never attached to"
assert_eq "$(cat a.err)" "" "the program's stderr"

echo "== the container's /tmp a link to a host directory"
mkdir hostdir && chmod 1777 hostdir
container_root root2 $SERVER $PROG
rmdir root2/tmp && ln -s "$T/hostdir" root2/tmp
mkfifo go2
on_exit "rm -f $T/go2"      # a fifo: the profile check at the end opens every file
(in_container root2 true /$PROG < go2 > b.out 2> b.err; echo $? > b.rc) &
exec 7> go2
pid=$(started)
out=$($MPQ record --pid $pid --duration 1 -o b.db 2>&1); rc=$?
assert_match "$rc $out" "^1 mpquery: record: process $pid \($PROG\) runs in another mount namespace where [^ ]+ is not the same file, and its /tmp cannot be reached \([^)]+\)" "refused"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "more than one line: $out"
assert_eq "$(ls -A hostdir)" "" "nothing written in the host directory"
unattached $pid
exec 7>&-
wait
[ ! -e b.db ] || fail "a refused attach wrote b.db"

echo "== the profile in its /tmp replaced by a link to a 0600 host file"
printf 'a host secret\n' > secret
chmod 600 secret
container_root root3 $SERVER $PROG
# as the container's user, in the container: every profile in /tmp becomes
# a link to the secret as soon as it is made, while the program runs
PLANT='( while kill -0 $$ 2>/dev/null; do for f in /tmp/mallocprof-*.db; do
    [ -f "$f" ] && [ ! -L "$f" ] && rm -f "$f" && ln -s '"$T/secret"' "$f"; done; sleep 0.01; done ) & exec /'$PROG
(seq 1 200 | (sleep 3; cat) | (in_container root3 true sh -c "$PLANT") > c.out 2> /dev/null; echo $? > c.rc) &
pid=$(started)
# snapshots every 100 ms: the file is there to be replaced during the session
out=$($MPQ record --pid $pid --interval 100ms --duration 1.5 -o c.db 2>&1); rc=$?
assert_match "$rc $out" "^1 mpquery: record: process $pid \($PROG\): the profile it was to write, /tmp/mallocprof-$pid-[0-9]+\.db in its /tmp, is a symbolic link.*not followed; not copied to $T/c\.db$" "the linked profile refused"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "more than one line: $out"
[ ! -e c.db ] || ! grep -q "a host secret" c.db || fail "the secret was copied into c.db"
wait
assert_eq "$(cat c.rc)" "$plain_rc" "the program's exit status"
cmp -s c.out plain.out || fail "the program's output differs from a run never attached to"
assert_eq "$(cat secret)" "a host secret" "the secret unchanged"
rm -f root3/tmp/mallocprof-*.db

echo "== a chroot"
container_root root4 $SERVER $PROG
(seq 1 200 | (sleep 3; cat) | (in_chroot root4 /$PROG) > d.out 2> d.err; echo $? > d.rc) &
pid=$(started)
$MPQ record -q --pid $pid -o d.db 2> d.mpq; rc=$?
wait
assert_eq "$rc $(cat d.mpq)" "0 " "the attach"
assert_eq "$(by_function d.db request | cut -d'|' -f1,2)" "request|200" "the session's requests"
assert_eq "$(cat d.rc)" "$plain_rc" "the program's exit status"
cmp -s d.out plain.out || fail "the program's output differs from a run never attached to"
exit 0
