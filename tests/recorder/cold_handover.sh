# MP_COLD=1's scan walks the pointer map at every snapshot while the
# program goes on: the lone thread is switched to locking for the walk and
# back, while a second thread's hand-over may come (tests/progs/lone_handover.c,
# 40 children, a snapshot every 10 ms): every count stays exact.
. "$(dirname "$0")/../lib/lib.sh"
MP_COLD=1 MP_INTERVAL=0.01 MP_QUIET=1 profile a.db $B/tests/lone_handover 2>err || fail "program failed"
assert_eq "$(cat err)" "" "nothing on stderr"
assert_eq "$(by_function a.db '[hmt][a-z]*_*')" "hand_off|200000|9600000|200000|0
main_loop|4000000|64000000|4000000|0
thread_loop_step|500000|16000000|500000|0" "40 children: hand_off, main_loop, thread_loop_step exact"
assert_eq "$(q a.db "SELECT count(*), SUM(nfree), SUM(nfree_unknown)
      FROM process_totals WHERE process IN (SELECT id FROM process WHERE ppid IN (SELECT pid FROM process))")" "40|4700000|0" \
    "per child: the 117500 blocks freed, no unknown free"
assert_match "$(q a.db "SELECT COUNT(*) FROM snapshot WHERE reason = 'interval'")" "^[1-9][0-9]+$" "interval snapshots taken"
