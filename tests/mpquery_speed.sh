#!/bin/bash
# Speed on a profile of 1 M distinct stacks (tests/mpquery_fixtures/big.sql):
# top and fold within 2 s, diff of two such profiles within 4 s (best of
# two runs, default rules on). Skipped under sanitizers (MPQUERY_NO_TIMING).
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/mpquery_fixtures/lib.sh"
if [ -n "${MPQUERY_NO_TIMING:-}" ]; then echo "# timing skipped (sanitizer build)"; exit 0; fi

fixture big a.db >/dev/null
cp a.db b.db
sqlite3 b.db "UPDATE sample SET memtot = memtot + 16 WHERE stack % 1000 = 0" || fail "cannot make b.db"
assert_eq "$(q a.db 'SELECT count(*) FROM sample')" 1000000 "1 M stacks with samples"

best() {    # best WHAT LIMIT CMD...: best wall time of two runs, in ms
    local what=$1 limit=$2 t best=999999; shift 2
    for i in 1 2; do
        local s=$(date +%s%N)
        "$@" >/dev/null || fail "$what failed"
        t=$(( ($(date +%s%N) - s) / 1000000 ))
        [ $t -lt $best ] && best=$t
    done
    echo "# $what: $best ms (limit $limit ms)"
    [ $best -le $limit ] || fail "$what took $best ms, more than $limit ms"
}
best "top" 2000 "$MPQ" top a.db
best "top --functions" 2000 "$MPQ" top a.db --functions
best "fold" 2000 "$MPQ" fold a.db
best "diff" 4000 "$MPQ" diff a.db b.db
assert_eq "$("$MPQ" diff a.db b.db --format csv -n 0 | awk -F, 'NR > 1 && $3 != 0' | wc -l)" 1000 "diff finds the 1000 changed stacks"
assert_eq "$("$MPQ" fold a.db | awk '{s += $NF} END {print s}')" "$(q a.db 'SELECT SUM(memtot) FROM sample')" "fold of 1 M stacks sums exactly"
