# The recorder's lines under plain LD_PRELOAD: one 'mallocprof: info: wrote'
# line per snapshot written; MP_QUIET=1 silences the info lines, not the
# warnings nor the errors; the program's own output and exit status are
# unchanged. (mpquery record sets MP_QUIET=1: tests/mpquery/details.sh.)
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/cxx_alloc
want_out=$("$P" 2>/dev/null)
LD_PRELOAD=$LIB MP_OUT=a.db "$P" >out.txt 2>err.txt; rc=$?
assert_eq "$rc" 0 "exit status"
assert_eq "$(cat out.txt)" "$want_out" "the program's output"
assert_match "$(cat err.txt)" "^mallocprof: info: wrote $T/a.db: [0-9]+ stacks, [0-9]+ rows, exit snapshot, " "the exit snapshot's line"
assert_eq "$(wc -l < err.txt)" 1 "one line per snapshot written"
LD_PRELOAD=$LIB MP_OUT=a.db sh -c "$P" 2>err.txt
assert_eq "$(grep -c '^mallocprof: info: wrote' err.txt)" 2 "a process tree: a line per process (sh's, cxx_alloc's)"
LD_PRELOAD=$LIB MP_OUT=a.db MP_QUIET=1 "$P" >out.txt 2>err.txt; rc=$?
assert_eq "$rc:$(cat err.txt)" "0:" "MP_QUIET=1: nothing on stderr"
assert_eq "$(cat out.txt)" "$want_out" "MP_QUIET=1: the program's output"
LD_PRELOAD=$LIB MP_OUT=a.db MP_QUIET=1 MP_DEPTH=bad "$P" 2>err.txt >/dev/null
assert_match "$(cat err.txt)" "^mallocprof: warning: MP_DEPTH=bad is not valid" "MP_QUIET=1: warnings still"
assert_eq "$(wc -l < err.txt)" 1 "MP_QUIET=1: the warning only"
LD_PRELOAD=$LIB MP_OUT=/nonexistent-dir/a.db MP_QUIET=1 "$P" 2>err.txt >/dev/null
assert_match "$(cat err.txt)" "^mallocprof: error: cannot write /nonexistent-dir/a.db" "MP_QUIET=1: errors still"
assert_eq "$(q a.db "SELECT count(*) FROM process")" 5 "every run above wrote its processes"
