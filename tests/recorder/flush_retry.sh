# A snapshot lost to a passing fault loses only itself (issue 25, item 6):
# the recorder forgot its process row after the failure and inserted a
# second one with the cumulative values (mpquery info listed the pid
# twice, the run's totals counted its first blocks twice).
# tests/progs/flush_retry.c: snapshot "a", snapshot "b" with the descriptor
# limit at 3 (lost), snapshot "c", exit; 3 x 1000 blocks of 100 bytes.
. "$(dirname "$0")/../lib/lib.sh"
LD_PRELOAD=$LIB MP_OUT=f.db "$B/tests/flush_retry" >out 2>err; rc=$?
assert_eq "$rc" 0 "the program's exit status"
assert_eq "$(cat out)" "0 -1 0" "mp_snapshot: a written, b lost, c written"
assert_eq "$(grep -c 'snapshot lost' err)" 1 "one line for the lost snapshot"
assert_eq "$(q f.db "SELECT count(*) FROM process")" 1 "one process row"
assert_eq "$(q f.db "SELECT count(*) FROM thread")" 1 "one thread row"
assert_eq "$(q f.db "SELECT group_concat(reason || ':' || label || ':' || seq, ' ') FROM (SELECT * FROM snapshot WHERE reason != 'peak' ORDER BY seq)")" \
    "$(q f.db "SELECT group_concat(reason || ':' || label || ':' || seq, ' ') FROM (SELECT * FROM snapshot WHERE reason != 'peak' ORDER BY id)")" \
    "snapshot seqs in the order they were written"
assert_eq "$(q f.db "SELECT count(DISTINCT seq) = count(*) FROM snapshot")" 1 "no seq twice"
assert_eq "$(q f.db "SELECT group_concat(label, ' ') FROM (SELECT label FROM snapshot WHERE reason = 'api' ORDER BY seq)")" "a c" \
    "the api snapshots a and c"
assert_eq "$(q f.db "SELECT t.ncalls || ' ' || t.memlive FROM totals t JOIN snapshot s ON s.id = t.snapshot
                     WHERE s.label = 'c' AND t.thread = 0")" "3000 300000" "snapshot c has the 3000 blocks"
for f in part_a part_b part_c; do
    assert_eq "$(by_function f.db "$f" | grep "^$f|")" "$f|1000|100000|0|100000" "$f once"
done
"$MPQ" info f.db --format json > info.json || fail "mpquery info failed"
assert_eq "$($PY3 -c 'import json,sys; d=json.load(open("info.json")); print(d["totals"]["ncalls"])' 2>&1)" 3001 \
    "mpquery info: the run's calls counted once (3000 and stdout's buffer)"
echo ok
