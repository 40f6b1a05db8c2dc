# MP_TIME=1: each thread's wall time between its allocations, less the
# profiler's, credited to the stack of the allocation that ends it (the
# time counter, nanoseconds). tests/progs/time_split.c: slow() sleeps 10 ms
# before each of its 100 allocations, fast() makes 100000 quickly: slow
# holds at least 80 % of main's time, and about 1 s.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"
MP_TIME=1 MP_QUIET=1 profile t.db $B/tests/time_split || fail "the program failed"
fns=$("$MPQ" top t.db --functions --inclusive --by time --format csv)
echo "$fns" | head -n 4 | sed 's/^/# /'
col() { printf '%s\n' "$fns" | awk -F, -v f="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i } $NF == f { print $k }'; }
main=$(col main inclusive.time) slow=$(col slow inclusive.time) fast=$(col fast inclusive.time)
echo "# time: main $main ns, slow $slow ns, fast $fast ns"
python3 -c "import sys; sys.exit(not ($slow >= 0.8 * $main))" || fail "slow holds less than 80 % of main's time: $slow of $main"
echo "  ok: slow holds $((100 * slow / main)) % of main's time"
# (at least 100 × 10 ms less a little: CI's VM once measured 999,645,205 ns,
# its monotonic clock and the sleeps' timer a few µs apart per sleep)
python3 -c "import sys; sys.exit(not (0.99e9 <= $slow <= 3.0e9))" || fail "slow's time is not about 1 s: $slow ns"
echo "  ok: slow's 100 intervals of 10 ms: $slow ns"
assert_eq "$(col slow inclusive.ncalls)|$(col fast inclusive.ncalls)" "100|100000" "the calls as they were"
assert_match "$("$MPQ" top t.db -n 1 --by time --all-counters)" "^ncalls +memtot +nfree +nlive +memlive +maxlive +ntemp +time +% +stack +where" \
    "top shows the time column for a profile recorded with MP_TIME=1"
assert_eq "$("$MPQ" fold t.db --by time | awk '{ s += $NF } END { print (s > 0) }')" 1 "fold --by time"
assert_match "$("$MPQ" diff t.db t.db --by time --format csv | head -n 1)" "^a,b,delta" "diff --by time"
# without MP_TIME: no time column, the counter 0
MP_QUIET=1 profile n.db $B/tests/time_split || fail "the program failed"
assert_match "$("$MPQ" top n.db -n 1 --all-counters)" "^ncalls +memtot +% +nfree +nlive +memlive +maxlive +ntemp +stack +where" "no time column without MP_TIME"
assert_eq "$(q n.db "SELECT SUM(time) FROM sample")" 0 "the time counter is 0 without MP_TIME"
