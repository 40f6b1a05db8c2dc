# Format versions: mpquery reads files of version 1 (before sample.ntemp,
# read as 0), 2 (before peak snapshots), 3 (before the ticks), 4 (before
# mappings, cold blocks and the ledger), 5 (with the indexes on names and
# on sample(stack) that version 6 dropped) and the current one; the recorder
# writes the current version and leaves an older file as it is, saying why.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"
cur=$SCHEMA_VERSION
# the basic fixture in format versions 1 to 5 (old_fixture) and the current one
for v in 1 2 3 4 5; do old_fixture $v; done
fixture basic v$cur.db >/dev/null
assert_eq "$(for v in 1 2 3 4 5 $cur; do printf '%s|' "$(q v$v.db 'PRAGMA user_version')"; done)" \
    "1|2|3|4|5|$cur|" "the fixtures' versions"
for v in 1 2 3 4 5; do
    assert_eq "$("$MPQ" top v$v.db --format csv)" "$("$MPQ" top v$cur.db --format csv)" "top: a version-$v file reads as the same profile"
    assert_eq "$("$MPQ" fold v$v.db)" "$("$MPQ" fold v$cur.db)" "fold: the same"
done
# version 3: no ticks, the timeline of the snapshots as before
assert_eq "$("$MPQ" timeline v3.db --format csv)" "$("$MPQ" timeline v$cur.db --format csv)" "timeline: a version-3 file reads as the same"
assert_eq "$("$MPQ" info v3.db | grep -c 'memory over time')" 0 "info: no points of memory over time in a version-3 file"
for v in 1 2; do
    expect_fail 2 "^mpquery: v$v.db: no peak snapshot in the selected processes \(recorded before format version 3\?\)$" \
        "$MPQ" top v$v.db --snapshot peak
done
for v in 1 2 3 4 5; do
    cp v$v.db before.db
    LD_PRELOAD=$LIB MP_OUT=v$v.db $B/tests/alloc_functions >/dev/null 2>err
    assert_match "$(cat err)" "schema version $v, this profiler writes $cur" "the recorder says why it does not write a version-$v file"
    cmp -s v$v.db before.db || fail "the recorder changed the version-$v file"
    echo "  ok: the version-$v file is unchanged"
done
