# MP_UNWIND=fp (frame-pointer walk) records the same stacks as libunwind on
# a frame-pointer build, including stacks deeper than MP_DEPTH (truncated
# the same way).
. "$(dirname "$0")/lib.sh"
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
