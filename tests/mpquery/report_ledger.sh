# mpquery report's resident memory section (report_ledger.c) on the
# ledger fixture (tests/lib/fixtures/ledger.sql): per process, the ledger
# at the selected snapshot as a stacked bar (a segment per line with
# resident bytes, in the ledger's order, its title the line and size) and
# a table, and its lines over the snapshots (stacked areas, the rss line);
# the nav links to it. A profile without a ledger: no section, no link.
# In chromium (when installed): rendered, no JavaScript error.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
page() { python3 "$ROOT/tests/lib/report_page.py" "$@" || fail "cannot read $1: $*"; }
fixture ledger >/dev/null
"$MPQ" report ledger.db -o l.html 2>/dev/null || fail "report failed"
assert_eq "$(page l.html refs)$(page l.html addresses)$(page l.html balance)" "" "self-contained, every element closed"
assert_eq "$(grep -o '<a href="#rss">Resident memory</a>' l.html)" '<a href="#rss">Resident memory</a>' "the nav links to the section"
assert_eq "$(grep -o '<h3>pid [^<]*</h3>' l.html)" "<h3>pid 10 /bin/app, snapshot 2 (exit)</h3>
<h3>pid 11 /bin/helper, snapshot 1 (exit)</h3>" "a ledger per process, the largest rss first"
bar=$(sed -n '/<svg class="ledger-bar"/,/<\/svg>/p' l.html | head -n 12 | grep -o 'data-line="[^"]*"\|<title>[^<]*</title>' | paste -d' ' - -)
assert_eq "$bar" 'data-line="heap live" <title>heap live: 684 KiB</title>
data-line="heap overhead" <title>heap overhead: 48.8 KiB</title>
data-line="heap free" <title>heap free: 244 KiB</title>
data-line="mmap anonymous" <title>mmap anonymous: 2.00 MiB</title>
data-line="mmap file" <title>mmap file: 512 KiB</title>
data-line="thread stacks" <title>thread stacks: 128 KiB</title>
data-line="modules" <title>modules: 2.86 MiB</title>
data-line="profiler" <title>profiler: 977 KiB</title>
data-line="unexplained" <title>unexplained: 242 KiB</title>' "pid 10's bar: a segment per line, in order"
widths=$(sed -n '/<svg class="ledger-bar"/,/<\/svg>/p' l.html | head -n 11 | sed -n 's/.* width="\([0-9.]*\)" height="26" fill.*/\1/p' | paste -sd+ | bc)
assert_eq "$(echo "$widths > 799.5 && $widths < 800.5" | bc)" 1 "the segments fill the bar ($widths of 800)"
assert_eq "$(grep -c '<svg class="ledger-time"' l.html)" 1 "over time: pid 10's two snapshots (pid 11 has one: no plot)"
assert_eq "$(sed -n '/<svg class="ledger-time"/,/<\/svg>/p' l.html | grep -c '<polygon data-line=')" 9 "over time: an area per line"
assert_match "$(sed -n '/<svg class="ledger-time"/,/<\/svg>/p' l.html | grep '<polyline data-line="rss"')" 'points="60.0,[0-9.]+ 790.0,10.0 "' "over time: the rss line, up to the top"
# the rss row's size is the process's virtual size, as mpquery rss has it
# (not 0); the note says why the profiler's resident bytes can exceed its size
rss_size=$("$MPQ" rss ledger.db --pid 10 --format csv | awk -F, '$3 == "rss" {print $6}')
assert_eq "$(page l.html table rss 0 | grep '^rss|')" "rss|7.63 MiB=8000000|100.0%=8000000 of 8000000|49.6 MiB=$rss_size" \
    "the rss row: its size ($rss_size bytes, mpquery rss's)"
assert_match "$(page l.html text rss)" \
    "The profiler's resident bytes can exceed its size: its size counts the memory it maps for itself" \
    "the note: why the profiler's resident bytes can exceed its size"
"$MPQ" report ledger.db --snapshot 1 -o l1.html 2>/dev/null || fail "report --snapshot 1 failed"
assert_eq "$(grep -o '<h3>pid [^<]*</h3>' l1.html | head -n 1)" "<h3>pid 10 /bin/app, snapshot 1 (interval)</h3>" "--snapshot 1: that snapshot's ledger"
fixture basic >/dev/null
"$MPQ" report basic.db -o b.html 2>/dev/null || fail "report failed"
assert_eq "$(grep -c 'id="rss"\|#rss' b.html)" 0 "no ledger: no section, no link"
if ! sh "$ROOT/tests/lib/deps.sh" chromium >deps.log 2>&1 || ! command -v chromium >/dev/null; then
    echo "SKIP: chromium not installed: $(tail -n 1 deps.log)"
    exit 0
fi
timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" --enable-logging=stderr --v=0 \
    --dump-dom "file://$T/l.html#rss" >l.dom.html 2>chrome.err || fail "chromium failed: $(tail -n 3 chrome.err)"
grep -E 'Uncaught|CONSOLE' chrome.err && fail "JavaScript errors: $(cat chrome.err)"
assert_eq "$(page l.dom.html table rss 0 | grep '^rss|')" "rss|7.63 MiB=8000000|100.0%=8000000 of 8000000|49.6 MiB=$rss_size" \
    "chromium: the rss row's size rendered"
assert_eq "$(grep -c "<rect data-line=" l.dom.html)" 14 "chromium: the bars' segments in the document (9, and pid 11's 5 lines with resident bytes)"
