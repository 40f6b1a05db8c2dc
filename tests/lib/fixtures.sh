# Fixture databases for the mpquery_* and rules_* tests, built with the
# sqlite3 CLI from schema/profile.sql plus a NAME.sql file of this
# directory, so that every expected value is known exactly.
# Sourced after tests/lib/lib.sh (which sets ROOT and cds into a scratch dir).
FIX=$ROOT/tests/lib/fixtures

# fixture NAME [DB]: creates DB (default NAME.db) and prints its path: a
# copy of build/fixtures/NAME-HASH.db, built once for the schema and
# NAME.sql that HASH sums (big's 1 M stacks take 2.4 s to build, and two
# tests use them), under a lock: tests run side by side
fixture() {
    local name=$1 db=${2:-$1.db} dir=$B/fixtures key
    key=$({ cat "$ROOT/schema/profile.sql" "$FIX/$name.sql"; echo "$STACK_IN$STACK_OUT"; } | md5sum | cut -c1-16) ||
        fail "no fixture $name"
    local built=$dir/$name-$key.db
    mkdir -p "$dir" || fail "cannot make $dir"
    (
        flock 9 || exit 1
        [ -s "$built" ] && exit 0
        rm -f "$built.tmp"
        { cat "$ROOT/schema/profile.sql"; echo "$STACK_IN"; cat "$FIX/$name.sql"; echo "$STACK_OUT"; } |
            sqlite3 -batch "$built.tmp" && mv "$built.tmp" "$built"
    ) 9>"$dir/$name.lock" || fail "cannot build fixture $name"
    rm -f "$db"
    cp "$built" "$db" || fail "cannot copy fixture $name"
    NO_PROFILE_CHECK="$NO_PROFILE_CHECK $db"   # made by hand, not by the recorder: lib.sh checks the recorder's
    echo "$db"
}

# old_fixture VERSION [NAME]: vVERSION.db, fixture NAME (default basic) in
# the schema of format version 1 or 2 (schema/profile.sql as of the last
# commit before the next version: 5a363c0, 59c29b0) or 3, 4, 5 (schema/v3.sql,
# v4.sql, v5.sql), left in vVERSION.sql
old_fixture() {
    local rev
    case $1 in 1) rev=5a363c0 ;; 2) rev=59c29b0 ;; *) rev= ;; esac
    if [ -z "$rev" ]; then cp "$ROOT/schema/v$1.sql" "v$1.sql" || fail "old_fixture: no format version $1"
    else git -C "$ROOT" show "$rev:schema/profile.sql" > "v$1.sql" || fail "no commit $rev in the repository"; fi
    { cat "v$1.sql"; cat "$FIX/${2:-basic}.sql"; } | sqlite3 -batch "v$1.db" || fail "cannot build the version-$1 fixture"
}

# expect_fail EXIT_CODE STDERR_REGEX CMD...: runs CMD, checks the exit code
# and that stderr is ONE line matching the regex
expect_fail() {
    local code=$1 re=$2; shift 2
    local err rc
    err=$("$@" 2>&1 >/dev/null); rc=$?
    [ "$rc" = "$code" ] || fail "$*: exit $rc, expected $code (stderr: $err)"
    [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "$*: stderr is not one line: $err"
    printf '%s' "$err" | grep -Eq -- "$re" || fail "$*: stderr [$err] does not match /$re/"
    echo "  ok: $code: $err"
}

# json_get JSON PYTHON_EXPR: evaluates EXPR with j = the parsed JSON
json_get() {
    python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$2" <<<"$1" \
        || fail "invalid JSON or expression: $2"
}

# stacks_db DB < STACKS: a profile from the stack list format of
# stacks2sql.py (VALUES<TAB>root<TAB>...<TAB>leaf per line)
stacks_db() {
    local db=$1
    rm -f "$db"
    python3 "$ROOT/tests/lib/stacks2sql.py" > "$db.sql" || fail "stacks2sql.py failed"
    { cat "$ROOT/schema/profile.sql"; echo "$STACK_IN"; cat "$db.sql"; echo "$STACK_OUT"; } \
        | sqlite3 -batch "$db" || fail "cannot build $db"
}

# fold_of DB ARGS...: `mpquery fold DB --no-default-rules ARGS` (rules tests
# state every rule they rely on)
fold_of() {
    local db=$1; shift
    "$MPQ" fold "$db" --no-default-rules "$@" || fail "mpquery fold $db $* failed"
}
