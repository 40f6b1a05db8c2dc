# mpquery timeline: memory over time from the snapshots.
# tests/progs/timeline_steps.c: the parent holds 1000000 bytes (snapshot
# "one"), 3000000 (snapshot "two"); its child holds 1000000 (snapshot
# "child") and exits; the parent frees grow_a's 1000000 and exits. The
# tree's rows: every process's latest totals at each moment, an ended
# process holding no live bytes any more.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"
MP_QUIET=1 profile t.db $B/tests/timeline_steps || fail "the program failed"
parent=$(q t.db "SELECT pid FROM process WHERE ppid NOT IN (SELECT pid FROM process)")
child=$(q t.db "SELECT pid FROM process WHERE ppid = $parent")
csv=$("$MPQ" timeline t.db --format csv --stacks 3)
norm() { sed -e "1s/^time,//" -e "s/^[0-9.]*,//" -e "s/^$parent,/P,/" -e "s/^$child,/C,/"; }
assert_eq "$(printf '%s\n' "$csv" | norm)" "pid,seq,reason,label,ncalls,memtot,memlive,maxlive,stack_$(q t.db "SELECT DISTINCT s.stack FROM sample s JOIN stack_path p USING (stack) WHERE p.leaf = 'grow_b'"),stack_$(q t.db "SELECT DISTINCT s.stack FROM sample s JOIN stack_path p USING (stack) WHERE p.leaf = 'child_work'")
P,2,api,one,1000,1000000,1000000,1000000,0,0
P,4,api,two,3000,3000000,3000000,3000000,2000000,0
P,5,exit,,3000,3000000,2000000,3000000,2000000,0
C,2,api,child,500,1000000,1000000,1000000,0,1000000
C,3,exit,,500,1000000,1000000,1000000,0,1000000
0,,,,1000,1000000,1000000,,0,0
0,,,,3000,3000000,3000000,,2000000,0
0,,,,3500,4000000,4000000,,2000000,1000000
0,,,,3500,4000000,4000000,,2000000,1000000
0,,,,3500,4000000,2000000,,2000000,0" \
    "csv: per process its snapshots (peaks aside), the tree at each moment, the two stacks that grew (grow_b, child_work)"
times=$(printf '%s\n' "$csv" | tail -n +2 | cut -d, -f1)
python3 - "$times" <<'PY' || fail "times: not relative seconds in order: $times"
import sys
t = [float(x) for x in sys.argv[1].split()]
procs, tree = t[:5], t[5:]
assert t[0] == 0.0 and procs[0] <= procs[1] <= procs[2] and procs[3] <= procs[4] <= procs[2]
assert tree == sorted(procs) and all(x < 60 for x in t)
PY
echo "  ok: times relative to the run's start, the tree's sorted"
json=$("$MPQ" timeline t.db --format json)
assert_eq "$(json_get "$json" "len(j['rows']), j['rows'][2]['memlive'], j['rows'][-1]['memlive'], j['rows'][-1]['pid']")" \
    "(10, 2000000, 2000000, 0)" "json: {\"rows\": [...]}"
# the plot: SVG by default when stdout is not a terminal
"$MPQ" timeline t.db --stacks 2 > plot.svg || fail "timeline failed"
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
