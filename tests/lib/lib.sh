# Shared by the test scripts: paths, a scratch directory, assertions.
# A test script sources this, runs, and exits non-zero on the first failure.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# the format version this tree writes (schema/profile.sql's PRAGMA user_version)
SCHEMA_VERSION=$(sed -n 's/^PRAGMA user_version = \([0-9][0-9]*\);.*/\1/p' "$ROOT/schema/profile.sql")
# SQL made by hand (the fixtures, tests' own files) writes the stack tree a
# row a node, into `stack`: from format 6 on a view over runs (stack_run),
# so such SQL comes between STACK_IN, a temporary table of that name (it
# hides the view), and STACK_OUT, each node then a run of its own.
STACK_IN="CREATE TEMP TABLE stack(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL, frame INTEGER NOT NULL);"
STACK_OUT="INSERT INTO main.stack_run SELECT id, parent, json_array(frame) FROM temp.stack ORDER BY id; DROP TABLE temp.stack;"
B=$ROOT/build
LIB=${MP_TEST_LIB:-$B/libmallocprof.so}     # tests/recorder/debug_build.sh: the MP_DEBUG build
MPQ=${MPQUERY:-$B/mpquery}
T=$(mktemp -d "${TMPDIR:-/tmp}/mptest.XXXXXX")
cd "$T" || exit 1

fail() { echo "FAIL: $*" >&2; exit 1; }

PY3=/usr/bin/python3    # Debian's: a python3 earlier in PATH may be a wrapper (pyenv's starts a shell)
[ -x $PY3 ] || PY3=python3
# check_profile DB...: what must hold in every profile (tests/lib/invariants.py:
# rows add up to their snapshot's totals, nothing at the peak before it
# happened); fails the test when broken.
check_profile() {
    $PY3 "$ROOT/tests/lib/invariants.py" "$@" || fail "a profile's invariants are broken"
}

# At the end of a test that passed, every profile it left in $T (current
# format) is checked; NO_PROFILE_CHECK names files that are broken on
# purpose (hostile inputs), relative to $T.
NO_PROFILE_CHECK=${NO_PROFILE_CHECK:-}
# on_exit CMD: CMD runs first when the test exits (a helper's servers)
EXIT_CMDS=
on_exit() { EXIT_CMDS="$EXIT_CMDS$1;"; }
at_exit() {        # [STATUS]: the test's status (default: $?)
    local rc=${1:-$?}
    eval "$EXIT_CMDS"
    cd /
    if [ $rc -eq 0 ] && ! (cd "$T" && $PY3 "$ROOT/tests/lib/invariants.py" --found $NO_PROFILE_CHECK); then
        echo "FAIL: a profile's invariants are broken" >&2
        rc=1
    fi
    rm -rf "$T"
    exit $rc
}
trap at_exit EXIT

# test_pgrep PGREP-ARGS...: the newest process pgrep finds whose working
# directory is this test's ($T), as pgrep -n would: tests run side by side,
# and another test may run the same program
test_pgrep() {
    local p found= dir
    dir=$(cd "$T" && pwd -P)
    for p in $(pgrep "$@"); do
        [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$dir" ] && found=$p
    done
    [ -n "$found" ] && echo "$found"
}

# assert_eq ACTUAL EXPECTED WHAT
assert_eq() {
    [ "$1" == "$2" ] || fail "$3: expected [$2], got [$1]"
    echo "  ok: $3 = $2"
}

# assert_match TEXT REGEX WHAT
assert_match() {
    printf '%s' "$1" | grep -Eq -- "$2" || fail "$3: [$1] does not match /$2/"
    echo "  ok: $3"
}

# profile DB PROG ARGS...: runs PROG under the recorder writing DB.
profile() {
    local db=$1; shift
    LD_PRELOAD=$LIB MP_OUT=$db "$@"
}

# plain_and_profiled DB PROG ARGS...: PROG run without the recorder (stdout
# into plain.out) and under it writing DB (prof.out; stderr dropped); the
# exit status must be the same.
plain_and_profiled() {
    local db=$1 plain_rc; shift
    "$@" >plain.out; plain_rc=$?
    profile "$db" "$@" >prof.out 2>/dev/null; assert_eq "$?" "$plain_rc" "exit status unchanged"
}

# record_run TOKEN DB PROG ARGS...: one run of PROG (MP_RUN=TOKEN) added to
# DB, quietly; fails when nothing was written
record_run() {
    local token=$1 db=$2; shift 2
    MP_QUIET=1 MP_RUN=$token profile "$db" "$@" >/dev/null
    [ -s "$db" ] || fail "$1 wrote nothing into $db"
}

# q DB SQL: one value (or rows separated by newlines, columns by |)
q() { sqlite3 -batch -noheader "$1" "$2"; }

# hot_journal SRC DST: a copy of profile SRC at DST, then a transaction that
# rewrites every sample row and adds 2000 functions with a cache of 2 pages
# (so pages of it reach the file), killed (SIGKILL) before its commit:
# DST-journal is hot. DST is left out of the profile check at exit.
hot_journal() {
    cp "$1" "$2" || fail "cannot copy $1"
    $PY3 - "$2" <<'PY'
import os, signal, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"     # the recorder's: rollback journal
db.execute("PRAGMA cache_size = 2")
db.execute("BEGIN")
db.execute("UPDATE sample SET ncalls = ncalls + 1000000, memtot = memtot + 1000000")
db.execute("INSERT INTO function(id, name) SELECT 100 + i, printf('f%d-', i) || hex(randomblob(50)) FROM"
           " (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000) SELECT i FROM c)")
os.kill(os.getpid(), signal.SIGKILL)
PY
    [ -s "$2-journal" ] || fail "no hot journal beside $2"
    NO_PROFILE_CHECK="$NO_PROFILE_CHECK $2"
}

# Counters per leaf-most named function of the user's code, summed over the
# latest samples: "function|ncalls|memtot|nfree|memlive".
# The function is the first frame, from the leaf, whose name matches $2.
# (stack_frames walked once, its matching frames kept: the view in a
# correlated subquery was walked again for each sample, 63 s of CPU for
# runtimes/python's 27,000 samples, 1.7 s this way.)
by_function() {
    q "$1" "WITH m AS MATERIALIZED (SELECT stack, depth, function FROM stack_frames WHERE function GLOB '$2'),
                 leaf AS (SELECT stack, MIN(depth) AS depth FROM m GROUP BY stack)
            SELECT m.function, SUM(s.ncalls), SUM(s.memtot), SUM(s.nfree), SUM(s.memlive)
            FROM last_sample s
            JOIN leaf l ON l.stack = s.stack
            JOIN m ON m.stack = l.stack AND m.depth = l.depth
            GROUP BY m.function ORDER BY m.function"
}

# stripped_prog: ./prog, the optimized inline test program stripped, its
# debug info split into debug/.build-id/XX/YYYY.debug; sets bid (build-id).
stripped_prog() {
    cp "$B/tests/inline_opt" prog
    bid=$(readelf -n prog | sed -n 's/.*Build ID: //p')
    [ ${#bid} -eq 40 ] || fail "inline_opt has no build-id"
    mkdir -p debug/.build-id/${bid:0:2}
    objcopy --only-keep-debug prog debug/.build-id/${bid:0:2}/${bid:2}.debug || fail "objcopy failed"
    strip --strip-all prog || fail "strip failed"
}
