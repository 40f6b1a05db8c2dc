# mpquery report's resident memory section (serve's /rss view) on the
# ledger fixture (tests/lib/fixtures/ledger.sql): per process, the ledger
# at the selected snapshot, mpquery rss's rows (cut at -n rows, said in
# the table); the nav links to it. A profile without a ledger: no section,
# no link. In chromium (when installed): rendered, no JavaScript error.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
page() { python3 "$ROOT/tests/lib/report_page.py" "$@" || fail "cannot read $1: $*"; }
csv_rows() { "$MPQ" "$@" --format csv | python3 -c 'import csv, sys; [print("|".join(r)) for r in csv.reader(sys.stdin)]'; }
fixture ledger >/dev/null
"$MPQ" report ledger.db -o l.html 2>/dev/null || fail "report failed"
assert_eq "$(page l.html refs)$(page l.html addresses)$(page l.html balance)" "" "self-contained, every element closed"
assert_eq "$(grep -o '<a href="#rss">Resident memory</a>' l.html)" '<a href="#rss">Resident memory</a>' "the nav links to the section"
rss_size=$("$MPQ" rss ledger.db --pid 10 --format csv | awk -F, '$3 == "rss" {print $6}')
assert_eq "$(page l.html table rss | sed -n '1,21p')" "$(csv_rows rss ledger.db -n 20 | sed -n '1,21p')" \
  "the section is mpquery rss's rows, the first 20"
assert_eq "$(page l.html table rss | grep '^10|2|rss|')" "10|2|rss||8000000|$rss_size|100.00" \
  "pid 10's rss row at its last snapshot: 8000000 resident, its virtual size ($rss_size bytes)"
assert_eq "$(page l.html table rss | tail -n 1)" "the first 20 rows of 25: mpquery serve shows them all" "the rows cut said"
assert_eq "$(page l.html table rss | sed '1d;$d' | cut -d'|' -f1,2 | sort -u | tr '\n' ,)" "10|2,11|1," \
  "a ledger per process, at its selected (last) snapshot"
"$MPQ" report ledger.db --snapshot 1 -o l1.html 2>/dev/null || fail "report --snapshot 1 failed"
assert_eq "$(page l1.html table rss | sed -n 2p)" "10|1|heap live||800000|800000|13.33" "--snapshot 1: that snapshot's ledger"
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
assert_eq "$(page l.dom.html table rss | grep '^10|2|rss|')" "10|2|rss||8000000|$rss_size|100.00" "chromium: the rss row rendered"
