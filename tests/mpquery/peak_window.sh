#!/bin/bash
# The peak within a time window (issue 43: /peak follows the selected
# range): --snapshot peak with --since/--until selects each process's
# latest peak snapshot captured in the window (a peak only rises: the
# highest live bytes the window reached), no subtraction; a window in which
# no peak rose is refused (exit 2). tests/progs/window_phases.c: phase_b
# raises the peak between snapshots a and b, phase_c does not (its 30000
# bytes come after 70 of the earlier blocks were freed). Second sources:
# the snapshot table's peak rows (SQL: the latest one in the window), and
# the same snapshot named by its number (top --snapshot N).
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/serve.sh"
. "$ROOT/tests/lib/window_phases.sh"
# the latest peak snapshot captured between two times (+S), by SQL
peak_in() { q w.db "SELECT seq FROM snapshot WHERE reason = 'peak' AND time - $t0 >= ${1#+} AND time - $t0 <= ${2#+}
    ORDER BY time DESC LIMIT 1"; }
seq=$(peak_in "$AB" "$BC")
[ -n "$seq" ] || fail "no peak snapshot between a and b in the file: the program's phases changed"
top() { "$MPQ" top w.db --by memlive -n 0 --format csv "$@"; }
assert_eq "$(top --snapshot peak --since "$AB" --until "$BC")" "$(top --snapshot "$seq")" \
    "the window's peak: peak snapshot $seq, as --snapshot $seq reads it"
assert_eq "$(top --snapshot peak --since "$AB" --until "$BC" | grep -c 'phase_b <')" 1 "phase_b holds memory at that peak"
assert_eq "$(top --snapshot peak --until "$AB")" "$(top --snapshot "$(peak_in +0 "$AB")")" \
    "start..a: the peak of phase a"
"$MPQ" top w.db --snapshot peak --since "$BC" >out 2>err; rc=$?
assert_eq "$rc" 2 "b..end: no peak rose in it: refused"
grep -q "no peak in it" err || fail "the refusal says why, got: $(cat err)"
txt=$("$MPQ" top w.db --snapshot peak --since "$AB" --until "$BC" 2>&1 >/dev/null)
[[ $txt == *"the peak reached in it, snapshot $seq ("* ]] || fail "text: the line on stderr names the snapshot, got [$txt]"
"$MPQ" top w.db --snapshot 2 --since "$AB" >/dev/null 2>err; rc=$?
assert_eq "$rc" 2 "--snapshot N with a window: still refused"

start s w.db
enc() { python3 -c 'import urllib.parse, sys; print(urllib.parse.quote(sys.argv[1]))' "$1"; }
assert_eq "$(get /peak "since=$(enc "$AB")&until=$(enc "$BC")")" 200 "/peak over the range"
assert_eq "$(rows | grep -c 'phase_b')" 1 "/peak over the range: phase_b's row"
assert_eq "$(get /peak "since=$(enc "$BC")")" 400 "/peak over a range without a peak: the refusal"
