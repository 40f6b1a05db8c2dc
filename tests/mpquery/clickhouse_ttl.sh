#!/bin/bash
# The store partitioned by day and push --ttl, on a private clickhouse-server
# (tests/lib/clickhouse.sh): a run's id carries the day it started (UTC) in
# its top 16 bits, every table of rows is partitioned by it, so a run's rows
# are in one partition; push --ttl 30d drops the partitions of the runs
# started more than 30 days ago, whole runs (mp_run's row first), and the
# store then answers as the files of the runs kept. The fleet fixture
# started at 5000 s (day 0); a copy of it started 7100 s ago (today or
# yesterday). A store made before version 2 (not partitioned) refuses --ttl.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
source "$ROOT/tests/lib/clickhouse.sh"
fixture fleet >/dev/null
now=$(date +%s)
sed -e "s/'fleet'/'fleet-recent'/" -e "s/5000\.0/$((now - 7100)).0/g" -e "s/5001\.0/$((now - 7000)).0/g" \
    -e "s/5002\.0/$((now - 3000)).0/g" -e "s/5003\.0/$((now - 1000)).0/g" "$ROOT/tests/lib/fixtures/fleet.sql" >recent.sql
{ cat "$ROOT/schema/profile.sql"; echo "$STACK_IN"; cat recent.sql; echo "$STACK_OUT"; } | sqlite3 -batch recent.db || fail "cannot build recent.db"
NO_PROFILE_CHECK="$NO_PROFILE_CHECK recent.db"
day=$(( (now - 7100) / 86400 ))
ch_start
"$MPQ" push -q "$CH_URL" fleet.db recent.db 2>push.err || fail "push failed: $(cat push.err)"
assert_eq "$(chc "SELECT bitShiftRight(run, 48) AS d FROM mp_run ORDER BY d" | paste -sd' ')" "0 $day" \
    "each run's id starts with the day it started"
for t in mp_run mp_process mp_thread mp_snapshot mp_totals mp_sample; do
    assert_eq "$(chc "SELECT DISTINCT partition FROM system.parts WHERE database = currentDatabase() AND table = '$t' AND active ORDER BY toInt64(partition)" | paste -sd' ')" \
        "0 $day" "$t: a partition per day"
done

expect_fail 2 "^mpquery: push: bad value '30x' for --ttl \(expected days, 1 to 36500: 30d\)" "$MPQ" push "$CH_URL" recent.db --ttl 30x
"$MPQ" push -q "$CH_URL" recent.db --ttl 30d 2>push.err || fail "push --ttl failed: $(cat push.err)"
assert_eq "$(grep -c 'ttl' push.err)" 1 "one line on what --ttl dropped"
assert_eq "$(grep ttl push.err)" "mpquery: push: --ttl 30d: dropped 1 runs" "--ttl 30d: the run of day 0 dropped"
assert_eq "$(chc "SELECT token FROM mp_run")" "fleet-recent" "mp_run: the recent run alone"
for t in mp_process mp_thread mp_snapshot mp_totals mp_sample; do
    assert_eq "$(chc "SELECT count() FROM $t WHERE bitShiftRight(run, 48) = 0")" 0 "$t: no row of the dropped run"
done
assert_eq "$("$MPQ" fold --server "$CH_URL" 2>&1)" "$("$MPQ" fold recent.db 2>&1)" "the store answers as the file of the run kept"
"$MPQ" push -q "$CH_URL" recent.db --ttl 1 2>push.err || fail "push --ttl 1 failed: $(cat push.err)"
assert_eq "$(chc "SELECT count() FROM mp_run")" 1 "--ttl 1: a run started today or yesterday is kept"

# push --follow --ttl: at its start (then hourly) the same
"$MPQ" push -q "$CH_URL" fleet.db 2>push.err || fail "push of fleet.db again failed: $(cat push.err)"
assert_eq "$(chc "SELECT count() FROM mp_run")" 2 "the day-0 run stored again"
mkdir -p watched
"$MPQ" push --follow watched --server "$CH_URL" --ttl 30d --state st 2>follow.err &
agent=$!
on_exit "kill $agent 2>/dev/null"
for i in $(seq 100); do grep -q ttl follow.err && break; sleep 0.1; done
kill -TERM $agent; wait $agent
assert_eq "$(grep ttl follow.err)" "mpquery: push: --ttl 30d: dropped 1 runs" "push --follow --ttl 30d: the day-0 run dropped at its start"
assert_eq "$(chc "SELECT token FROM mp_run")" "fleet-recent" "mp_run: the recent run alone again"

# a store from before version 2: its tables not partitioned, no --ttl
chc "CREATE DATABASE old" >/dev/null || fail "cannot create database old"
chc "CREATE TABLE old.mp_run (run UInt64, token String, start_time Float64, pushed DateTime, source String, host String, exe String, cmdline String, processes UInt32, snapshots UInt32, rows UInt64) ENGINE = MergeTree() ORDER BY (token, run)" >/dev/null \
    || fail "cannot create old.mp_run"
"$MPQ" push -q "${CH_URL}?database=old" fleet.db 2>push.err || fail "push to a version-1 store failed: $(cat push.err)"
expect_fail 1 "^mpquery: ${CH_URL//./\\.}\?database=old: --ttl: the store is of version 1, not partitioned by day \(made before version 2\): nothing dropped$" \
    "$MPQ" push -q "${CH_URL}?database=old" fleet.db --ttl 30d
echo PASS
