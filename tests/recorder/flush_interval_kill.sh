# MP_INTERVAL snapshots survive SIGKILL: the database is sound, and the last
# snapshot's totals are >= the previous one's and <= the full run's.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/long_runner
ITER=3000000
MP_INTERVAL=0.3 profile full.db $P 600000 2>/dev/null
assert_eq "$(q full.db 'SELECT ncalls, memlive FROM process_totals')" "600000|64000" "full run exact"
assert_eq "$(q full.db "SELECT count(*) > 0 FROM snapshot WHERE reason = 'interval'")" 1 "interval snapshots written"
# Samples and totals agree exactly where nothing allocates while they are
# read (the exit snapshot). An interval snapshot reads them while the
# program allocates, without stopping it: there they can differ by the
# allocations made in between, so the killed run is not checked this way.
assert_eq "$(q full.db "SELECT sum(s.ncalls) || '|' || t.ncalls FROM last_sample s, totals t JOIN last_snapshot l ON l.id = t.snapshot AND t.thread = 0 JOIN stack_path sp ON sp.stack = s.stack WHERE sp.leaf = 'steady_alloc'")" "600000|600000" "exit snapshot: samples agree with totals"
MP_INTERVAL=0.3 LD_PRELOAD=$LIB MP_OUT=$T/killed.db $P $ITER 2>/dev/null &
pid=$!
sleep 1.6
kill -9 $pid
wait $pid 2>/dev/null
assert_eq "$(q killed.db 'PRAGMA integrity_check')" ok "integrity after SIGKILL"
n=$(q killed.db "SELECT count(*) FROM snapshot")
[ "$n" -ge 3 ] || fail "expected >= 3 interval snapshots before the kill, got $n"
echo "  ok: $n snapshots before SIGKILL"
assert_eq "$(q killed.db "SELECT count(*) FROM snapshot WHERE reason NOT IN ('interval', 'peak')")" 0 "no exit snapshot (killed)"
last=$(q killed.db "SELECT t.ncalls FROM totals t JOIN last_snapshot s ON s.id = t.snapshot WHERE t.thread = 0")
prev=$(q killed.db "SELECT t.ncalls FROM totals t JOIN snapshot s ON s.id = t.snapshot WHERE t.thread = 0 AND s.reason != 'peak' ORDER BY s.seq DESC LIMIT 1 OFFSET 1")
[ "$last" -ge "$prev" ] && [ "$last" -le $ITER ] && [ "$prev" -gt 0 ] || fail "totals: prev=$prev last=$last full=$ITER"
echo "  ok: totals previous $prev <= last $last <= full $ITER"
