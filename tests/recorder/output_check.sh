# A bad output path is said at once (issue 24): with plain LD_PRELOAD, an
# output that cannot be written (a directory where nothing can be created,
# a file of another program, a directory named like the file, a directory
# that does not exist) gets one line on stderr before the program's first
# line of output, not after the whole run; the program runs unchanged
# (output, exit status), the file of another program is left as it was,
# and a run's other processes (fork, exec) do not repeat it.
. "$(dirname "$0")/../lib/lib.sh"
# Debian's python3 (lib/runtime_deps.sh installs it), not a wrapper earlier in PATH
PY='import sys; print("first line of the program"); sys.stdout.flush(); sys.exit(3)'

# bad_output WHAT DIR OUT PATTERN: the program in DIR with MP_OUT=OUT
bad_output() {
    local what=$1 dir=$2 out=$3 pattern=$4 rc
    (cd "$dir" && LD_PRELOAD=$LIB MP_OUT=$out /usr/bin/python3 -c "$PY") >out.txt 2>&1
    rc=$?
    assert_eq $rc 3 "$what: the program's exit status"
    assert_match "$(head -n 1 out.txt)" "^mallocprof: error: cannot write $pattern.*; the program runs on" \
        "$what: said first, before the program's first line"
    assert_eq "$(grep -v '^mallocprof: ' out.txt)" "first line of the program" "$what: the program's output"
}

bad_output "a directory where no file can be created" /proc profile.db \
    '/proc/profile.db: cannot create files in /proc \(No such file or directory\)'
mkdir same.db
bad_output "a directory named like the file" . same.db "$T/same.db: it is a directory"
printf 'notes of another program\n' >notes.db
bad_output "a file of another program" . notes.db "$T/notes.db: it is not an SQLite database"
assert_eq "$(cat notes.db)" "notes of another program" "the file of another program is left as it was"
bad_output "a directory that does not exist" . nodir/p.db "$T/nodir/p.db: cannot create files in $T/nodir \(No such file or directory\)"
sqlite3 other.db "CREATE TABLE t(x); PRAGMA user_version = 7;"
bad_output "an SQLite database of another version" . other.db "$T/other.db: it is a database of schema version 7"
assert_eq "$(q other.db 'SELECT count(*) FROM sqlite_master')" 1 "the other database is left as it was"
ls | grep -q '\.check$' && fail "a probe file was left behind: $(ls)"

# a run of several processes: the first says it at start, no process when
# its snapshot is lost
(cd /proc && LD_PRELOAD=$LIB MP_OUT=profile.db sh -c 'for i in 1 2 3; do /bin/true; sh -c :; done; echo done') \
    >out.txt 2>&1 || fail "the shell failed"
assert_eq "$(grep -c '^mallocprof: error' out.txt)" 1 "a run of 7 processes: one line, at start"
assert_eq "$(grep -v '^mallocprof: ' out.txt)" "done" "the run's output"

# a good output says nothing at start
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=good.db /usr/bin/python3 -c "$PY" >out.txt 2>&1
assert_eq "$?|$(cat out.txt)" "3|first line of the program" "a good output: nothing said"
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=good.db /usr/bin/python3 -c "$PY" >out.txt 2>&1
assert_eq "$?|$(cat out.txt)" "3|first line of the program" "an existing profile: nothing said"
assert_eq "$(q good.db 'SELECT count(*) FROM run')" 2 "both runs in the profile"
