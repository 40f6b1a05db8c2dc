#!/bin/bash
# root REGEX: the path starts at the LAST (innermost) matching frame; its
# callers are cut, the frame itself stays.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

printf '%s\n' \
  $'100\tmain\tscheduler\ttbb::internal::task::execute\tuser_a\tmalloc' \
  $'20\tmain\tscheduler\ttbb::internal::task::execute\tnested\ttbb::internal::task::execute\tuser_b\tmalloc' \
  $'3\tmain\tno_task\tmalloc' \
  | stacks_db t.db

cat > t.rules <<'R'
root tbb::.*::execute
R
assert_eq "$(fold_of t.db --rules t.rules)" \
"main;no_task;malloc 3
tbb::internal::task::execute;user_a;malloc 100
tbb::internal::task::execute;user_b;malloc 20" "root at the innermost match; stacks without a match unchanged"

printf 'root execute$\ndrop execute$\n' > rd.rules
assert_eq "$(fold_of t.db --rules rd.rules | tail -1)" "user_b;malloc 20" "a root frame may also be dropped"
