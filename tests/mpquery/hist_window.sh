#!/bin/bash
# hist over a time window (--since, --until), and serve's /hist over a
# selected range (issue 43: every view follows the range): each process's
# classes at the window's end less those at its start, as top reads every
# counter. tests/progs/window_phases.c: phase_a 100 x 1000 bytes kept
# (snapshot a), phase_b 200 x 500 bytes, 50 of them and 20 of phase_a's
# blocks freed (snapshot b), phase_c 300 x 100 bytes (snapshot c). The
# window a..b is then exactly: class [256, 512) 200 calls, 100000 bytes,
# 150 blocks and 75000 bytes more live; class [512, 1024) nothing
# allocated, 20 blocks and 20000 bytes less live. The second source: the
# hist table's rows at snapshot b less those at a, in SQL.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/serve.sh"
. "$ROOT/tests/lib/window_phases.sh"
hist() { "$MPQ" hist w.db --format csv "$@" | tail -n +2 | paste -sd' '; }

assert_eq "$(hist --since "$AB" --until "$BC")" "256,512,200,100000,150,75000 512,1024,0,0,-20,-20000" \
    "a..b: phase b's class, and phase a's 20 blocks freed"
sql=$(q w.db "SELECT e.lo, e.lo * 2, e.ncalls - coalesce(s.ncalls, 0), e.memtot - coalesce(s.memtot, 0),
    e.nlive - coalesce(s.nlive, 0), e.memlive - coalesce(s.memlive, 0)
    FROM hist e LEFT JOIN hist s ON s.lo = e.lo AND s.snapshot = (SELECT id FROM snapshot WHERE label = 'a')
    WHERE e.snapshot = (SELECT id FROM snapshot WHERE label = 'b')
      AND (e.ncalls, e.memtot, e.nlive, e.memlive) IS NOT (s.ncalls, s.memtot, s.nlive, s.memlive)
    ORDER BY e.lo" | tr '|' ',' | paste -sd' ')
assert_eq "$sql" "$(hist --since "$AB" --until "$BC")" "the same window from the hist table (SQL)"
assert_eq "$(hist --until "$AB")" "512,1024,100,100000,100,100000" "start..a: phase a alone"
assert_eq "$(hist --since "$BC")" "64,128,300,30000,300,30000" "b..end: phase c alone"
stack_of() { "$MPQ" top w.db --format csv -n 0 | python3 -c '
import csv, sys
print(" ".join(r["stack"] for r in csv.DictReader(sys.stdin) if r["where"].startswith(sys.argv[1] + " ")))' "$1"; }
sa=$(stack_of phase_a) sb=$(stack_of phase_b)
assert_eq "$(hist --stack "$sb" --since "$AB" --until "$BC")" "256,512,200,100000,150,75000" "--stack phase_b over a..b"
assert_eq "$(hist --stack "$sa" --since "$AB" --until "$BC")" "512,1024,0,0,-20,-20000" "--stack phase_a over a..b: its frees"
text=$("$MPQ" hist w.db --since "$AB" --until "$BC" 2>&1 >/dev/null)
[[ $text == "mpquery: window "*": snapshots "* ]] || fail "text: the window's line on stderr, got [$text]"
"$MPQ" hist --server http://127.0.0.1:1/ --until +1 >out 2>err; rc=$?
assert_eq "$rc $(cat err)" "2 mpquery: hist: --until is a time window of files; with --server, --since selects runs (see mpquery hist --help)" \
    "--until with --server: refused"

start s w.db
assert_eq "$(get /hist "since=$(python3 -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1]))' "$AB")&until=$(python3 -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1]))' "$BC")")" 200 "/hist over the range"
assert_eq "$(rows | grep -E '^(256|512)\|' | paste -sd' ')" "256|512|200|100000|150|75000 512|1024|0|0|-20|-20000" \
    "/hist over the range: the command's window"
get /hist >/dev/null
assert_eq "$(rows | grep -E '^(64|256|512)\|' | paste -sd' ')" \
    "64|128|300|30000|300|30000 256|512|200|100000|150|75000 512|1024|100|100000|80|80000" "/hist without a range: the whole run"
