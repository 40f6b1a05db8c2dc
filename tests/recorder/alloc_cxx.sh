# C++: operator new/delete, new[], std::string and std::vector, counted by
# the user function that allocates.
. "$(dirname "$0")/../lib/lib.sh"
plain_and_profiled a.db "$B/tests/cxx_alloc"
assert_eq "$(cat prof.out)" "$(cat plain.out)" "stdout unchanged"
assert_eq "$(by_function a.db '*()')" "grow_vector()|11|8188|11|0
keep_strings()|20|2020|20|0
make_arrays()|100|20000|100|0
make_objects()|500|12000|500|0
make_strings()|300|12300|300|0" "counters per function (the global vector is destroyed before the exit snapshot: its frees are seen)"
assert_eq "$(q a.db "SELECT count(*) FROM stack_path WHERE leaf = 'operator new(unsigned long)'")" 6 "leaf is operator new"
assert_eq "$(q a.db "SELECT count(*) FROM function WHERE name LIKE '\_Z%' ESCAPE '\\'")" 0 "names are demangled"
