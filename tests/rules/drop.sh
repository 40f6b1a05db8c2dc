#!/bin/bash
# drop REGEX: matching frames disappear from paths (anywhere in the stack);
# stacks that become equal merge; a stack whose frames are all dropped is
# "[no frames]".
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

printf '%s\n' \
  $'100\tmain\twork\tmalloc' \
  $'20\tmain\twrap\twork\tmalloc' \
  $'3\tmalloc' \
  $'4\tmain\tmallocx' \
  | stacks_db d.db

cat > d.rules <<'R'
drop ^malloc$
drop ^wrap$     # a comment after whitespace
R
assert_eq "$(fold_of d.db --rules d.rules)" \
"[no frames] 3
main;mallocx 4
main;work 120" "drop removes frames, merges, keeps [no frames]"

assert_eq "$("$MPQ" top d.db --no-default-rules --rules d.rules -n 1 --format csv | tail -1)" \
  "2,120,0,2,120,120,0,3,2,work < main" "top merges dropped paths (stack id of the largest, 2 stacks)"

# default rules drop malloc and operator new
printf '%s\n' $'5\tmain\tf()\toperator new(unsigned long)\tmalloc' $'6\tmain\tg()\toperator new[](unsigned long)' | stacks_db n.db
assert_eq "$("$MPQ" fold n.db)" $'main;f() 5\nmain;g() 6' "default rules drop operator new / new[] and malloc"
