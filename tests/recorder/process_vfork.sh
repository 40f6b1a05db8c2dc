# A vfork child runs in its parent's memory until it execs or leaves with
# _exit (issue 25, item 2): its _exit wrapper wrote "ended" into the
# parent's state and closed its flushes (the parent's whole profile lost:
# only /bin/true's row was left), and its exec wrote an exec snapshot of
# the parent's counters. tests/progs/vfork_child.c: a vfork + failed exec
# + _exit(127), then a vfork + exec of /bin/true; the parent exits 3.
. "$(dirname "$0")/../lib/lib.sh"
LD_PRELOAD=$LIB MP_OUT=v.db MP_QUIET=1 MP_INTERVAL=0.01 "$B/tests/vfork_child" >out 2>err; rc=$?
assert_eq "$rc" 3 "the program's exit status"
assert_eq "$(cat out err)" "" "nothing printed"
parent=$(q v.db "SELECT pid FROM process WHERE exe LIKE '%/vfork_child'")
assert_match "$parent" '^[0-9]+$' "the parent has its process row"
assert_eq "$(q v.db "SELECT count(*) FROM process WHERE pid = $parent")" 1 "once"
assert_eq "$(q v.db "SELECT ended FROM process WHERE pid = $parent")" "return 3" "ended by returning 3 from main, not 'exec'"
assert_eq "$(q v.db "SELECT group_concat(reason) FROM (SELECT s.reason FROM snapshot s JOIN process p ON p.id = s.process
                     WHERE p.pid = $parent AND s.reason NOT IN ('interval', 'peak') ORDER BY s.seq)")" "exit" \
    "its snapshots: no exec snapshot from a child, the exit one last"
assert_eq "$(q v.db "SELECT t.ncalls || ' ' || t.memtot || ' ' || t.memlive FROM totals t JOIN snapshot s ON s.id = t.snapshot
                     JOIN process p ON p.id = s.process WHERE p.pid = $parent AND s.reason = 'exit' AND t.thread = 0")" \
    "3000 300000 300000" "its exit totals: 3 x 1000 blocks of 100 bytes, before, between and after the children"
for f in before_vfork between after_vfork; do
    assert_eq "$(by_function v.db "$f" | grep "^$f|")" "$f|1000|100000|0|100000" "$f: its 1000 blocks"
done
assert_eq "$(q v.db "SELECT exe || ' ' || (ppid = $parent) FROM process WHERE pid != $parent")" "/usr/bin/true 1" \
    "the exec'd child: a process of its own, the parent's child"
"$MPQ" info v.db >info.txt 2>&1 || fail "mpquery info failed"
assert_match "$(grep -c 'replaced itself' info.txt)" '^0$' "info: nobody replaced itself by exec"
echo ok
