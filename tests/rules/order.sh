#!/bin/bash
# Composition and order: rules run top to bottom on each name; drop, prune
# and root test the name as rewritten by the replace rules ABOVE them. On a
# stack, root applies first, then prune, then drop, whatever their order in
# the file. Several files apply in command-line order after default.rules.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

printf '%s\n' \
  $'10\tmain\trun\tTClass::New\tinner\tmalloc' \
  $'7\tmain\tjob::execute\tTClass::New\tinner' \
  | stacks_db o.db

printf 'replace ^TClass:: => ROOT::\ndrop ^ROOT::\n' > after.rules
assert_eq "$(fold_of o.db --rules after.rules | head -1)" "main;job::execute;inner 7" "drop sees the name rewritten by an earlier replace"
printf 'drop ^ROOT::\nreplace ^TClass:: => ROOT::\n' > before.rules
assert_eq "$(fold_of o.db --rules before.rules | head -1)" "main;job::execute;ROOT::New;inner 7" "drop does not see a later replace"

# root then prune then drop, regardless of file order
printf 'drop ^inner$\nprune ^TClass::New$\nroot execute$\n' > mix.rules
assert_eq "$(fold_of o.db --rules mix.rules)" \
"job::execute;TClass::New 7
main;run;TClass::New 10" "root, then prune, then drop"

# a prune above the innermost root does not cut it: root applies first
printf 'prune ^main$\nroot execute$\n' > pr.rules
assert_eq "$(fold_of o.db --rules pr.rules)" \
"job::execute;TClass::New;inner 7
main 10" "prune is evaluated inside the rooted path"

# two files: the second sees the first's rewriting
printf 'replace ^run$ => RUN\n' > one.rules
printf 'replace ^RUN$ => twice\n' > two.rules
assert_eq "$(fold_of o.db --rules one.rules --rules two.rules | tail -1)" "main;twice;TClass::New;inner;malloc 10" "files apply in order"
assert_eq "$(fold_of o.db --rules two.rules --rules one.rules | grep RUN)" "main;RUN;TClass::New;inner;malloc 10" "file order matters"
