# Allocation under a storm of SIGALRM (100 us timer), and MP_SIGNAL=USR2
# snapshots requested by the program: exact counts, two signal snapshots
# holding what was allocated by then, output unchanged.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/signal_storm
MP_SIGNAL=USR2 profile a.db $P >out 2>err; rc=$?
assert_eq "$rc" 0 "exit status"
assert_eq "$(cat out)" "ok" "stdout"
assert_eq "$(q a.db "SELECT reason FROM snapshot WHERE reason != 'peak' ORDER BY seq")" "signal
signal
exit" "two signal snapshots, then exit (and before each, the peak's when the live bytes grew)"
assert_eq "$(q a.db "SELECT sum(sa.ncalls) FROM sample sa JOIN snapshot sn ON sn.id = sa.snapshot
     JOIN stack_path sp ON sp.stack = sa.stack WHERE sp.leaf = 'storm_alloc' AND sn.reason != 'peak' GROUP BY sn.seq")" "20000
20000
20000" "each snapshot stores only the stack that changed"
assert_eq "$(by_function a.db 'storm_alloc')" "storm_alloc|60000|2400000|60000|0" "exact at exit"
assert_eq "$(q a.db "SELECT t.ncalls FROM totals t JOIN snapshot s ON s.id = t.snapshot WHERE t.thread = 0 AND s.reason != 'peak' ORDER BY s.seq")" "20000
40000
60001" "totals grow snapshot by snapshot (stdout's buffer is the 1)"
