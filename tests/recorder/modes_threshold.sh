# MP_THRESHOLD=N records stacks for blocks >= N bytes, -N for blocks < N;
# totals stay exact either way.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/alloc_functions
MP_THRESHOLD=500 profile a.db $P >/dev/null 2>&1
assert_eq "$(by_function a.db 'do_*')" "do_leak|7|7000|0|7000
do_memalign|10|5120|10|0
do_realloc|16|20000|16|0" "only blocks >= 500 bytes have stacks"
assert_eq "$(q a.db 'SELECT ncalls, memtot, nfree, memlive FROM process_totals')" "1162|156420|1155|7000" "totals exact (threshold)"
assert_eq "$(q a.db 'SELECT ncalls_nostack, memtot_nostack FROM process_totals')" "1129|124300" "the rest counted without stack"
MP_THRESHOLD=-200 profile b.db $P >/dev/null 2>&1
assert_eq "$(by_function b.db 'do_*')" "do_aligned_alloc|40|5120|40|0
do_malloc|1000|100000|1000|0
do_realloc|1|100|1|0
do_valloc|5|500|5|0" "only blocks < 200 bytes have stacks"
assert_eq "$(q b.db 'SELECT ncalls, memtot, nfree, memlive FROM process_totals')" "1162|156420|1155|7000" "totals exact (inverse threshold)"
