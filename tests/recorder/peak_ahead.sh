# The peak snapshot written ahead of the exit (issue 31, flush_ahead): once
# the peak is likely final (no new one for a second, the live bytes at most
# 3/4 of it), the background thread writes its snapshot while the program
# runs, and the exit snapshot writes only its own rows. tests/progs/peak_ahead
# keeps a block from each of 4,096 stacks, frees 7 in 8, and waits for the
# file to appear. The profile is the one written at the exit alone
# (MP_TICK=0: no background thread): the same rows, ids and outputs. With a
# higher peak after the file appeared (AGAIN=1), the exit writes that peak
# again: the latest peak snapshot is the process's peak, as MP_TICK=0's.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/peak_ahead
MP_QUIET=0 profile a.db "$P" >a.out 2>a.err || fail "peak_ahead failed"
assert_eq "$(cat a.out)" "4096 paths, checksum 347680, written ahead: yes" "the file is written while the program runs"
assert_match "$(cat a.err)" "wrote .*a.db: 4098 stacks, 4098 rows, exit snapshot" "the exit writes its own rows alone"
MP_QUIET=1 MP_TICK=0 profile b.db "$P" 12 0 >b.out || fail "peak_ahead failed (MP_TICK=0)"
assert_eq "$(cat b.out)" "4096 paths, checksum 347680, written ahead: no" "MP_TICK=0: no background thread, nothing ahead"

# everything but the snapshots' times and the profiler's memory
dump() {
    "$MPQ" top "$1" && "$MPQ" top --snapshot peak "$1" && "$MPQ" fold "$1" && "$MPQ" fold --snapshot peak "$1" || return 1
    for t in sample stack frame function totals hist stack_hist; do q "$1" "SELECT * FROM $t" || return 1; done
    q "$1" "SELECT id, process, seq, reason, label FROM snapshot"
}
dump a.db >a.dump && dump b.db >b.dump || fail "reading the profiles failed"
assert_eq "$(q a.db "SELECT group_concat(seq || ' ' || reason || ' ' || (SELECT count(*) FROM sample WHERE snapshot = s.id), ', ') FROM snapshot s")" \
    "1 peak 4083, 2 exit 4098" "a peak snapshot (4,083 rows), then the exit's (4,098)"
cmp -s a.dump b.dump || fail "the peak written ahead differs from the one written at the exit: $(diff a.dump b.dump | head -5)"
echo "  ok: the same rows, ids and outputs as the exit alone writes"

MP_QUIET=1 profile c.db "$P" 12 20 1 >c.out || fail "peak_ahead failed (again)"
assert_eq "$(cat c.out)" "4096 paths, checksum 695360, written ahead: yes" "again: the file is written while the program runs"
MP_QUIET=1 MP_TICK=0 profile d.db "$P" 12 0 1 >d.out || fail "peak_ahead failed (again, MP_TICK=0)"
assert_eq "$(q c.db "SELECT group_concat(seq || ' ' || reason || ' ' || (SELECT count(*) FROM sample WHERE snapshot = s.id), ', ') FROM snapshot s")" \
    "1 peak 4083, 2 peak 8169, 3 exit 8194" "a higher peak after the write ahead: written again at the exit"
for db in c d; do
    { "$MPQ" top --snapshot peak $db.db && "$MPQ" fold --snapshot peak $db.db && "$MPQ" top $db.db; } >$db.dump || fail "reading $db.db failed"
done
cmp -s c.dump d.dump || fail "the latest peak differs from MP_TICK=0's: $(diff c.dump d.dump | head -5)"
echo "  ok: the latest peak and the exit as MP_TICK=0's"
check_profile a.db c.db
