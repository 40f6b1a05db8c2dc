# Children made without fork (tests/progs/raw_clone.c): the raw clone and
# clone3 system calls and libc's clone() without CLONE_VM make processes
# that no atfork handler sees; they were not recorded at all (issue 41
# item 16). prof/process/clone.c runs the fork handlers around them: each child is
# a process row of its own, the parent's child, with exactly its own
# allocations and how it ended; the program's output and status unchanged.
. "$(dirname "$0")/../lib/lib.sh"
plain_and_profiled a.db "$B/tests/raw_clone"
assert_eq "$(cat prof.out)" "$(cat plain.out)" "the same output"
assert_eq "$(cat plain.out)" "clone: status 0
clone3: status 0
libc clone: status 7" "each child's status"
parent=$(q a.db "SELECT pid FROM process WHERE ppid NOT IN (SELECT pid FROM process)")
assert_match "$parent" '^[0-9]+$' "one parent"
assert_eq "$(q a.db "SELECT count(*) FROM process WHERE ppid = $parent")" 3 "three children, the parent's"
# each child's exit totals, in the order they were made
assert_eq "$(q a.db "SELECT group_concat(x, ' / ') FROM (SELECT t.ncalls || ' ' || t.memtot || ' ' || p.ended AS x
    FROM totals t JOIN snapshot s ON s.id = t.snapshot JOIN process p ON p.id = s.process
    WHERE p.ppid = $parent AND s.reason = 'exit' AND t.thread = 0 ORDER BY p.start_time)")" \
    "5 5000 exit 0 / 5 10000 exit 0 / 5 15000 exit 7" "the children: 5 blocks of 1000, 2000, 3000 bytes; how they ended"
assert_eq "$(by_function a.db allocate | cut -d'|' -f1-3)" "allocate|15|30000" "allocate's stack: the 15 blocks"
