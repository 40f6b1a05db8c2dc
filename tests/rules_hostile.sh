#!/bin/bash
# Hostile names and regexes: 64 KB names, a pathological regex on a 64 KB
# name of 'a's, names with ';', tabs and newlines (fold escapes them), all
# within seconds.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/mpquery_fixtures/lib.sh"

printf '%s\n' \
  $'5\tmain\t\\rep{a*65536}' \
  $'6\tmain\tns::f<\\rep{std::vector<int, std::allocator<int> >, *1500}int>()' \
  $'7\tmain\tsemi\\x3bcolon\\tTAB\\nnewline\\rcr' \
  | stacks_db h.db

cat > patho.rules <<'R'
drop (a*)*b
replace (a|aa)*c => X
replace (.*)(.*)(.*)x => Y
replace ^(a*)*$ => <all a>
R
start=$(date +%s)
out=$(fold_of h.db --rules patho.rules) || fail "fold with pathological rules failed"
[ $(( $(date +%s) - start )) -le 10 ] || fail "pathological regexes took more than 10 s"
assert_eq "$(printf '%s\n' "$out" | grep -c '^main;<all a> 5$')" 1 "^(a*)*\$ on 64 KB of a's rewrites the name (global, once)"
assert_eq "$(fold_of h.db | grep '^main;semi')" 'main;semi:colon TAB newline cr 7' "';' becomes ':', control characters spaces"
assert_eq "$(printf '%s\n' "$out" | wc -l)" 3 "one line per stack"

# default rules shorten a 50 KB C++ name
long=$("$MPQ" fold h.db | grep 'ns::f')
expected=$(python3 -c 'print("main;ns::f<" + "std::vector<int>, " * 1500 + "int>() 6")')
assert_eq "$long" "$expected" "default rules shorten std::vector<int, std::allocator<int> > 1500 times in a 61 KB name"

assert_eq "$("$MPQ" top h.db --depth 1 | sed -n '/ns::f/s/.*  //p')" "ns::f<…> < ..." \
  "text: the 61 KB name's template arguments collapse (collapse-templates 0)"

# names longer than 64 KB are cut on load, with "..."
printf '%s\n' $'1\tmain\t\\rep{b*100000}' | stacks_db big.db
n=$("$MPQ" fold big.db --no-default-rules | awk '{print length($1)}')
assert_eq "$n" $((5 + 65536 + 3)) "a 100 KB name is cut to 64 KB + '...'"

# text output stays one line per row; JSON stays valid
rows=$("$MPQ" top h.db --no-default-rules | wc -l)
assert_eq "$rows" 5 "top: one line per row despite newlines in names (a header, the totals, 3 stacks)"
"$MPQ" top h.db --no-default-rules --format json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert any("\n" in r["where"] for r in d)' \
    || fail "top --format json invalid or lost the newline"
echo "  ok: JSON valid, newline preserved as \\n"
