#!/bin/bash
# replace REGEX => TEXT: every non-overlapping match, left to right, once per
# rule; \1..\9 groups, \0 the whole match, \\ a backslash; equal names after
# rewriting merge their stacks.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

printf '%s\n' \
  $'100\tmain\tns::Foo<int>::bar(ns::Foo<int>)' \
  $'20\tmain\tvec<a,b>::push' \
  $'3\tmain\tvec<c,d>::push' \
  $'4\tmain\taaa' \
  | stacks_db r.db

cat > ns.rules <<'R'
# drop the namespace everywhere (global)
replace ns:: =>
R
assert_eq "$(fold_of r.db --rules ns.rules | grep Foo)" "main;Foo<int>::bar(Foo<int>) 100" "global replace, empty text"

cat > br.rules <<'R'
replace vec<([a-z]),([a-z])> => vec<\2,\1>/\0/\\
R
assert_eq "$(fold_of r.db --rules br.rules | grep vec | sort)" \
"main;vec<b,a>/vec<a,b>/\\::push 20
main;vec<d,c>/vec<c,d>/\\::push 3" "back-references \\1 \\2, \\0 and \\\\"

cat > merge.rules <<'R'
replace vec<[^>]*> => vec<T>
R
assert_eq "$(fold_of r.db --rules merge.rules | grep vec)" "main;vec<T>::push 23" "paths equal after rules merge"

cat > once.rules <<'R'
replace a => aa
R
assert_eq "$(fold_of r.db --rules once.rules | grep -v '::')" "maain;aaaaaa 4" "each match replaced once (no rescan of the output)"

cat > empty.rules <<'R'
replace x* => -
R
assert_eq "$(fold_of r.db --rules empty.rules | grep -e '-a-a-a-')" "-m-a-i-n-;-a-a-a- 4" "empty matches: as sed s/x*/-/g"

cat > all.rules <<'R'
replace ^.*$ =>
R
assert_eq "$(fold_of r.db --rules all.rules | head -1)" "[empty];[empty] 127" "a name rewritten to nothing shows as [empty]"

# rules also apply to names shown by top --functions and diff
assert_eq "$("$MPQ" top r.db --no-default-rules --rules ns.rules --functions -n 1 --format csv | tail -1 | cut -d, -f15)" \
  "Foo<int>::bar(Foo<int>)" "top --functions uses rewritten names"
