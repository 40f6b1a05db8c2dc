#!/bin/bash
# A bad rules file is reported as "mpquery: FILE:LINE: what", exit 2, one
# line on stderr: unknown rule, missing regex or '=>', bad regex (with
# regerror's text), a regex regcomp cannot compile in bounded time, memory
# or stack, bad back-reference or escape, binary garbage, missing file.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
printf '%s\n' $'1\tmain' | stacks_db e.db

printf '# comment\n\ndrop ^a$\nfrobnicate x\n' > unknown.rules
expect_fail 2 '^mpquery: unknown.rules:4: unknown rule .*frobnicate.$' "$MPQ" fold e.db --rules unknown.rules

printf 'drop ^a$\nreplace abc\n' > arrow.rules
expect_fail 2 "^mpquery: arrow.rules:2: replace needs 'REGEX => TEXT'$" "$MPQ" top e.db --rules arrow.rules

printf 'prune\n' > noregex.rules
expect_fail 2 "^mpquery: noregex.rules:1: missing regex after 'prune'$" "$MPQ" fold e.db --rules noregex.rules

printf '\n\nroot (unclosed\n' > regex.rules
expect_fail 2 "^mpquery: regex.rules:3: bad regex \(Unmatched .*\): '\(unclosed'$" "$MPQ" fold e.db --rules regex.rules

printf 'replace a{2,1} => b\n' > interval.rules
expect_fail 2 "^mpquery: interval.rules:1: bad regex \(.+\): 'a\{2,1\}'$" "$MPQ" fold e.db --rules interval.rules

# regexes glibc's regcomp would take minutes, gigabytes or the whole stack to
# compile (found by tests/rules/fuzz.sh; 30000 nested groups crash it) are
# refused before it sees them
printf 'drop ^tbb::int%s\n' $(printf '+%.0s' $(seq 100)) > plus.rules
expect_fail 2 "^mpquery: plus.rules:1: regex too large once its repetitions are expanded \(over 2000 elements\): '\^tbb::int\+{100}'$" \
    timeout 10 "$MPQ" fold e.db --rules plus.rules
printf 'drop ((a?|b?)+){30}\n' > nullable.rules
expect_fail 2 "^mpquery: nullable.rules:1: regex repeats with \+ or \{n,m\} what can match the empty string \(use \* or \?\): " \
    timeout 10 "$MPQ" fold e.db --rules nullable.rules
# '*' over what already matches the empty string, stacked (found by the
# fuzzer: 100 of them, 3 s), nested (99 levels: 15 s) or in a row after an
# anchor (22 of them: 7 s); 10 levels pass
msg="regex repeats with '\\*' what can match the empty string more than 10 levels deep \\(as in a\\*\\*\\*, \\(\\(a\\*\\)\\*\\)\\* or \\(a\\*\\)\\*\\(a\\*\\)\\*\\.\\.\\.\\): "
python3 -c 'print("root ^(main|_" + "*" * 100 + "Py)$")' > stars.rules
python3 -c 'print("drop " + "(" * 99 + "a" + ")*" * 99)' > nested_stars.rules
python3 -c 'print("drop ^" + "(a*)*" * 22)' > row_stars.rules
for f in stars nested_stars row_stars; do
    expect_fail 2 "^mpquery: $f.rules:1: $msg" timeout 10 "$MPQ" fold e.db --rules $f.rules
done
# the same check for every regex a user gives: --filter, --exclude, --thread
expect_fail 2 "^mpquery: fold: $msg'\\^(\\(a\\*\\)\\*){22}'$" timeout 10 "$MPQ" fold e.db --filter "$(cut -c6- row_stars.rules)"
expect_fail 2 "^mpquery: top: $msg" timeout 10 "$MPQ" top e.db --exclude "$(cut -c6- row_stars.rules)"
expect_fail 2 "^mpquery: top: bad regex 'x\\*{30}' for --thread \\(regex repeats with '\\*' what can match the empty string" \
    timeout 10 "$MPQ" top e.db --thread "x$(printf '*%.0s' $(seq 30))"
python3 -c 'print("drop ^" + "(" * 10 + "a" + ")*" * 10 + "b|^" + "(a*)*" * 10 + "|^x" + "*" * 11 + "$")' > ten_stars.rules
"$MPQ" fold e.db --rules ten_stars.rules > /dev/null || fail "10 levels of '*' over the empty string: refused"
echo "  ok: 10 levels of '*' over the empty string pass"
python3 -c 'print("drop " + "(" * 150 + "a" + ")" * 150)' > deep.rules
expect_fail 2 "^mpquery: deep.rules:1: regex nests groups more than 100 deep: " timeout 10 "$MPQ" fold e.db --rules deep.rules

printf 'replace (a)b => \\2\n' > backref.rules
expect_fail 2 '^mpquery: backref.rules:1: back-reference \\2 but the regex has 1 group$' "$MPQ" fold e.db --rules backref.rules

printf 'replace a => \\q\n' > escape.rules
expect_fail 2 '^mpquery: escape.rules:1: unknown escape in replacement' "$MPQ" fold e.db --rules escape.rules

head -c 3000 /dev/urandom > garbage.rules
printf 'drop x\n\0\x01\x02 binary\n' > nul.rules
expect_fail 2 '^mpquery: nul.rules:2: binary data \(NUL byte\), not a rules file$' "$MPQ" fold e.db --rules nul.rules
# random bytes: some error with file:line, never a crash (unless, by chance, valid)
"$MPQ" fold e.db --rules garbage.rules >/dev/null 2>err.txt; rc=$?
[ $rc = 0 ] || [ $rc = 2 ] || fail "garbage rules: exit $rc"
[ $rc = 0 ] || grep -Eq '^mpquery: garbage.rules:[0-9]+: ' err.txt || fail "garbage rules: $(cat err.txt)"
echo "  ok: garbage rules file: exit $rc"

expect_fail 2 '^mpquery: nosuch.rules: No such file or directory$' "$MPQ" fold e.db --rules nosuch.rules

# --rules NAME finds filters/NAME.rules; every shipped rules file is valid
for f in "$ROOT"/filters/*.rules; do
    n=$(basename "$f" .rules)
    "$MPQ" fold e.db --rules "$n" >/dev/null || fail "filters/$n.rules does not load"
    echo "  ok: filters/$n.rules loads by name"
done
