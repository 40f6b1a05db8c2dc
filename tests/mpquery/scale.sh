#!/bin/bash
# A profile of 1 M distinct stacks (tests/lib/fixtures/big.sql): top,
# fold and diff give exact results at that scale, flame a picture and
# report a page within its bound (5 MiB: narrow frames left out, the
# deepest cut; -n 0's tables cut where their share ends). Their times are printed for
# information only (targets: top/fold <= 2 s, diff <= 4 s; `make bench`
# measures them against the targets on a recorded profile): a timing
# threshold in a test would flake on a shared machine.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

fixture big a.db >/dev/null
cp a.db b.db
NO_PROFILE_CHECK="$NO_PROFILE_CHECK b.db"   # a fixture changed by hand
sqlite3 b.db "UPDATE sample SET memtot = memtot + 16 WHERE stack % 1000 = 0" || fail "cannot make b.db"
assert_eq "$(q a.db 'SELECT count(*) FROM sample')" 1000000 "1 M stacks with samples"

timed() {   # timed WHAT OUT CMD...: runs CMD > OUT, prints its wall time
    local what=$1 out=$2 s=$(date +%s%N); shift 2
    "$@" >"$out" || fail "$what failed"
    echo "# $what on 1 M stacks: $(( ($(date +%s%N) - s) / 1000000 )) ms"
}
timed "top" top.txt "$MPQ" top a.db -n 5 --bytes
timed "top --functions" topf.txt "$MPQ" top a.db --functions -n 5
timed "fold" fold.txt "$MPQ" fold a.db
timed "diff" diff.txt "$MPQ" diff a.db b.db
timed "flame" flame.svg "$MPQ" flame a.db
assert_eq "$(grep -c . top.txt)" 7 "top -n 5: a header, the totals and 5 rows"
assert_eq "$(sed -n 3p top.txt | awk '{print $2, $4}')" "1600 99" "top: the largest stack (memtot ties broken by stack id)"
assert_eq "$(grep -c . topf.txt)" 7 "top --functions -n 5: a header, the totals and 5 rows"
assert_eq "$(wc -l < fold.txt)" "$("$MPQ" fold a.db --no-default-rules | wc -l)" "fold: one line per distinct path"
# (csv has the unchanged rows too, after the changed ones (by the size of
# the change): the first 1001 rows hold all the changed ones and one
# unchanged when exactly 1000 changed; -n 0's 1 M rows were 1.5 GB of csv
# and 12 s of CPU)
assert_eq "$("$MPQ" diff a.db b.db --format csv -n 1001 | awk -F, 'NR > 1 && $3 != 0' | wc -l)" 1000 "diff finds the 1000 changed stacks"
assert_eq "$(awk '{s += $NF} END {print s}' fold.txt)" "$(q a.db 'SELECT SUM(memtot) FROM sample')" "fold of 1 M stacks sums exactly"
echo "# flame on 1 M stacks: $(wc -c <flame.svg) bytes, $(grep -c '^<g data-o' flame.svg) frames"
assert_eq "$(python3 -c 'import sys, xml.etree.ElementTree as ET
g = [g for g in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}g") if g.get("id") == "frames"][0]
print(g[0].get("data-v"))' flame.svg)" "$(q a.db 'SELECT SUM(memtot) FROM sample')" "flame of 1 M stacks: well-formed, the root is the total"
[ "$(wc -c <flame.svg)" -lt 10000000 ] || fail "flame of 1 M stacks: $(wc -c <flame.svg) bytes, not under 10 MB"
echo "  ok: flame of 1 M stacks under 10 MB"
timed "report" report.html "$MPQ" report a.db
echo "# report on 1 M stacks: $(wc -c <report.html) bytes, $(grep -c '^<g class="f">' report.html) frames in its flame graphs"
assert_eq "$(python3 "$ROOT/tests/lib/report_page.py" report.html flames | awk '{print $1, $3}' | tr '\n' ,)" \
  "flame-memtot $(q a.db 'SELECT SUM(memtot) FROM sample'),flame-ncalls $(q a.db 'SELECT SUM(ncalls) FROM sample'),flame-memlive $(q a.db 'SELECT SUM(memlive) FROM sample'),flame-maxlive $(q a.db 'SELECT SUM(maxlive) FROM sample')," \
  "report of 1 M stacks: a flame graph per counter, its root the total"
[ "$(wc -c <report.html)" -le 5242880 ] || fail "report of 1 M stacks: $(wc -c <report.html) bytes, above its 5 MiB bound"
echo "  ok: report of 1 M stacks within its 5 MiB bound"
timed "report -n 0" all.html "$MPQ" report a.db -n 0
[ "$(wc -c <all.html)" -le 5242880 ] || fail "report -n 0 of 1 M stacks: $(wc -c <all.html) bytes, above its 5 MiB bound"
assert_match "$(python3 "$ROOT/tests/lib/report_page.py" all.html table top-memtot | tail -n 1)" \
  "^the first [0-9]+ rows \(the page's size bound\): mpquery serve shows them all$" \
  "report -n 0 of 1 M stacks: every row but for the bound, the table says where it cut"
