# A process that exits while the interval thread may be writing a
# snapshot: the exit waits for it and no flush starts after the last one,
# so no run leaves a hot journal (which readers, opening the file read-only,
# cannot roll back: mpquery said "attempt to write a readonly database").
# Before the fix, 2 runs in 15 left one.
. "$(dirname "$0")/../lib/lib.sh"
bad=0
for i in $(seq 1 20); do
    rm -f j.db j.db-journal
    MP_QUIET=1 MP_INTERVAL=0.005 profile j.db $B/tests/interval_exit || fail "run $i: the program failed"
    [ -e j.db-journal ] && bad=$((bad + 1))
    "$MPQ" info j.db >/dev/null 2>err || fail "run $i: mpquery info failed: $(cat err)"
done
assert_eq "$bad" 0 "20 runs with MP_INTERVAL=0.005: no journal left behind"
assert_eq "$(q j.db "SELECT reason FROM snapshot WHERE reason != 'interval' AND reason != 'peak'")" "exit" "the last snapshot is the exit's"
