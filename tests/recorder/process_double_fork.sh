# A daemon's double fork (issue 25, item 13): the daemon's parent had left
# by its first snapshot, so its process row said ppid 1 (or a subreaper's
# pid) and `mpquery info` showed it as a root of its own. The parent is
# now the one that forked the process (getppid() at the fork).
# tests/progs/double_fork.c: main → child (leaves at once) → daemon.
. "$(dirname "$0")/../lib/lib.sh"
LD_PRELOAD=$LIB MP_OUT=d.db MP_QUIET=1 "$B/tests/double_fork" >out 2>err; rc=$?
assert_eq "$rc" 0 "the exit status"
daemon=$(cat out)
assert_match "$daemon" '^[0-9]+$' "the daemon's pid"
for i in $(seq 1 100); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.1; done
kill -0 "$daemon" 2>/dev/null && fail "the daemon did not end"
assert_eq "$(q d.db "SELECT count(*) FROM process")" 3 "three processes"
main=$(q d.db "SELECT pid FROM process ORDER BY start_time LIMIT 1")
child=$(q d.db "SELECT pid FROM process WHERE ppid = $main")
assert_match "$child" '^[0-9]+$' "the child's parent is main"
assert_eq "$(q d.db "SELECT ppid FROM process WHERE pid = $daemon")" "$child" "the daemon's parent is the child, gone before it"
assert_eq "$(by_function d.db daemon_work | grep '^daemon_work|')" "daemon_work|100|5000|0|5000" "the daemon's blocks"
"$MPQ" info d.db >info.txt 2>&1 || fail "mpquery info failed"
assert_eq "$(sed -n '/^process tree/,/^$/p' info.txt | grep -c '^  [0-9]')" 1 "mpquery info: one root"
assert_eq "$(sed -n '/^process tree/,/^$/p' info.txt | grep -c "^      $daemon ")" 1 "mpquery info: the daemon under the child: $(sed -n '/^process tree/,/^$/p' info.txt | tr '\n' '|')"
echo ok
