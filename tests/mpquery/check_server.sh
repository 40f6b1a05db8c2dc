#!/bin/bash
# mpquery check DB --server URL: the baseline is the mean of the runs a
# private clickhouse-server (tests/lib/clickhouse.sh) holds, by default
# those of DB's executable (by its file name), else --where's. Three runs of
# tests/progs/check_prog.c pushed (and one of another program, which the
# default selection leaves out): the same program passes, work_b doubled
# fails naming it, a --where that selects no run is bad input (2), as is
# one that selects only the other program (no stack in common).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
source "$ROOT/tests/lib/clickhouse.sh"
P=$B/tests/check_prog
for i in 1 2 3; do record_run t-base$i base.db "$P"; done
record_run t-other other.db "$B/tests/alloc_functions"
# the current run's executable in another directory (CI builds anew):
# the store's runs of it are found by its file name
mkdir -p ci && cp "$P" ci/check_prog || fail "cannot copy check_prog"
MP_QUIET=1 profile same.db ci/check_prog || fail "check_prog failed"
MP_QUIET=1 profile double.db "$P" double || fail "check_prog double failed"

ch_start
"$MPQ" push -q "$CH_URL" base.db other.db 2>push.err || fail "push failed: $(cat push.err)"

out=$("$MPQ" check same.db --server "$CH_URL"); rc=$?
assert_eq "$rc:$out" "0:mpquery check same.db against $CH_URL (growth allowed: 10 %, at least 0.5 % of the baseline's total)
PASS: 0 of 4 stacks and 0 of 4 functions grew" "the same program (built elsewhere) against the store's 3 runs of it (their mean): 0"
out=$("$MPQ" check double.db --server "$CH_URL" --bytes); rc=$?
assert_eq "$rc:$out" "1:mpquery check double.db against $CH_URL (growth allowed: 10 %, at least 0.5 % of the baseline's total)
result  check     measure   before    after  growth      limit  where
FAIL    stack     calls       2000     4000  +100.0 %     2200  work_b < main
FAIL    stack     bytes    2000000  4000000  +100.0 %  2200000  work_b < main
FAIL    function  calls       2000     4000  +100.0 %     2200  work_b
FAIL    function  bytes    2000000  4000000  +100.0 %  2200000  work_b
FAIL: 1 of 4 stacks and 1 of 4 functions grew" "work_b doubled: 1, naming it"
out=$("$MPQ" check same.db --server "$CH_URL" --where "token = 't-base2'"); rc=$?
assert_eq "$rc:$(echo "$out" | tail -1)" "0:PASS: 0 of 4 stacks and 0 of 4 functions grew" "--where: one run of them"
out=$("$MPQ" check same.db --server "$CH_URL" --where "token IN ('t-base1', 't-other')"); rc=$?
assert_eq "$rc" 1 "--where with another program's run: its mean is not this program's"
expect_fail 2 "^mpquery: check: same.db \(check_prog, 4 stacks\) and the baseline http://.* \(alloc_functions, 8 stacks\) have no stack in common" \
  "$MPQ" check same.db --server "$CH_URL" --where "token = 't-other'"
expect_fail 2 "^mpquery: http://.*: no run in the store matches the selection" "$MPQ" check same.db --server "$CH_URL" --where "token = 'none'"
