# Soak (SOAK_SECONDS, default 30) of a 2-thread allocation-heavy program with
# MP_INTERVAL=1: the profiler's own memory is flat after warm-up, and each
# interval snapshot writes only the rows that changed (the 16 busy
# (stack, thread) pairs), so the database grows with what changed.
. "$(dirname "$0")/../lib/lib.sh"
S=${SOAK_SECONDS:-30}
MP_INTERVAL=1 profile a.db $B/tests/soak $S 2>err || fail "program failed"
n=$(q a.db "SELECT count(*) FROM snapshot WHERE reason = 'interval'")
[ "$n" -ge $((S - 2)) ] || fail "expected about $S interval snapshots, got $n"
mem=$(q a.db "SELECT count(DISTINCT profiler_memory) FROM snapshot WHERE reason = 'interval' AND seq >= 4")
echo "# profiler memory per snapshot: $(q a.db "SELECT group_concat(DISTINCT profiler_memory) FROM snapshot WHERE seq >= 4") bytes"
assert_eq "$mem" 1 "profiler memory flat after warm-up"
# The last interval snapshot can fall after the threads freed their rings
# (two more changed rows: the rings' calloc stacks): steady means before it.
last=$(q a.db "SELECT max(seq) FROM snapshot WHERE reason = 'interval'")
assert_eq "$(q a.db "SELECT DISTINCT c FROM (SELECT s.seq, count(sa.stack) c FROM snapshot s LEFT JOIN sample sa ON sa.snapshot = s.id
     WHERE s.reason = 'interval' AND s.seq >= 4 AND s.seq < $last GROUP BY s.seq)")" 16 "16 changed rows per steady snapshot"
rows=$(q a.db "SELECT count(*) FROM sample")
size=$(stat -c %s a.db)
echo "# $n snapshots, $rows sample rows, database $size bytes: $((size / (n + 1))) bytes per snapshot"
assert_eq "$(q a.db "SELECT sum(s.memlive) FROM last_sample s JOIN stack_path sp USING(stack) WHERE sp.leaf LIKE 'soak_%'")" 0 "every soak block freed at the end"
