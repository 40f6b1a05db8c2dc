# MP_UNWIND=fp (frame-pointer walk) records the same stacks as libunwind on
# a frame-pointer build, including stacks deeper than MP_DEPTH (truncated
# the same way).
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/deep_paths
MP_DEPTH=256 profile lu.db $P 2>/dev/null
MP_DEPTH=256 MP_UNWIND=fp profile fp.db $P 2>/dev/null
paths() { q "$1" "SELECT path, ncalls FROM stack_totals WHERE leaf = 'deep_leaf' ORDER BY path"; }
assert_eq "$(paths lu.db | wc -l)" 5 "libunwind: 5 distinct stacks"
assert_eq "$(paths fp.db)" "$(paths lu.db)" "fp walk: the same stacks"
MP_DEPTH=64 profile lu64.db $P 2>/dev/null
MP_DEPTH=64 MP_UNWIND=fp profile fp64.db $P 2>/dev/null
assert_eq "$(paths fp64.db)" "$(paths lu64.db)" "the same truncated stacks at MP_DEPTH=64"
assert_eq "$(q fp64.db "SELECT count(*) FROM stack_totals WHERE path LIKE '[truncated];%'")" 2 "the two stacks deeper than 64 marked truncated"
# A program built without frame pointers leaves anything in rbp (python3's
# interpreter: -16, which wrapped the bounds check once): the walk falls
# back, the program runs as it does natively.
want=$(PYTHONMALLOC=malloc /usr/bin/python3 "$ROOT/tests/bench/json_churn.py")
got=$(PYTHONMALLOC=malloc MP_UNWIND=fp profile py.db /usr/bin/python3 "$ROOT/tests/bench/json_churn.py" 2>err)
assert_eq "$?:$got" "0:$want" "python3 under MP_UNWIND=fp: exit status and output"
