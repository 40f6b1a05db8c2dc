# The peak, named and printed alike in every view (mpquery/README.md,
# "Peaks"), on tests/progs/peak_mix.c: its process peak is 8,000,000 bytes
# (keep_a 3,000,000 + keep_b 4,000,000 + big_d 1,000,000, captured exactly:
# big_d's block is larger than the capture step), its stacks' own peaks
# add up to 12,000,000 (spike_c's 4,000,000 came later). info, report and
# timeline print the process peak as "peak", the same figure as top
# --snapshot peak --by memlive's total and the database's totals row at
# the peak snapshot; top --by maxlive's total is named a sum of stacks'
# peaks; info's maximum of the ticks is named "highest sampled". The
# report's plot (timeline's) shows the stacks that held the most at the
# peak, top --snapshot peak --by memlive's. In chromium (when installed):
# the report's peak line as rendered.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"
page() { python3 "$ROOT/tests/lib/report_page.py" "$@" || fail "cannot read $1: $*"; }
MP_QUIET=1 profile p.db "$B/tests/peak_mix" || fail "peak_mix failed"
db_peak=$(q p.db "SELECT t.memlive FROM totals t JOIN snapshot s ON s.id = t.snapshot WHERE s.reason = 'peak' AND t.thread = 0 ORDER BY s.id DESC LIMIT 1")
db_time=$(q p.db "SELECT printf('%.3f', s.time - p.start_time) FROM snapshot s JOIN process p ON p.id = s.process WHERE s.reason = 'peak' ORDER BY s.id DESC LIMIT 1")
top_total=$("$MPQ" top p.db --snapshot peak --by memlive --bytes | sed -n 2p | awk '{print $2}')

# info: the totals' peak line and the process's, text and json; the same
# figure as the database's and top --snapshot peak's
assert_eq "$("$MPQ" info p.db --bytes | grep '^  peak ') / $db_peak / $top_total" \
    "  peak    8000000 bytes: the process peak (its maxlive; its peak snapshot holds as much) / 8000000 / 8000000" \
    "info: the process peak, named so: the database's and top --snapshot peak --by memlive's total"
assert_eq "$("$MPQ" info p.db | grep '^  peak:')" "  peak: 7.63 MiB at +$db_time""s, the live bytes at its peak snapshot (seq 3)" \
    "info: the process's peak, when"
json=$("$MPQ" info p.db --format json)
assert_eq "$(json_get "$json" "j['peak'], j['processes'][0]['peak']['bytes'], j['processes'][0]['peak']['snapshot'], '%.3f' % j['processes'][0]['peak']['time']")" \
    "(8000000, 8000000, 3, '$db_time')" "info json: the peak"
assert_match "$("$MPQ" info p.db | grep 'memory over time')" "; highest sampled memlive [0-9.]+ [KM]i?B at \\+[0-9.]+s, highest sampled RSS " \
    "info: the ticks' maximum named as sampled, not as the peak"

# top --by maxlive: a sum of the stacks' own peaks, not the process peak
assert_eq "$("$MPQ" top p.db --by maxlive --bytes | sed -n 2p | sed 's/  */ /g')" \
    " 6001 12000000 100.0 (sum of 4 stacks' own peaks, in 4 rows)" "top --by maxlive: its total is a sum of peaks"
assert_eq "$("$MPQ" top p.db --functions --by maxlive --bytes | sed -n 2p | grep -o '(sum of [0-9]* functions.*')" \
    "(sum of 4 functions' own peaks)" "top --functions --by maxlive: the same"

# timeline: one process, its plot marks its peak snapshot with info's figure
"$MPQ" timeline p.db --stacks 3 -o p.svg || fail "timeline -o p.svg failed"
mark=$(python3 - p.svg <<'PY'
import sys, xml.etree.ElementTree as E
S = '{http://www.w3.org/2000/svg}'
root = E.parse(sys.argv[1]).getroot()
marks = [g for g in root.iter(S + 'g') if g.get('class') == 'peakmark']
print(len(marks), [t.text for t in marks[0].iter(S + 'text')][0], marks[0].find(S + 'title').text)
PY
)
assert_eq "$mark" "1 peak snapshot 7.63 MiB at $db_time s peak snapshot 7.63 MiB at $db_time s (8000000 bytes, the peak snapshot)" \
    "timeline: the plot's mark is the peak snapshot, at its time"
tl_stacks=$("$MPQ" timeline p.db --stacks 3 --format csv | head -n 1 | tr , '\n' | sed -n 's/^stack_//p' | paste -sd' ')
top_stacks=$("$MPQ" top p.db --snapshot peak --by memlive --format json | python3 -c 'import json, sys; print(" ".join(str(r["stack"]) for r in json.load(sys.stdin)[:3]))')
assert_eq "$tl_stacks" "$top_stacks" "timeline --stacks 3: top --snapshot peak --by memlive's stacks (keep_b, keep_a, big_d)"

# report: its overview is info's text, its plot timeline --stacks 3's (the
# peak snapshot marked, the stacks held at the peak)
"$MPQ" report p.db -o p.html 2>/dev/null || fail "report failed"
assert_eq "$(page p.html pre overview | grep -e '^  peak ' -e '^  peak:')" "$("$MPQ" info p.db | grep -e '^  peak ' -e '^  peak:')" \
    "report: the overview's peak lines are info's"
assert_eq "$(page p.html picture overview)" "$(cat p.svg)" "report: its plot is timeline --stacks 3's: its mark and stacks above"
if ! sh "$ROOT/tests/lib/deps.sh" chromium >deps.log 2>&1 || ! command -v chromium >/dev/null; then
    echo "SKIP: chromium not installed: $(tail -n 1 deps.log)"
    exit 0
fi
timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" --enable-logging=stderr --v=0 \
    --dump-dom "file://$T/p.html" >p.dom.html 2>chrome.err || fail "chromium failed: $(tail -n 3 chrome.err)"
grep -E 'Uncaught|CONSOLE' chrome.err && fail "JavaScript errors: $(cat chrome.err)"
assert_eq "$(page p.dom.html pre overview | grep '^  peak:')" "  peak: 7.63 MiB at +$db_time""s, the live bytes at its peak snapshot (seq 3)" \
    "chromium: the overview's peak rendered"
