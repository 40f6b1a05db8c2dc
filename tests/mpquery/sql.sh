#!/bin/bash
# mpquery sql: aligned table, csv, json; the views; read-only; errors.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null

assert_eq "$("$MPQ" sql basic.db 'SELECT stack, memtot, leaf FROM stack_totals ORDER BY memtot DESC LIMIT 2')" \
"stack  memtot  leaf
    8    5100  malloc
   11    2000  malloc" "aligned table over a view"
assert_eq "$("$MPQ" sql basic.db "SELECT 'a,b' AS x, NULL AS n, 1.5 AS f" --format csv)" \
'x,n,f
"a,b",,1.5' "csv quoting, NULL, float"
json=$("$MPQ" sql basic.db "SELECT pid, exe, memtot FROM process_totals" --format json)
assert_eq "$(json_get "$json" 'j')" "[{'pid': 100, 'exe': '/usr/bin/app', 'memtot': 8400}]" "json over process_totals"
json=$("$MPQ" sql basic.db "SELECT char(10,9,1,34,92) || x'ff' AS s, NULL AS n" --format json)
assert_eq "$(json_get "$json" 'j[0]["s"] == "\n\t\x01\"\\\ufffd" and j[0]["n"] is None')" True \
  "json escapes control chars, quotes, backslashes; invalid UTF-8 becomes U+FFFD"
assert_eq "$("$MPQ" sql basic.db 'SELECT path FROM stack_path WHERE stack = 13' --format csv | tail -1)" \
  "__libc_start_main;main;_Z3fooi;malloc" "stack_path view (raw names)"
assert_eq "$("$MPQ" sql basic.db 'SELECT count(*) AS n FROM stack_frames WHERE stack = 5' --format csv | tail -1)" 5 "stack_frames view"
assert_eq "$("$MPQ" sql basic.db 'SELECT 1 WHERE 0')" "1" "an empty result prints the header"

before=$(md5sum basic.db)
expect_fail 2 '^mpquery: basic.db: sql: only read-only statements are allowed$' "$MPQ" sql basic.db 'DELETE FROM sample'
expect_fail 2 '^mpquery: basic.db: sql: no such table: nope$' "$MPQ" sql basic.db 'SELECT * FROM nope'
expect_fail 2 '^mpquery: basic.db: sql: one statement only$' "$MPQ" sql basic.db 'SELECT 1; SELECT 2'
expect_fail 2 '^mpquery: sql: needs DB and a query \(see mpquery sql --help\)$' "$MPQ" sql basic.db
assert_eq "$(md5sum basic.db)" "$before" "the database is unchanged"
"$MPQ" sql --help-all | grep -q 'stack_totals' || fail "sql --help does not document the views"
for v in frame_info last_snapshot last_sample stack_frames stack_path stack_totals process_totals; do
    "$MPQ" sql --help-all | grep -q "^  $v " || fail "sql --help lacks view $v"
    "$MPQ" sql basic.db "SELECT * FROM $v LIMIT 1" >/dev/null || fail "view $v"
done
echo "  ok: every view documented and queryable"
