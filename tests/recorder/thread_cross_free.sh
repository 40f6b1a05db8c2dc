# 4 threads free each other's blocks: each block is credited to the stack and
# the thread that allocated it; totals exact.
. "$(dirname "$0")/../lib/lib.sh"
profile a.db $B/tests/threads_cross_free 2>err || fail "program failed"
# thread k allocates blocks of (k+1)*16 bytes: one row per allocating thread
assert_eq "$(q a.db "SELECT s.ncalls, s.memtot, s.nfree, s.memlive, s.maxlive FROM last_sample s
      JOIN stack_path sp ON sp.stack = s.stack WHERE sp.leaf = 'thread_alloc' ORDER BY s.memtot")" \
"1000|16000|1000|0|16000
1000|32000|1000|0|32000
1000|48000|1000|0|48000
1000|64000|1000|0|64000" "thread_alloc per allocating thread, freed by another"
assert_eq "$(q a.db "SELECT count(DISTINCT s.thread) FROM last_sample s JOIN stack_path sp USING(stack) WHERE sp.leaf = 'thread_alloc'")" 4 "four allocating threads"
assert_eq "$(by_function a.db 'thread_*')" "thread_alloc|4000|160000|4000|0
thread_leak|12|768|0|768" "per function"
# per-thread totals: the same 1000 frees are credited to the allocating thread
assert_eq "$(q a.db "SELECT t.ncalls, t.memtot, t.nfree FROM totals t JOIN thread th ON th.id = t.thread
      JOIN last_snapshot ls ON ls.id = t.snapshot WHERE th.seq > 1 ORDER BY t.memtot")" "1003|16192|1000
1003|32192|1000
1003|48192|1000
1003|64192|1000" "thread totals (1000 blocks + 3 leaked each)"
assert_eq "$(q a.db "SELECT count(*) FROM thread")" 5 "5 threads recorded (main + 4)"
