#!/bin/bash
# Hostile names and regexes: 64 KB names, a pathological regex on a 64 KB
# name of 'a's, names with ';', tabs and newlines (fold escapes them), all
# within seconds.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

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

assert_eq "$("$MPQ" top h.db --depth 1 | sed -n '/ns::f/s/.*  //p')" "ns::f<…> < …" \
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

# back-references: glibc's regexec backtracks on them (([a-z]*)([a-z]*)\2\1x
# takes minutes on 1000 letters): refused where the rules are read, naming the
# file and line; the default rules have none, and run at once on a 60 KB
# name that made their former \2 take 76 s
printf '%s\n' $'1\tmain\t\\rep{ab*500} x' | stacks_db br.db
printf 'drop ^main$\ndrop ([a-z]*)([a-z]*)\\2\\1x\n' > br.rules
expect_fail 2 '^mpquery: br\.rules:2: back-references \(\\1 to \\9\) are not supported in a regex \(.*\): .\(\[a-z\]\*\)\(\[a-z\]\*\)\\2\\1x.$' \
    timeout 20 "$MPQ" fold br.db --rules br.rules
printf 'thread replace (w)\\1 => x\n' > brt.rules
expect_fail 2 '^mpquery: brt\.rules:1: back-references \(\\1 to \\9\) are not supported' timeout 20 "$MPQ" fold br.db --rules brt.rules
printf 'drop [\\1]\nreplace (a)(b) => \\2\\1\nreplace \\\\1 => x\n' > ok.rules
assert_eq "$(timeout 20 "$MPQ" fold br.db --no-default-rules --rules ok.rules | cut -c1-11)" "main;bababa" \
    "\\1 in a bracket, an escaped backslash before 1, and \\1 in the replacement are no back-references"
"$PY3" -c "print('1\tmain\tstd::vector<' + ' ' * 40000 + ', std::allocator< ' + ' ' * 20000 + '>')" | stacks_db sp.db
start=$(date +%s.%N)
n=$(timeout 20 "$MPQ" fold sp.db | wc -c)
assert_eq "$n" 60039 "default rules on a 60 KB std::vector<  ..., std::allocator<  ...> name: the name as it is"
assert_eq "$(echo "$(date +%s.%N) - $start < 5" | bc)" 1 "... within 5 s"
printf '%s\n' $'1\tmain\tf(std::map<std::string, int, std::less<void>, std::allocator<std::pair<std::string const, int> > >&)' \
    $'2\tmain\tf(std::map<std::string, int, std::less<std::string>, std::allocator<std::pair<std::string const, int> > >&)' \
    $'4\tmain\tf(std::vector<int, std::allocator<int> >&)' | stacks_db dr.db
assert_eq "$("$MPQ" fold dr.db | sort)" "main;f(std::map<std::string, int, std::less<>, std::allocator<std::pair<std::string const, int> > >&) 1
main;f(std::map<std::string, int>&) 2
main;f(std::vector<int>&) 4" "default rules: default container arguments go, std::less<void> stays distinct"
