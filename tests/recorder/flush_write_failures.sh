# A snapshot that cannot be written: one clear line on stderr (at start
# when the output can be checked then: tests/recorder/output_check.sh), the
# program's stdout and exit status unchanged, nothing else touched.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/alloc_functions
$P >plain.out
check() {   # MP_OUT PATTERN WHAT
    LD_PRELOAD=$LIB MP_OUT=$1 $P >out 2>err; rc=$?
    assert_eq "$rc" 7 "$3: exit status"
    assert_eq "$(cat out)" "$(cat plain.out)" "$3: stdout"
    assert_eq "$(wc -l < err)" 1 "$3: one stderr line"
    assert_match "$(cat err)" "^mallocprof: error: cannot write $1: $2" "$3: says why"
}
check /nonexistent/dir/p.db "cannot create files in /nonexistent/dir \(No such file or directory\)" "nonexistent directory"
check /proc/p.db "cannot create files in /proc" "directory that cannot be written"
check /dev/full "it is not a regular file" "a device"
sqlite3 other.db "CREATE TABLE t(x); PRAGMA user_version = 99"
check $T/other.db "it is a database of schema version 99, this profiler writes $SCHEMA_VERSION" "another schema version"
assert_eq "$(q other.db 'SELECT count(*) FROM sqlite_master')" 1 "the other database untouched"
sqlite3 foreign.db "CREATE TABLE t(x)"
check $T/foreign.db "the file is an SQLite database of another program" "a foreign SQLite file"
echo "not a database at all, just text" > text.db
check $T/text.db "it is not an SQLite database" "a text file"
assert_eq "$(cat text.db)" "not a database at all, just text" "the text file untouched"
# an earlier run of another program at MP_OUT: appended as a new run
profile runs.db $B/tests/cxx_alloc 2>/dev/null
profile runs.db $P >/dev/null 2>&1
assert_eq "$(q runs.db 'SELECT count(*) FROM run')" 2 "two runs told apart"
assert_eq "$(q runs.db 'SELECT r.id, p.exe LIKE "%alloc_functions" FROM run r JOIN process p ON p.run = r.id ORDER BY r.id')" "1|0
2|1" "each process in its run"
