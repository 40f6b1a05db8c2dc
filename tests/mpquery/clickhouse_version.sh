#!/bin/bash
# The store's version, checked as a profile's PRAGMA user_version is, on a
# private clickhouse-server (tests/lib/clickhouse.sh): push creates the view
# mp_version (schema/clickhouse.sql's number, 2); a store without it (made
# before versions: version 1) is read and pushed to, and stays version 1; a
# store of a later version is refused by push and by --server, one line,
# exit 1.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
source "$ROOT/tests/lib/clickhouse.sh"
fixture fleet >/dev/null
fixture exec >/dev/null
ch_start
"$MPQ" push -q "$CH_URL" fleet.db 2>push.err || fail "push failed: $(cat push.err)"
assert_eq "$(chc "SELECT version FROM mp_version")" 2 "push made the store's version view: version 2"
want=$("$MPQ" top --server "$CH_URL" --format csv 2>&1) || fail "top --server: $want"

# a store from before versions: read as version 1, upgraded by a push
chc "DROP TABLE mp_version" >/dev/null || fail "cannot drop the view"
assert_eq "$("$MPQ" top --server "$CH_URL" --format csv 2>&1)" "$want" "a store without mp_version (version 1) is read"
"$MPQ" push -q "$CH_URL" exec.db 2>push.err || fail "push to a version-1 store failed: $(cat push.err)"
assert_eq "$(chc "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'mp_version'")" 0 \
    "a version-1 store stays so when pushed to (its tables are not partitioned by day): no view"
chc "CREATE VIEW mp_version AS SELECT toUInt32(2) AS version" >/dev/null || fail "cannot make the view again"

# a later version: refused by readers and by push
chc "DROP TABLE mp_version" >/dev/null && chc "CREATE VIEW mp_version AS SELECT toUInt32(3) AS version" >/dev/null \
    || fail "cannot make a version-3 store"
expect_fail 1 "^mpquery: ${CH_URL//./\\.}: the store is of version 3, this mpquery reads versions 1 to 2 \(upgrade mpquery\)$" \
    "$MPQ" top --server "$CH_URL"
expect_fail 1 "^mpquery: ${CH_URL//./\\.}: the store is of version 3, this mpquery reads versions 1 to 2 \(upgrade mpquery\)$" \
    "$MPQ" info --server "$CH_URL"
expect_fail 1 "^mpquery: (push: )?${CH_URL//./\\.}: the store is of version 3, this mpquery reads versions 1 to 2" \
    "$MPQ" push -q "$CH_URL" fleet.db
assert_eq "$(chc "SELECT count() FROM mp_run")" 2 "the refused push stored nothing"
echo PASS
