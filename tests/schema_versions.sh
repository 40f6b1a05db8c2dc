# Format versions: mpquery reads files of version 1 (before sample.ntemp,
# read as 0) and 2; the recorder writes version 2 and leaves a version-1
# file as it is, saying why.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/mpquery_fixtures/lib.sh"
# format version 1: schema/profile.sql as of 5a363c0, the last commit before version 2
git -C "$ROOT" show 5a363c0:schema/profile.sql > v1.sql || fail "no commit 5a363c0 in the repository"
{ cat v1.sql; cat "$FIX/basic.sql"; } | sqlite3 -batch v1.db || fail "cannot build the version-1 fixture"
fixture basic v2.db >/dev/null
assert_eq "$(q v1.db 'PRAGMA user_version')|$(q v2.db 'PRAGMA user_version')" "1|2" "the two fixtures' versions"
assert_eq "$("$MPQ" top v1.db --format csv)" "$("$MPQ" top v2.db --format csv)" "top: a version-1 file reads as the same profile"
assert_eq "$("$MPQ" fold v1.db)" "$("$MPQ" fold v2.db)" "fold: the same"
cp v1.db before.db
LD_PRELOAD=$LIB MP_OUT=v1.db $B/tests/alloc_functions >/dev/null 2>err
assert_match "$(cat err)" "schema version 1, this profiler writes 2" "the recorder says why it does not write a version-1 file"
cmp -s v1.db before.db || fail "the recorder changed the version-1 file"
echo "  ok: the version-1 file is unchanged"
