#!/bin/bash
# prune REGEX: the path ends at the FIRST (outermost) matching frame; what
# it calls is cut, the frame itself stays.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

printf '%s\n' \
  $'100\tmain\tTClass::New\tTClass::Init\tTFormula::Compile\tmalloc' \
  $'20\tmain\tTClass::New\tmalloc' \
  $'3\tmain\tuser\tmalloc' \
  $'4\tmain\tTFormula::Eval\tTClass::New\tmalloc' \
  | stacks_db p.db

cat > p.rules <<'R'
prune ^T(Class|Formula)::
R
assert_eq "$(fold_of p.db --rules p.rules)" \
"main;TClass::New 120
main;TFormula::Eval 4
main;user;malloc 3" "prune at the outermost match"

printf 'prune ^TClass::Init$\ndrop ^TClass::Init$\n' > pd.rules
assert_eq "$(fold_of p.db --rules pd.rules | head -1)" "main;TClass::New 100" "a pruned frame may also be dropped (prune, then drop)"
