# MP_MAX_MEMORY caps the profiler's own memory: once reached, new stacks are
# counted without a stack (said once on stderr), totals stay exact, and the
# program runs on unchanged.
. "$(dirname "$0")/../lib/lib.sh"
MP_MAX_MEMORY=16M profile a.db $B/tests/many_paths 17 2>err; rc=$?
assert_eq "$rc" 0 "exit status"
assert_eq "$(grep -c 'warning: the profiler reached MP_MAX_MEMORY (16777216 bytes)' err)" 1 "said once"
assert_eq "$(q a.db 'SELECT ncalls, memtot, nfree, memlive FROM process_totals')" "131072|1048576|131072|0" "totals exact"
stacked=$(q a.db "SELECT sum(ncalls) FROM last_sample")
nostack=$(q a.db "SELECT ncalls_nostack FROM process_totals")
assert_eq "$((stacked + nostack))" 131072 "stacked + overflow = all"
# (the cap counts the profiler's heap too, SQLite's and libdw's blocks, in
# mappings of its own since prof/base/ownheap.c: 8,191 stacks fit in 16M)
[ "$nostack" -gt 0 ] && [ "$stacked" -gt 4000 ] || fail "expected both stacked ($stacked) and overflow ($nostack)"
mem=$(q a.db "SELECT profiler_memory FROM snapshot")
echo "# profiler memory at the cap: $mem bytes for $stacked stacks"
MP_MAX_MEMORY=4G profile b.db $B/tests/many_paths 17 2>/dev/null
assert_eq "$(q b.db "SELECT count(*), sum(ncalls) FROM last_sample")" "131072|131072" "without the cap: every path its stack"
