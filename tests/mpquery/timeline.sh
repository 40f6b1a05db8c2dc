# mpquery timeline: memory over time from the snapshots and ticks.
# Snapshots alone (MP_TICK=0): tests/progs/timeline_steps.c: the parent holds 1000000 bytes (snapshot
# "one"), 3000000 (snapshot "two"); its child holds 1000000 (snapshot
# "child") and exits; the parent frees grow_a's 1000000 and exits. The
# tree's rows: every process's latest totals at each moment, an ended
# process holding no live bytes any more.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"
MP_TICK=0 MP_QUIET=1 profile t.db $B/tests/timeline_steps || fail "the program failed"
parent=$(q t.db "SELECT pid FROM process WHERE ppid NOT IN (SELECT pid FROM process)")
child=$(q t.db "SELECT pid FROM process WHERE ppid = $parent")
csv=$("$MPQ" timeline t.db --format csv --stacks 3)
norm() { sed -e "1s/^time,//" -e "s/^[0-9.]*,//" -e "s/^$parent,/P,/" -e "s/^$child,/C,/"; }
stack_of() { q t.db "SELECT DISTINCT s.stack FROM sample s JOIN stack_path p USING (stack) WHERE p.leaf = '$1'"; }
assert_eq "$(printf '%s\n' "$csv" | norm)" "pid,seq,reason,label,ncalls,memtot,memlive,maxlive,rss,stack_$(stack_of grow_b),stack_$(stack_of grow_a),stack_$(stack_of child_work)
P,2,api,one,1000,1000000,1000000,1000000,,0,1000000,0
P,4,api,two,3000,3000000,3000000,3000000,,2000000,1000000,0
P,5,exit,,3000,3000000,2000000,3000000,,2000000,0,0
C,2,api,child,500,1000000,1000000,1000000,,0,0,1000000
C,3,exit,,500,1000000,1000000,1000000,,0,0,1000000
0,,,,1000,1000000,1000000,,,0,1000000,0
0,,,,3000,3000000,3000000,,,2000000,1000000,0
0,,,,3500,4000000,4000000,,,2000000,1000000,1000000
0,,,,3500,4000000,4000000,,,2000000,1000000,1000000
0,,,,3500,4000000,2000000,,,2000000,0,0" \
    "csv: per process its snapshots (peaks aside), the tree at each moment, the three stacks held at the peaks (grow_b, grow_a: freed before the parent's exit; child_work)"
# the stacks are top --snapshot peak --by memlive's, in its order
assert_eq "$(printf '%s\n' "$csv" | head -n 1 | tr , '\n' | sed -n 's/^stack_//p' | paste -sd' ')" \
    "$("$MPQ" top t.db --snapshot peak --by memlive --format json | python3 -c 'import json,sys; print(" ".join(str(r["stack"]) for r in json.load(sys.stdin)[:3]))')" \
    "--stacks 3: the stacks of top --snapshot peak --by memlive"
times=$(printf '%s\n' "$csv" | tail -n +2 | cut -d, -f1)
python3 - "$times" <<'PY' || fail "times: not relative seconds in order: $times"
import sys
t = [float(x) for x in sys.argv[1].split()]
procs, tree = t[:5], t[5:]
assert 0 < procs[0] <= procs[1] <= procs[2] and procs[3] <= procs[4] <= procs[2]
assert tree == sorted(procs) and all(x < 60 for x in t)
PY
echo "  ok: times relative to the first process's start, the tree's sorted"
# the time axis is info's: the parent's snapshot "one" at the same +seconds
assert_eq "$(printf '%s\n' "$csv" | sed -n 2p | cut -d, -f1)" \
    "$("$MPQ" info t.db --pid "$parent" | sed -n 's/^ *2 *+\([0-9.]*\)s *api *one .*/\1/p')" "the first point's time is info's"
json=$("$MPQ" timeline t.db --format json)
assert_eq "$(json_get "$json" "len(j['rows']), j['rows'][2]['memlive'], j['rows'][-1]['memlive'], j['rows'][-1]['pid']")" \
    "(10, 2000000, 2000000, 0)" "json: {\"rows\": [...]}"
# a pipe gets the table, as from every command (the terminal's: below);
# the plot with --format svg or -o FILE.svg
assert_match "$("$MPQ" timeline t.db | head -n 1)" "^ *time +pid +seq +reason +label +ncalls" "a pipe gets the table, not SVG"
"$MPQ" timeline t.db --stacks 2 --format svg > plot.svg || fail "timeline failed"
python3 - plot.svg <<'PY' || fail "the SVG plot is not what was expected"
import sys, xml.etree.ElementTree as E
ns = {'s': 'http://www.w3.org/2000/svg'}
root = E.parse(sys.argv[1]).getroot()
texts = [t.text or '' for t in root.iter('{http://www.w3.org/2000/svg}text')]
titles = [t.text or '' for t in root.iter('{http://www.w3.org/2000/svg}title')]
for want in ('live bytes (memlive)', 'bytes allocated (memtot)', 'allocations (ncalls)', 'whole tree'):
    assert want in texts, want
assert any(x.endswith(' grow_b') and x.startswith('#') for x in texts), 'a series per stack, named by its leaf'
assert any(x.endswith(' timeline_steps') for x in texts), 'a series per process, named by its command'
# each point's tooltip: value in human units and exact
assert any(x.startswith('whole tree at ') and x.endswith(': 3.81 MiB (4000000)') for x in titles), titles[:5]
assert sum(1 for _ in root.iter('{http://www.w3.org/2000/svg}polyline')) == 3 * 3 + 2, 'tree + 2 processes in 3 panels, 2 stacks in one'
assert 'http://' not in open(sys.argv[1]).read().replace('xmlns="http://www.w3.org/2000/svg"', '')
PY
echo "  ok: the SVG plot: panels, series, tooltips"
"$MPQ" timeline t.db -o out.svg || fail "-o FILE.svg failed"
assert_match "$(head -c 200 out.svg)" "<svg" "-o FILE.svg writes the plot"
assert_match "$(script -qc "$MPQ timeline t.db" /dev/null | tr -d '\r' | head -n 1)" "^ *time +pid +seq +reason" "a terminal gets the table"
expect_fail 2 "^mpquery: timeline: bad value 'png' for --format" "$MPQ" timeline t.db --format png
expect_fail 2 "^mpquery: timeline: --stacks x: a count from 0 to 100" "$MPQ" timeline t.db --stacks x
expect_fail 2 "^mpquery: t.db: no process with pid 1 in the selected run$" "$MPQ" timeline t.db --pid 1

# With ticks (the fixture tests/lib/fixtures/ticks.sql): a process's
# points are its ticks and snapshots in time order (the tick a snapshot
# wrote at its time is that snapshot's point, with its RSS); the tree sums
# each process's latest, RSS too; times from the first process's start
# (1000.0), as info's, not from the run's (its first snapshot, 1001.0).
fixture ticks >/dev/null
assert_eq "$("$MPQ" timeline ticks.db --format csv --stacks 1)" "time,pid,seq,reason,label,ncalls,memtot,memlive,maxlive,rss,stack_2
0.500,100,,tick,,1,1000,1000,,4096000,
1.000,100,1,api,one,3,3000,3000,3000,4100096,3000
1.500,100,,tick,,4,7000,5000,,4200000,
2.000,100,2,exit,,4,7000,2000,5000,4150000,2000
1.000,101,,tick,,2,500,500,,1000000,
1.400,101,,tick,,2,500,500,,1100000,
1.600,101,1,exit,,2,500,0,500,1050000,0
0.500,0,,,,1,1000,1000,,4096000,0
1.000,0,,,,5,3500,3500,,5100096,3000
1.400,0,,,,5,3500,3500,,5200096,3000
1.500,0,,,,6,7500,5500,,5300000,3000
1.600,0,,,,6,7500,5000,,5250000,3000
2.000,0,,,,6,7500,2000,,4150000,2000" "ticks: csv"
assert_eq "$("$MPQ" timeline ticks.db --format csv --pid 101 | cut -d, -f1-4 | paste -sd ' ')" \
    "time,pid,seq,reason 0.200,101,,tick 0.600,101,,tick 0.800,101,1,exit 0.200,0,, 0.600,0,, 0.800,0,," \
    "--pid 101: its times from its own start, as info's (+0.800s for its exit)"
assert_match "$("$MPQ" info ticks.db --pid 101)" "\\*1 +\\+0\\.800s +exit" "info: the child's exit at +0.800s"
# several files are read as one (merged): the ticks come along
assert_eq "$("$MPQ" timeline ticks.db t.db --run all --format csv | grep -c ',tick,')" 4 "two files: the ticks of ticks.db"
# info: a line a process on its points, times from its start
assert_eq "$("$MPQ" info ticks.db | grep 'memory over time')" \
"  memory over time: 4 points, +0.500s to +2.000s; highest sampled memlive 4.88 KiB at +1.500s, highest sampled RSS 4.01 MiB at +1.500s
  memory over time: 3 points, +0.200s to +0.800s; highest sampled memlive 500 B at +0.200s, highest sampled RSS 1.05 MiB at +0.600s" \
    "info: each process's points, their maxima named as sampled"
# the terminal's table, at 80 and 200 columns
for cols in 80 200; do
    out=$(COLUMNS=$cols PAGER=cat script -qc "$MPQ timeline ticks.db --pid 100" /dev/null | tr -d '\r')
    assert_eq "$out" " time  pid  seq  reason  label  ncalls    memtot   memlive   maxlive       rss
0.500  100    -  tick    -           1    1000 B    1000 B         -  3.91 MiB
1.000  100    1  api     one         3  2.93 KiB  2.93 KiB  2.93 KiB  3.91 MiB
1.500  100    -  tick    -           4  6.84 KiB  4.88 KiB         -  4.01 MiB
2.000  100    2  exit                4  6.84 KiB  1.95 KiB  4.88 KiB  3.96 MiB
0.500    0    -  -       -           1    1000 B    1000 B         -  3.91 MiB
1.000    0    -  -       -           3  2.93 KiB  2.93 KiB         -  3.91 MiB
1.500    0    -  -       -           4  6.84 KiB  4.88 KiB         -  4.01 MiB
2.000    0    -  -       -           4  6.84 KiB  1.95 KiB         -  3.96 MiB" "the table at $cols columns (units)"
done
out=$(COLUMNS=80 PAGER=cat script -qc "$MPQ timeline ticks.db --pid 100 --bytes" /dev/null | tr -d '\r' | sed -n '1p;5p')
assert_eq "$out" " time  pid  seq  reason  label  ncalls  memtot  memlive  maxlive      rss
2.000  100    2  exit                4    7000     2000     5000  4150000" "--bytes: the table in bytes"
# two processes: the plot marks the tree's highest point, named as
# sampled (not a peak: a process's peak snapshot is exact); the legend as
# wide as its longest name. A panel of RSS: the csv's rss at each point
# (the tree's at 1.500 s: 5300000), the tree and each process a line.
"$MPQ" timeline ticks.db -o ticks.svg || fail "timeline -o ticks.svg failed"
tree_rss=$("$MPQ" timeline ticks.db --format csv | awk -F, '$1 == "1.500" && $2 == 0 {print $10}')
python3 - ticks.svg "$tree_rss" <<'PY' || fail "the plot's peak, RSS panel or legend is not what was expected"
import sys, xml.etree.ElementTree as E
S = '{http://www.w3.org/2000/svg}'
root = E.parse(sys.argv[1]).getroot()
marks = [g for g in root.iter(S + 'g') if g.get('class') == 'peakmark']
assert len(marks) == 1, len(marks)
assert [t.text for t in marks[0].iter(S + 'text')] == ['highest sampled 5.37 KiB at 1.500 s'], [t.text for t in marks[0].iter(S + 'text')]
assert marks[0].find(S + 'title').text == "highest sampled 5.37 KiB at 1.500 s (5500 bytes, the whole tree's highest point)"
assert int(root.get('width')) >= 730 + 230
panels = [g for g in root.iter(S + 'g') if g.get('class') == 'panel']
assert [next(g.iter(S + 'text')).text for g in panels] == ['live bytes (memlive)', 'resident bytes (RSS)',
    'bytes allocated (memtot)', 'allocations (ncalls)'], [next(g.iter(S + 'text')).text for g in panels]
rss = panels[1]
assert sum(1 for _ in rss.iter(S + 'polyline')) == 3, 'the tree and two processes'
titles = [t.text for t in rss.iter(S + 'title')]
assert 'whole tree at 1.500 s: 5.05 MiB (%s)' % sys.argv[2] in titles, titles
PY
echo "  ok: the plot marks the tree's highest sampled point: 5.37 KiB at 1.500 s; an RSS panel"
# a long name: the legend widens for it, up to 90 characters, then cut
# with "..." (its tooltip has it whole)
sqlite3 ticks.db "UPDATE process SET exe = '/usr/bin/' || printf('%.120c', 'x') WHERE pid = 101"
"$MPQ" timeline ticks.db -o long.svg || fail "timeline -o long.svg failed"
python3 - long.svg <<'PY' || fail "the legend of a long name is cut"
import sys, xml.etree.ElementTree as E
S = '{http://www.w3.org/2000/svg}'
root = E.parse(sys.argv[1]).getroot()
names = [t for t in root.iter(S + 'text') if t.find(S + 'title') is not None]
long = [t for t in names if t.find(S + 'title').text == '101 ' + 'x' * 120]
assert long and long[0].text == '101 ' + 'x' * 85 + '\u2026', long and long[0].text
w = int(root.get('width'))
assert w >= 730 + 42 + 7 * 91, w
PY
echo "  ok: the legend widens for a long name (cut after 90 characters, whole in its tooltip)"
# A peak between two points (tests/progs/peak_phases: ticks at 2.87 MiB
# and 0, its peak snapshot 7.77 MiB between them): the live bytes lines,
# the process's and the tree's, pass through its peak snapshot, as the
# stacks' do; before, they joined the ticks and the peak's diamond and
# ring stood 5 MiB above every line.
MP_QUIET=1 profile pp.db $B/tests/peak_phases >/dev/null || fail "peak_phases failed"
"$MPQ" timeline pp.db -o pp.svg || fail "timeline -o pp.svg failed"
python3 - pp.svg <<'PY' || fail "a live bytes line does not pass through the peak snapshot"
import sys, xml.etree.ElementTree as E
S = '{http://www.w3.org/2000/svg}'
root = E.parse(sys.argv[1]).getroot()
live = [g for g in root.iter(S + 'g') if g.get('class') == 'panel'][0]
peaks = [p for p in live.iter(S + 'polygon') if p.get('class') == 'peak']
assert peaks, 'no peak diamond'
lines = [[tuple(map(float, xy.split(','))) for xy in l.get('points').split()] for l in live.iter(S + 'polyline')]
for p in peaks:
    pts = [tuple(map(float, xy.split(','))) for xy in p.get('points').split()]
    cx, cy = sum(x for x, _ in pts) / 4, sum(y for _, y in pts) / 4
    on = sum(1 for l in lines if any(abs(x - cx) < 0.15 and abs(y - cy) < 0.15 for x, y in l))
    assert on >= 2, (cx, cy, on, len(lines))     # the process's line and the tree's
PY
echo "  ok: the live bytes lines pass through a peak between two points"
