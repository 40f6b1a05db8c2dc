# Allocation under a storm of SIGALRM (100 us timer), and MP_SIGNAL=USR2
# snapshots requested by the program: exact counts, two signal snapshots
# holding what was allocated by then, output unchanged.
. "$(dirname "$0")/lib.sh"
P=$B/tests/signal_storm
MP_SIGNAL=USR2 profile a.db $P >out 2>err; rc=$?
assert_eq "$rc" 0 "exit status"
assert_eq "$(cat out)" "ok" "stdout"
assert_eq "$(q a.db "SELECT seq, reason FROM snapshot ORDER BY seq")" "1|signal
2|signal
3|exit" "two signal snapshots, then exit"
assert_eq "$(q a.db "SELECT sn.seq, sum(sa.ncalls) FROM sample sa JOIN snapshot sn ON sn.id = sa.snapshot
     JOIN stack_path sp ON sp.stack = sa.stack WHERE sp.leaf = 'storm_alloc' GROUP BY sn.seq")" "1|20000
2|20000
3|20000" "each snapshot stores only the stack that changed"
assert_eq "$(by_function a.db 'storm_alloc')" "storm_alloc|60000|2400000|60000|0" "exact at exit"
assert_eq "$(q a.db "SELECT t.ncalls FROM totals t JOIN snapshot s ON s.id = t.snapshot WHERE t.thread = 0 ORDER BY s.seq")" "20000
40000
60001" "totals grow snapshot by snapshot (stdout's buffer is the 1)"
