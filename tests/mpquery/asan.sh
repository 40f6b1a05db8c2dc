#!/bin/bash
# Builds mpquery with AddressSanitizer + UBSan (make asan) and runs every
# tests/mpquery/*.sh and tests/rules/*.sh with it (clickhouse_* start a
# clickhouse-server of their own), leak detection on: any report
# changes exit codes or stderr, so the tests fail. (Not mpquery/scale: the
# same code at 1 M stacks.) The tests run in one lane per core.
# tests/run.sh, when its list has this test, runs those tests here only
# (once, not once plain and once under ASan): MP_ASAN_RESULTS names the
# file that gets a line "ok|FAIL TEST SECONDS" for each, MP_ASAN_TESTS
# the tests (default: all), and each test's log goes to
# build/testlogs/TEST.log.
source "$(dirname "$0")/../lib/lib.sh"
make -s -C "$ROOT" asan >make.log 2>&1 || { cat make.log; fail "make asan failed"; }
[ -x "$B/asan/mpquery" ] || fail "make asan did not build build/asan/mpquery"
# mpquery record preloads the library next to it (counts_agree records)
ln -sf ../libmallocprof.so "$B/asan/libmallocprof.so"
export MPQUERY=$B/asan/mpquery
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99
# mpquery/scale runs the same code paths at 1 M stacks: minutes under ASan
list=$(cd "$ROOT/tests" && ls mpquery/*.sh rules/*.sh | sed 's/\.sh$//' | grep -v -x -e mpquery/asan -e mpquery/scale)
[ -n "${MP_ASAN_TESTS:-}" ] && list=$MP_ASAN_TESTS      # tests/run.sh's choice
# one lane per core (each test has a directory and servers of its own)
lanes=$(nproc 2>/dev/null || echo 1)
[ "$lanes" -gt 4 ] && lanes=4
lane() {        # LANE: every lanes-th test from LANE on
    local i=0 t
    for t in $list; do
        if [ $((i++ % lanes)) -eq "$1" ]; then
            local start=$(date +%s.%N) status=FAIL
            bash "$ROOT/tests/$t.sh" > "${t/\//_}.log" 2>&1 && status=ok
            echo "$status $t $(echo "$(date +%s.%N) - $start" | bc)" >> "lane$1"
        fi
    done
}
for l in $(seq 0 $((lanes - 1))); do lane $l & done
wait
failed=()
[ -n "${MP_ASAN_RESULTS:-}" ] && cat lane* > "$MP_ASAN_RESULTS"
for t in $list; do
    if [ -n "${MP_ASAN_RESULTS:-}" ]; then
        mkdir -p "$B/testlogs/$(dirname "$t")"
        cp "${t/\//_}.log" "$B/testlogs/$t.log"
    fi
    if grep -q "^ok $t " lane*; then
        echo "  ok: $t under ASan/UBSan"
    else
        failed+=("$t"); echo "FAIL under ASan: $t"; tail -n 30 "${t/\//_}.log"
    fi
done
[ ${#failed[@]} -eq 0 ] || fail "under ASan/UBSan: ${failed[*]}"
