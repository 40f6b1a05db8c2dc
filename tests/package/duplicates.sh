#!/bin/bash
# The code repeats itself no more than it did (issue 42 item 5): the pairs
# of places in prof/, mpquery/ and common/ that share 6 or more lines, the
# same or of the same shape (tools/dupes.py), are at most CEILING. A
# change that writes a piece of logic a second time fails here with the
# pairs listed: give the two places one function. Lower CEILING when a
# change removes pairs (never raise it to let one in).
source "$(dirname "$0")/../lib/lib.sh"
CEILING=35
cd "$ROOT" || fail "no $ROOT"
dirs=$(for d in prof mpquery common; do [ -d $d ] && echo $d; done)
out=$($PY3 tools/dupes.py --list 200 $dirs) || fail "tools/dupes.py failed: $out"
n=$(printf '%s\n' "$out" | sed -n '1s/ duplicate pairs.*//p')
[ -n "$n" ] || fail "tools/dupes.py printed no count: $out"
echo "# $(printf '%s\n' "$out" | sed -n 1p) (at most $CEILING)"
[ "$n" -le $CEILING ] || fail "$n duplicate pairs, more than $CEILING: $(printf '%s\n' "$out" | sed 1d)"
# the checker itself: a function written twice is a pair more
mkdir -p "$T/tree" && cp -r prof "$T/tree/"
f=$T/tree/prof/planted.c
before=$($PY3 tools/dupes.py "$T/tree/prof" | sed -n '1s/ duplicate.*//p')
cat >>"$f" <<'C'
static int planted_twice_a(int x, int y)
{
    int total = x * 3 + y;
    if (total > 100) total -= y / 2;
    for (int i = 0; i < y; i++) total += i ^ x;
    while (total % 7) total++;
    return total - x + y * 2;
}
static int planted_twice_b(int p, int q)
{
    int sum = p * 5 + q;
    if (sum > 200) sum -= q / 4;
    for (int j = 0; j < q; j++) sum += j ^ p;
    while (sum % 9) sum++;
    return sum - p + q * 8;
}
C
after=$($PY3 tools/dupes.py "$T/tree/prof" | sed -n '1s/ duplicate.*//p')
assert_eq "$after" "$((before + 1))" "a function planted twice (by shape): one pair more"
