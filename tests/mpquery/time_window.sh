#!/bin/bash
# Time windows, --since and --until: the allocations made between two
# times, read from the snapshots (the counters at the last snapshot at or
# before --until less those at the last at or before --since), in top,
# fold, flame, leaks, timeline and diff. tests/progs/window_phases.c
# allocates in phases between snapshots "a", "b" and "c" (counts in its
# comment); a window from between a and b to between b and c is phase b
# exactly: 200 calls, 100000 bytes, 50 blocks freed and 75000 bytes still
# live of phase_b's stack, and 20 of phase_a's 1000-byte blocks freed
# (its memlive -20000: the window's net growth, as top --help says). The
# second source: the same differences computed by SQL from the sample
# rows (the newest row of each (stack, thread) at or before a snapshot)
# and from the totals rows. The forms users type, on the phases fixture
# (times known: snapshots at +0.5 s, a peak at +1 s, exit at +2 s).
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"
. "$ROOT/tests/lib/window_phases.sh"
echo "  snapshots a +$(at a) s, b +$(at b) s, c +$(at c) s: windows split at $AB and $BC"
# the phases' leaves, one value each: "phase_a N phase_b M ..."
leaves() { sed -n 's/^.*;\(phase_[abc]\) \(-\?[0-9]*\)$/\1 \2/p' | sort | paste -sd' '; }
fold() { "$MPQ" fold w.db "$@" 2>/dev/null | leaves; }

echo "# each phase's window: its calls and bytes exactly (fold)"
assert_eq "$(fold --by ncalls --until "$AB")" "phase_a 100" "start..a: phase a's 100 calls"
assert_eq "$(fold --by memtot --until "$AB")" "phase_a 100000" "start..a: its 100000 bytes"
assert_eq "$(fold --by ncalls --since "$AB" --until "$BC")" "phase_b 200" "a..b: phase b's 200 calls"
assert_eq "$(fold --by memtot --since "$AB" --until "$BC")" "phase_b 100000" "a..b: its 100000 bytes"
assert_eq "$(fold --by nfree --since "$AB" --until "$BC")" "phase_a 20 phase_b 50" "a..b: the frees made in it, of either phase's blocks"
assert_eq "$(fold --by memlive --since "$AB" --until "$BC")" "phase_b 75000" \
    "a..b: memlive, phase b's 150 blocks left (fold leaves out phase a's negative growth)"
