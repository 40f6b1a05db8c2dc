#!/bin/bash
# mpquery hist --server against a private clickhouse-server (tests/lib/clickhouse.sh):
# push stores the size histograms (mp_hist, mp_stack_hist), and hist --server
# answers byte for byte as the files do with --run all: every counter of
# --by, csv and json, the peak snapshot, a --where selection as its one
# file; --stack is refused with --server (exit 2).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
source "$ROOT/tests/lib/clickhouse.sh"

record_run h-a a.db "$B/tests/alloc_functions"
record_run h-peak p.db "$B/tests/peak_mix"
record_run h-cross x.db "$B/tests/threads_cross_free"
record_run h-classes c.db "$B/tests/cheap_modes"
FILES="a.db p.db x.db c.db"

ch_start
"$MPQ" push -q "$CH_URL" $FILES 2>push.err || fail "push failed: $(cat push.err)"
n=$(q a.db "SELECT count(*) FROM hist")
assert_eq "$(chc "SELECT count() FROM mp_hist WHERE run IN (SELECT run FROM mp_runs WHERE token = 'h-a')")" "$n" \
    "mp_hist holds a.db's $n hist rows"
n=$(q c.db "SELECT count(*) FROM stack_hist")
[ "$n" -gt 0 ] || fail "c.db has no stack_hist rows"
assert_eq "$(chc "SELECT count() FROM mp_stack_hist WHERE run IN (SELECT run FROM mp_runs WHERE token = 'h-classes')")" "$n" \
    "mp_stack_hist holds c.db's $n stack_hist rows"

# out ARGS...: what mpquery ARGS writes (stdout and stderr), then "exit N"
out() { "$MPQ" "$@" 2>&1; echo "exit $?"; }
same() {
    [ "$2" == "$3" ] || fail "$1: --server differs from the files (< files, > server):
$(diff <(printf '%s\n' "$3") <(printf '%s\n' "$2"))"
    [ "${2##*$'\n'}" == "exit 0" ] || fail "$1: did not succeed: $2"
    echo "  ok: $1: $(($(printf '%s\n' "$2" | wc -l) - 1)) lines alike"
}
alike() { same "$*" "$(out "$@" --server "$CH_URL")" "$(out "$@" $FILES --run all)"; }

alike hist
for by in ncalls memtot nlive memlive; do alike hist --by $by; done
alike hist --format csv
alike hist --format json
alike hist --snapshot peak --format csv
same "hist --where token = 'h-peak'" "$(out hist --server "$CH_URL" --where "token = 'h-peak'")" "$(out hist p.db)"
same "hist --exe threads_cross_free" "$(out hist --server "$CH_URL" --exe threads_cross_free --format csv)" \
    "$(out hist x.db --format csv)"
expect_fail 2 '^mpquery: hist: --stack: the histogram of one stack is read from files, not with --server \(see mpquery hist --help\)$' \
    "$MPQ" hist --server "$CH_URL" --stack 1
echo "PASS"
