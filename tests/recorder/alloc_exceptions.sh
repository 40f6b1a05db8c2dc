# C++ exceptions thrown through allocating code: counts exact, output and
# exit status unchanged.
. "$(dirname "$0")/../lib/lib.sh"
plain_and_profiled a.db "$B/tests/exceptions"
assert_eq "$(cat prof.out)" "caught 1000" "stdout unchanged"
assert_eq "$(by_function a.db 'make_message*')" "make_message[abi:cxx11](int)|1000|101000|1000|0" "strings built during the throw"
assert_eq "$(by_function a.db '__cxa_allocate_exception')" "__cxa_allocate_exception|1000|144000|1000|0" "exception objects"