# COUNTER of the stack whose leaf is LEAF over a window (top csv, every row with a free)
row() { local c=$1 leaf=$2; shift 2; "$MPQ" top w.db --by nfree -n 0 --format csv "$@" | python3 -c '
import csv, sys
print(sum(int(r[sys.argv[1]]) for r in csv.DictReader(sys.stdin) if r["where"].startswith(sys.argv[2] + " ")))' "$c" "$leaf"; }
assert_eq "$(row memlive phase_a --since "$AB" --until "$BC")" "-20000" "a..b: phase a's memlive -20000: its 20 blocks freed in the window (top)"
assert_eq "$(fold --by memtot --since "$BC")" "phase_c 30000" "b..end: phase c's 300 x 100 bytes"
assert_eq "$(fold --by memtot)" "phase_a 100000 phase_b 100000 phase_c 30000" "no window: everything"

echo "# the second source: the sample rows and the totals rows, by SQL"
# value of COUNTER of the stacks whose leaf (after malloc) is LEAF at the snapshot labelled LABEL
sql_at() {
    q w.db "SELECT COALESCE(SUM(sa.$1), 0) FROM sample sa JOIN stack_path sp ON sp.stack = sa.stack
            WHERE sp.leaf = '$2' AND sa.snapshot = (SELECT MAX(s2.snapshot) FROM sample s2
              JOIN snapshot n2 ON n2.id = s2.snapshot WHERE s2.stack = sa.stack AND s2.thread = sa.thread
              AND n2.reason != 'peak' AND n2.seq <= $(seq_of "$3"))"
}
for c in ncalls memtot nfree memlive; do
    for leaf in phase_a phase_b; do
        want=$(( $(sql_at $c $leaf b) - $(sql_at $c $leaf a) ))
        assert_eq "$(row $c $leaf --since "$AB" --until "$BC")" "$want" "$leaf's $c in a..b = its rows at b less at a"
    done
done
tot() { q w.db "SELECT t.$1 FROM totals t JOIN snapshot n ON n.id = t.snapshot WHERE t.thread = 0 AND n.label = '$2' AND n.reason = 'api'"; }
top_total() { "$MPQ" top w.db --since "$AB" --until "$BC" --by "$1" --format csv -n 0 | python3 -c '
import csv, sys; print(sum(int(r[sys.argv[1]]) for r in csv.DictReader(sys.stdin)))' "$1"; }
assert_eq "$(top_total ncalls)" "$(( $(tot ncalls b) - $(tot ncalls a) ))" "top's calls in a..b = the totals rows' difference"
assert_eq "$(top_total memtot)" "$(( $(tot memtot b) - $(tot memtot a) ))" "top's bytes in a..b = the totals rows' difference"

echo "# top, leaks, timeline, diff, flame over the window"
csv=$("$MPQ" top w.db --since "$AB" --until "$BC" --by memtot --format csv -n 1 2>&1)
assert_eq "$(json_get "$(printf '%s\n' "$csv" | python3 -c 'import csv,json,sys; print(json.dumps(list(csv.DictReader(sys.stdin))))')" \
    "[(r['ncalls'], r['memtot'], r['nfree'], r['nlive'], r['memlive']) for r in j]")" \
    "[('200', '100000', '50', '150', '75000')]" "top csv: phase b's row, no line on stderr"
err=$("$MPQ" top w.db --since "$AB" --until "$BC" 2>&1 >/dev/null)
assert_eq "$err" "mpquery: window $(printf "%+.3f" "$AB")..$(printf "%+.3f" "$BC") s: snapshots $(seq_of a) (+$(printf '%.3f' "$(at a)") s) to $(seq_of b) (+$(printf '%.3f' "$(at b)") s)" \
    "text: one line on stderr, the snapshots the ends were read at"
assert_eq "$("$MPQ" leaks w.db --since "$AB" --until "$BC" --format csv | cut -d, -f1,2,5)" "blocks,bytes,where
150,75000,phase_b < main" "leaks a..b: phase b's 150 blocks, 75000 bytes; phase a's freed blocks no leak"
tl=$("$MPQ" timeline w.db --since "$AB" --until "$BC" --format csv | awk -F, '$2 != 0' | cut -d, -f3,6-8)
assert_eq "$tl" "seq,ncalls,memtot,memlive
$(seq_of a),0,0,0
$(seq_of b),200,100000,55000" "timeline a..b: from snapshot a (0) to b: phase b's calls and bytes, memlive 75000 - 20000"
assert_eq "$("$MPQ" diff w.db w.db --a-until "$AB" --b-since "$AB" --b-until "$BC" --fold 2>/dev/null | sed -n 's/^.*;\(phase_[ab]\) /\1 /p' | sort | paste -sd,)" \
    "phase_a 100000 0,phase_b 0 100000" "diff --a-until --b-since --b-until: phase a against phase b"
"$MPQ" flame w.db --since "$AB" --until "$BC" -o w.svg 2>/dev/null || fail "flame over a window failed"
assert_match "$(grep -o 'phase_[abc][^<]*' w.svg | sort -u | paste -sd' ')" "phase_b" "flame a..b: phase b drawn"
assert_eq "$(grep -c 'phase_c' w.svg)" 0 "flame a..b: phase c (after the window) not drawn"

echo "# times as users type them"
all=$(fold --by memtot)
run_day=$(date -d "@${t0%.*}" '+%Y-%m-%d')
assert_eq "$(fold --by memtot --since 1h)" "$all" "--since 1h (an age): the whole run"
assert_eq "$(fold --by memtot --since "$(date -d "@$(( ${t0%.*} - 60 ))" '+%Y-%m-%d %H:%M')")" "$all" "--since 'YYYY-MM-DD HH:MM' a minute before: the whole run"
assert_eq "$(fold --by memtot --since "$run_day")" "$all" "--since YYYY-MM-DD (midnight): the whole run"
assert_eq "$(fold --by memtot --since "${t0%.*}")" "$all" "--since EPOCH-SECONDS: the whole run"
assert_eq "$(fold --by memtot --until +1h)" "$all" "--until +1h: the whole run"
expect_fail 2 "^mpquery: w\.db: window start\.\.-[0-9.]+ s: no snapshot in it \(the selected process's snapshots from \+[0-9.]+ to \+[0-9.]+ s; see mpquery info\)$" \
    "$MPQ" top w.db --until "$(date -d "@$(( ${t0%.*} - 86400 ))" '+%Y-%m-%d %H:%M:%S')"
fixture phases >/dev/null
p() { "$MPQ" fold phases.db --by "$1" "${@:2}" 2>/dev/null | tr '\n' ' '; }
assert_eq "$(p memtot --since +1 --until +2)" "main;grow 20000 main;outer;inner 4000 main;tiny 200 main;tiny2 50 " \
    "fixture --since +1 --until +2: snapshot 1 (+0.5) to 3 (+2), the peak at +1 aside"
assert_eq "$(p memtot --since +0.5)" "$(p memtot --since +1)" "--since +0.5: a snapshot at exactly since is the window's start"
assert_eq "$(p memtot --since 1000.5)" "$(p memtot --since +0.5)" "--since 1000.5 (epoch seconds) = +0.5"
assert_eq "$(p memtot --since '1970-01-01 00:16:40')" "$(p memtot)" "--since '1970-01-01 00:16:40' (the run's start, TZ=UTC) = everything"
assert_eq "$(p ncalls --until +1.5)" "main;grow 10 main;small 5 " "--until +1.5: snapshot 1"
assert_eq "$(p ncalls --until +1.5s)" "$(p ncalls --until +1500ms)" "+1.5s = +1500ms"
assert_eq "$("$MPQ" top phases.db --since +1 --until +2 2>&1 >/dev/null)" \
    "mpquery: window +1.000..+2.000 s: snapshots 1 (+0.500 s) to 3 (+2.000 s)" "the line on stderr, text"
assert_eq "$("$MPQ" top phases.db --until +1 2>&1 >/dev/null)" \
    "mpquery: window start..+1.000 s: from the process's start to snapshot 1 (+0.500 s)" "from the start"
assert_eq "$("$MPQ" top phases.db --since +1 --until +2 --format json 2>&1 >/dev/null)" "" "json: no line on stderr"

echo "# bad values and windows: one line, exit 2"
expect_fail 2 "^mpquery: phases\.db: window \+1\.500\.\.\+1\.900 s: no snapshot in it \(the selected process's snapshots from \+0\.500 to \+2\.000 s; see mpquery info\)$" \
    "$MPQ" top phases.db --since +1.5 --until +1.9
expect_fail 2 "^mpquery: phases\.db: window \+3\.000\.\.end s: no snapshot in it" "$MPQ" fold phases.db --since +3
for cmd in top fold flame leaks timeline "diff phases.db"; do
    expect_fail 2 "^mpquery: ${cmd%% *}: bad value 'yesterday' for --since \(expected \+S \(seconds from the run's start" \
        "$MPQ" $cmd phases.db --since yesterday
done
expect_fail 2 "^mpquery: top: bad value '\+abc' for --until" "$MPQ" top phases.db --until +abc
expect_fail 2 "^mpquery: top: bad value '\+-1' for --until" "$MPQ" top phases.db --until +-1
expect_fail 2 "^mpquery: top: bad value '2026-13-01' for --since" "$MPQ" top phases.db --since 2026-13-01
expect_fail 2 "^mpquery: diff: bad value 'x' for --a-since|^mpquery: diff: bad value 'x' for --since" "$MPQ" diff phases.db phases.db --a-since x
expect_fail 2 "^mpquery: phases\.db: --since \+2 is after --until \+1$" "$MPQ" top phases.db --since +2 --until +1
expect_fail 2 "^mpquery: phases\.db: --since and --until do not combine with --snapshot" "$MPQ" top phases.db --since +1 --snapshot 1
# --per-thread (and --group, tests/mpquery/group.sh): each (stack, thread)
# row's change over the window, +0.5 (since +1: the peak aside) to the exit
assert_eq "$("$MPQ" top phases.db --since +1 --per-thread --format csv | cut -d, -f1,3)" "thread,memtot
main (tid 300),20000
main (tid 300),200
main (tid 300),50
worker (tid 301),4000" "top --since +1 --per-thread: per thread, the window's rows"
echo "PASS"
