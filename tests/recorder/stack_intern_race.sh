# 4 threads intern the same 4096 new stacks at once: each (stack, thread)
# gets exactly one counter slot with its 3 calls (a stack interned twice,
# or two stacks taken for one, would split or merge them).
. "$(dirname "$0")/../lib/lib.sh"
profile a.db $B/tests/intern_race 2>err || fail "program failed"
assert_eq "$(q a.db "SELECT count(*), count(DISTINCT s.stack), count(DISTINCT s.thread), min(s.ncalls), max(s.ncalls),
      SUM(s.ncalls), SUM(s.memtot), SUM(s.nfree), SUM(s.memlive)
      FROM last_sample s JOIN stack_path sp ON sp.stack = s.stack WHERE sp.leaf = 'path_leaf'")" \
    "16384|4096|4|3|3|49152|1572864|49152|0" "4096 stacks x 4 threads, 3 calls each"
assert_eq "$(q a.db "SELECT count(DISTINCT path) FROM stack_path sp JOIN last_sample s ON s.stack = sp.stack
      WHERE sp.leaf = 'path_leaf'")" 4096 "4096 distinct paths"
