# The pointer map goes from lock-free (one recording thread) to locked (two)
# while the first thread is inside it, 40 times: every count stays exact.
. "$(dirname "$0")/../lib/lib.sh"
profile a.db $B/tests/lone_handover 2>err || fail "program failed"
assert_eq "$(by_function a.db '[hmt][a-z]*_*')" "hand_off|200000|9600000|200000|0
main_loop|4000000|64000000|4000000|0
thread_loop_step|500000|16000000|500000|0" "40 children: hand_off, main_loop, thread_loop_step exact"
# (glibc's pthread_create adds a block of its own to each child's totals; the
# children are the processes whose parent is in the file: pids wrap, a child
# can have a smaller pid than its parent)
assert_eq "$(q a.db "SELECT count(*), SUM(nfree), SUM(nfree_unknown)
      FROM process_totals WHERE process IN (SELECT id FROM process WHERE ppid IN (SELECT pid FROM process))")" "40|4700000|0" \
    "per child: the 117500 blocks freed, no unknown free"
