# Allocations made by a signal handler that interrupted malloc or free are
# counted exactly (without a stack: [no stack] in the totals): with
# thousands of SIGALRMs during a malloc/free loop, the totals are the
# loop's, plus two blocks per signal (one freed in the handler, one by main
# at the end), plus stdout's buffer; no free of an unknown block.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/signal_alloc
LD_PRELOAD=$LIB MP_OUT=a.db $P >out 2>err; rc=$?
assert_eq "$rc" 0 "exit status"
n=$(cat out)
[ "$n" -gt 100 ] || fail "only $n signals"
echo "  ok: $n signals"
assert_eq "$(q a.db "SELECT ncalls, nfree, nfree_unknown, memlive FROM totals t JOIN snapshot s ON s.id = t.snapshot WHERE t.thread = 0 AND s.reason = 'exit'")" \
    "$((1500000 + 2 * n + 1))|$((1500000 + 2 * n))|0|4096" "totals: the loop, 2 blocks per signal, stdout's buffer"
assert_eq "$(q a.db "SELECT sum(s.ncalls), sum(s.memtot), sum(s.nfree), sum(s.memlive) FROM last_sample s
    JOIN stack_path p ON p.stack = s.stack WHERE p.leaf = 'handler_loop'")" "1500000|60000000|1500000|0" "the loop's own stack exact"
# the handler's allocations: with their stack (it interrupted the program's code) or without (the allocator's)
assert_eq "$(q a.db "SELECT (SELECT sum(s.ncalls) FROM last_sample s JOIN stack_path p ON p.stack = s.stack WHERE p.leaf = 'on_alarm')
    + (SELECT t.ncalls_nostack FROM totals t JOIN snapshot sn ON sn.id = t.snapshot WHERE t.thread = 0 AND sn.reason = 'exit')")" "$((2 * n))" "the handler's: 2 per signal, with a stack or without"
assert_eq "$(q a.db "SELECT count(*) FROM stack_frames WHERE module LIKE '%libmallocprof%'")" 0 "no frame of the recorder's trampoline"
