# One profile, every command's count of the same thing compared (issue 24):
#   processes: pids (the process tree's), each as one or more images (an
#     exec starts a new one): record, info's table and its tree agree;
#   snapshots: all of them, peaks included, as info lists them: record;
#   stacks: recorded stacks with samples in the selection (info), the
#     stacks of top's rows (total row, csv's 'stacks' column, the report's overview),
#     those of leaks' rows with their blocks live;
#   rows: what a listing shows after rules (top's text total row, csv).
# tests/progs/proc_tree: 50 processes, 17 of them fork + exec (two images).
# Before, record said "67 processes, N snapshots" (images, peaks left out)
# where info's tree said 50 processes, top counted rows as "stacks", and
# leaks and the report counted rows as stacks too.
. "$(dirname "$0")/../lib/lib.sh"
timeout 120 "$MPQ" record -o t.db -- "$B/tests/proc_tree" >/dev/null 2>rec.err || fail "record failed: $(cat rec.err)"
nsnap=$(q t.db "SELECT count(*) FROM snapshot"); npeak=$(q t.db "SELECT count(*) FROM snapshot WHERE reason = 'peak'")
assert_match "$(grep '^mpquery: wrote' rec.err)" "^mpquery: wrote t.db: 50 processes \\(67 images\\), $nsnap snapshots \\($npeak at a peak\\), [0-9.]+ s$" \
    "record: processes, images, every snapshot"
info=$("$MPQ" info t.db --run all)
assert_match "$info" $'\nprocesses: 50, as 67 images \\(exec starts a new image\\)\n' "info: the same processes and images"
assert_match "$info" $'\nprocess tree: 50 processes, 17 exec\'d' "info's tree: the same processes"
assert_eq "$(printf '%s\n' "$info" | awk '/^processes: / { f = 1; next } f && /^$/ { exit } f' | tail -n +2 | awk '{ s += $5 } END { print s }')" \
    "$nsnap" "info's table: the same snapshots"

# stacks with samples, from the file itself
S=$(q t.db "SELECT count(DISTINCT stack) FROM last_sample")
L=$(q t.db "SELECT count(*) FROM (SELECT stack FROM last_sample GROUP BY stack HAVING SUM(ncalls - nfree) > 0)")
assert_match "$info" $'\nstacks with samples in this selection: '"$S"'; the stack tree: [0-9]+ nodes' "info: $S stacks with samples"
assert_eq "$("$MPQ" info t.db --run all --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["stacks_with_samples"])')" "$S" \
    "info --format json: the same"
total=$("$MPQ" top t.db --by ncalls -n 0 --no-pager | sed -n 2p)
rows=$("$MPQ" top t.db --by ncalls -n 0 --format csv | tail -n +2 | wc -l)
assert_match "$total" "\(total: $S stacks in $rows rows\)$" "top: the same stacks, in as many rows as csv has"
assert_eq "$("$MPQ" top t.db --by ncalls -n 0 --format csv | tail -n +2 | awk -F, '{ s += $9 } END { print s }')" "$S" \
    "top --format csv: its 'stacks' column sums to the same"
assert_eq "$("$MPQ" top t.db --by ncalls -n 0 --no-pager | tail -n +3 | wc -l)" "$rows" "top: as many rows as it says"
assert_match "$("$MPQ" leaks t.db | tail -n 1)" "in $L stacks( \([0-9]+ rows\))?$" "leaks: the $L stacks with live blocks"
assert_eq "$("$MPQ" leaks t.db --format json | python3 -c 'import json,sys; s = json.load(sys.stdin)["summary"]; print(s["stacks"], s["rows"])')" \
    "$L $("$MPQ" leaks t.db --format csv | tail -n +2 | wc -l)" "leaks --format json: stacks and rows"
assert_match "$("$MPQ" leaks t.db --exclude tree_alloc | tail -n 1)" "in 0 stacks; ignored $L stacks" \
    "leaks --exclude: the stacks ignored, counted as stacks"
"$MPQ" report t.db -o r.html || fail "report failed"
assert_match "$(cat r.html)" "stacks with samples in this selection: $S; the stack tree: [0-9]+ nodes" "report: the same stacks (info's line in its overview)"
