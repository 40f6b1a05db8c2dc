#!/bin/bash
# mpquery report: one self-contained HTML page made of mpquery serve's
# views (read back with python3's html.parser, tests/lib/report_page.py):
# nothing outside it (its pictures data: URLs), every element closed, every
# link to a section of the page; each section the figures of the command
# its view runs (the overview is info's text, its plot timeline's SVG, the
# stacks top's rows, the functions top --functions', the leaks leaks'),
# for the basic fixture, a selection (--thread) and two recorded programs
# (alloc_functions: one process; timeline_steps: two, with peak
# snapshots); a flame graph per counter; what it cuts said, and the
# mpquery serve command; hostile names escaped; errors. Where Debian's
# chromium can be installed, the page renders without a JavaScript error
# and a screenshot of the demo's report is left for people to see.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null

# page FILE REQUEST...: see report_page.py
page() { python3 "$ROOT/tests/lib/report_page.py" "$@" || fail "cannot read $1: $*"; }
# csv_rows CMD...: a command's CSV as the page's table rows (cells joined by '|')
csv_rows() { "$MPQ" "$@" --format csv | python3 -c 'import csv, sys; [print("|".join(r)) for r in csv.reader(sys.stdin)]'; }
# links FILE: every in-page link whose target is not in the page
links() { python3 - "$1" <<'EOF'
import re, sys
s = open(sys.argv[1], encoding='utf-8').read()
ids = set(re.findall(r'\bid="([^"]+)"', s))
for h in sorted(set(re.findall(r'href="#([^"]*)"', s)) - ids):
    print('#' + h)
EOF
}

"$MPQ" report basic.db -o basic.html >out.txt 2>&1 || fail "mpquery report failed: $(cat out.txt)"
assert_eq "$(sed -E 's/\([0-9.]+ KiB\)/(N KiB)/' out.txt)" "mpquery: wrote basic.html (N KiB)" "-o FILE: one line on stderr says what it wrote"
assert_eq "$(page basic.html refs)" "" "nothing outside the page: no src but data:, no href but #, url(), @import, loading element"
assert_eq "$(page basic.html addresses)" "" "no address at all: no http(s):, file://, //host/ (the plot's SVG namespace is inside its data: URL)"
assert_eq "$(page basic.html balance)" "" "every element closed"
assert_eq "$(links basic.html)" "" "every link is to a section of the page"
assert_eq "$(head -c 15 basic.html)" "<!DOCTYPE html>" "an HTML5 document"
assert_eq "$(grep -c '<script' basic.html)" 0 "no script: the page reads as it is"
assert_eq "$(page basic.html ids | paste -sd' ')" \
  "overview flame flame-memtot flame-ncalls flame-memlive flame-maxlive top top-memtot top-ncalls top-memlive top-maxlive functions functions-memtot-self functions-memtot-inclusive functions-ncalls-self functions-ncalls-inclusive functions-memlive-self functions-memlive-inclusive functions-maxlive-self functions-maxlive-inclusive tree bottomup leaks temporaries hist threads serve" \
  "the sections: serve's views (no ledger, no peak snapshot in the fixture: no rss, no peak), a part per counter"

# the overview: info's text (the totals, with the 8 calls, 63 bytes without a
# stack; the threads' totals), and timeline's plot
assert_eq "$(page basic.html pre overview)" "$("$MPQ" info basic.db)" "the overview is mpquery info's text"
assert_match "$(page basic.html pre overview)" $'\n  ncalls  50 allocations \\(8 without a stack\\)\n  memtot  8.20 KiB allocated \\(63 B without a stack\\)\n' \
  "... its totals"
assert_match "$(page basic.html pre overview)" $'\n    101  worker      21  2.05 KiB     20      1     100 B     500 B\n' "... the threads' totals"
assert_eq "$(page basic.html picture overview)" "$("$MPQ" timeline basic.db --format svg --stacks 3)" \
  "the plot is mpquery timeline --stacks 3's SVG"
assert_eq "$(page basic.html picture overview | grep -o '<title>#[0-9]* [^<]* at [^<]*' | sed 's/.*#//' | tr '\n' ,)" \
  "8 parse(std::string const&amp;) at 2.500 s: 3.03 KiB (3100),18 parse(std::string const&amp;) at 2.500 s: 100 B (100),13 foo(int) at 2.500 s: 30 B (30)," \
  "the plot: the 3 stacks that held the most (no peak snapshot: at the last), named as the views name them (the rules drop malloc)"

# stacks: mpquery top's rows for each counter
assert_eq "$(page basic.html table top-memtot)" \
"ncalls|memtot|nfree|nlive|memlive|maxlive|ntemp|stack|stacks|where
6|5100|2|4|3100|3100|0|8|1|parse(std::string const&) < main
20|2000|20|0|0|400|0|11|1|std::vector<int>::push_back(int const&) < main
10|1000|10|0|0|300|0|5|1|helper < load < main
2|200|1|1|100|150|0|18|1|parse(std::string const&) < parse(std::string const&) < main
3|30|0|3|30|30|0|13|1|foo(int) < main
1|7|1|0|0|7|0|15|1|app+0x999 < main" "stacks by memtot: every counter (B's two threads summed), the path leaf first"
for by in ncalls memlive maxlive; do
    assert_eq "$(page basic.html table top-$by)" "$(csv_rows top basic.db --by $by -n 20)" "stacks by $by: mpquery top --by $by's rows"
done
assert_eq "$(page basic.html table top-memlive | sed 1d | cut -d'|' -f5,8 | tr '\n' ,)" "3100|8,100|18,30|13," \
  "stacks by memlive: only the three with live bytes"

# functions: self (the leaf after rules) and inclusive (anywhere, recursion once)
assert_eq "$(page basic.html table functions-memtot-inclusive | sed 1d | cut -d'|' -f2,9,15)" \
"0|8337|main
5300|5300|parse(std::string const&)
2000|2000|std::vector<int>::push_back(int const&)
1000|1000|helper
0|1000|load
30|30|foo(int)
7|7|app+0x999" "functions by inclusive memtot: main 8337 (0 self), parse 5300 (its recursion once)"
assert_eq "$(page basic.html table functions-ncalls-self)" "$(csv_rows top basic.db --functions --by ncalls -n 20)" \
  "functions by self ncalls: mpquery top --functions' rows"

# leaks: as mpquery leaks (B 4 blocks 3100 bytes, F 1 100, D 3 30)
assert_eq "$(page basic.html table leaks)" \
"blocks|bytes|stack|stacks|where
4|3100|8|1|parse(std::string const&) < main
1|100|18|1|parse(std::string const&) < parse(std::string const&) < main
3|30|13|1|foo(int) < main" "leaks: mpquery leaks' rows, largest bytes first"

# flame graphs: one per counter, the frames wider than --min-width
assert_eq "$(page basic.html flames)" \
"flame-memtot 9 8337 all,main,app+0x999,foo(int),load,parse(std::string const&),std::vector<int>::push_back(int const&),helper,parse(std::string const&)
flame-ncalls 9 42 all,main,app+0x999,foo(int),load,parse(std::string const&),std::vector<int>::push_back(int const&),helper,parse(std::string const&)
flame-memlive 5 3230 all,main,foo(int),parse(std::string const&),parse(std::string const&)
flame-maxlive 9 3987 all,main,app+0x999,foo(int),load,parse(std::string const&),std::vector<int>::push_back(int const&),helper,parse(std::string const&)" \
  "flame graphs of memtot, ncalls, memlive and maxlive: every frame, breadth first"
assert_match "$(page basic.html text flame-memtot)" "9 frames: those at least 0.50 px wide of 1200\. mpquery serve zooms, searches and draws the rest\.$" \
  "a graph says what it draws and where the rest is"
assert_match "$(page basic.html text top-memtot)" "At most 20 rows: mpquery serve shows more\.$" "a table says where the other rows are"
assert_eq "$(page basic.html text serve)" \
  "More in mpquery serve This page is at most 5 MiB: its tables show their first 20 rows, its flame graphs the frames at least 0.50 px wide within 999 KiB each (the deepest cut first), the trees their first level. mpquery serve shows the same views over the whole profile, read on demand: every row, every frame (zoom, search, the reversed graph), the trees' deeper levels, a function's callers and callees, the source lines, time ranges, the diff of two profiles: mpquery serve basic.db" \
  "the last section: the bound, what is cut, the serve command"
"$MPQ" report basic.db -n 2 --min-width 300 -o cut.html -q || fail "report -n 2 --min-width 300 failed"
assert_eq "$(page cut.html table top-memtot | sed 1d | cut -d'|' -f8 | tr '\n' ,) $(page cut.html flames | sed -n 1p)" \
  "8,11, flame-memtot 3 8337 all,main,parse(std::string const&)" "-n 2: two rows; --min-width 300: the frames at least 300 px of 1200"
assert_match "$(page cut.html table threads | tail -n 1)" "^the first 2 rows of 6: mpquery serve shows them all$" "a table cut in the page says so"

# a selection: the worker thread (a name pattern)
"$MPQ" report basic.db --thread 'work.*' -o worker.html || fail "report --thread failed"
assert_eq "$(page worker.html table top-memtot | sed 1d | cut -d'|' -f1,2,8 | tr '\n' ,)" "20|2000|11,1|100|8," "--thread: the worker's stacks"
assert_eq "$(page worker.html table threads | sed 1d | cut -d'|' -f1 | sort -u)" "worker (tid 101)" "--thread: its thread alone"
assert_match "$(page worker.html text selection)" "^basic.db · thread work\.\* · mpquery " "the selection said under the title"
"$MPQ" report basic.db --pid 100 --exe app -o app.html -q || fail "report --pid --exe failed"
assert_match "$(page app.html text selection)" "· pid 100 · exe app · mpquery " "--pid and --exe said under the title"

# --title escaped, stdout when it is not a terminal
"$MPQ" report basic.db --title 'a <b> & "c"' >title.html || fail "report to stdout failed"
assert_eq "$(grep -o '<title>[^<]*</title>' title.html | head -n 1) $(grep -o '<h1>[^<]*</h1>' title.html)" \
  '<title>a &lt;b&gt; &amp; &quot;c&quot;</title> <h1>a &lt;b&gt; &amp; &quot;c&quot;</h1>' "--title escaped"

# hostile names: markup, a script's end, control characters, invalid UTF-8
printf '%s\n' $'100,1000,0,100,100\tmain\t</script><script>alert(1)</script>' $'5,50,0,5,5\tmain\t<img src=http://x/y.png>' \
    $'1,5,0,5,5\tmain\tctl\\x3b\\t\\rend' | stacks_db hostile.db
sqlite3 hostile.db "UPDATE function SET name = CAST(X'62616401FF78EFBFBE' AS TEXT) WHERE name LIKE 'ctl%'" \
  || fail "cannot write the bad name"
"$MPQ" report hostile.db -o hostile.html || fail "report on hostile names failed"
assert_eq "$(page hostile.html refs)" "" "hostile names: nothing outside the page (an address in a name is text)"
assert_eq "$(page hostile.html balance)" "" "hostile names: every element closed"
assert_eq "$(grep -c '<script' hostile.html)" 0 "hostile names: no script element"
assert_eq "$(page hostile.html table top-memtot | sed 1d | cut -d'|' -f10)" \
  "</script><script>alert(1)</script> < main
<img src=http://x/y.png> < main
bad �x� < main" \
  "hostile names: shown as text (a control character as a space, invalid UTF-8 and U+FFFE as U+FFFD)"

# recorded: alloc_functions.c's exact values (see its comment)
profile af.db "$B/tests/alloc_functions" >/dev/null 2>&1
"$MPQ" report af.db -o af.html || fail "report on a recorded profile failed"
assert_eq "$(page af.html refs)$(page af.html addresses)$(links af.html)" "" "alloc_functions: nothing outside the page, no address, links in it"
assert_eq "$(page af.html pre overview)" "$("$MPQ" info af.db)" "alloc_functions: the overview is info's"
assert_match "$(page af.html pre overview)" $'\n  ncalls  1162 allocations \\(0 without a stack\\)\n  memtot  153 KiB allocated' "alloc_functions: its totals"
assert_eq "$(page af.html table functions-memtot-self | sed 1d | awk -F'|' '{ print $2 "|" $1 "|" $NF }')" \
"100000|1000|do_malloc
21000|20|do_realloc
10000|50|do_calloc
7680|30|do_posix_memalign
7000|7|do_leak
5120|40|do_aligned_alloc
5120|10|do_memalign
500|5|do_valloc" "alloc_functions: its functions, self memtot and ncalls"
assert_eq "$(page af.html table leaks | sed 1d | cut -d'|' -f1,2,5)" "7|7000|do_leak < main" "alloc_functions: the leak's stack"
af_peak=$(q af.db "SELECT t.memlive FROM totals t JOIN snapshot s ON s.id = t.snapshot WHERE s.reason = 'peak' AND t.thread = 0 ORDER BY s.id DESC LIMIT 1")
assert_eq "$(page af.html flames | awk '$1 != "flame-maxlive" {print $1, $3}' | tr '\n' ,)" \
  "flame-memtot 156420,flame-ncalls 1162,flame-memlive 7000,flame-peak $af_peak," \
  "alloc_functions: the graphs' totals, and the live bytes at the peak snapshot ($af_peak)"
assert_eq "$(page af.html table peak)" "$(csv_rows top af.db --snapshot peak --by memlive -n 20)" "alloc_functions: the peak's stacks, top --snapshot peak's"

# two processes, their peaks (tests/progs/timeline_steps.c)
MP_QUIET=1 profile ts.db "$B/tests/timeline_steps" || fail "timeline_steps failed"
child=$(q ts.db "SELECT pid FROM process WHERE ppid IN (SELECT pid FROM process)")
"$MPQ" report ts.db -o ts.html || fail "report on two processes failed"
assert_eq "$(page ts.html pre overview)" "$("$MPQ" info ts.db)" "two processes: the overview is info's (both processes, their totals and peaks)"
assert_eq "$(page ts.html flames | awk '{print $1, $4}' | grep -e memlive -e peak | tr '\n' ,)" \
  "flame-memlive all,main,child_work,grow_b,flame-peak all,main,child_work,grow_a,grow_b," \
  "memlive at exit (grow_a freed) and at the peaks (grow_a still live)"
"$MPQ" report ts.db --pid "$child" --snapshot label:child -o child.html || fail "report --pid --snapshot failed"
assert_eq "$(page child.html table top-memtot | sed 1d | cut -d'|' -f1,2 | paste -sd+ | tr '|' ' ')" "500 1000000" \
  "--pid CHILD --snapshot label:child: the child's 500 calls, 1000000 bytes"

# -n 0: every row (within the page's bound); the selection and display
# options are the views' own: each table is the command's with them
"$MPQ" report basic.db -n 0 -o all.html -q || fail "report -n 0 failed"
all=$(csv_rows top basic.db -n 0)
[ "$(echo "$all" | wc -l)" -gt 3 ] || fail "basic.db has not more than 2 stacks: -n 0 cannot be told from -n 2"
assert_eq "$(page all.html table top-memtot)" "$all" "-n 0: every stack, as top -n 0"
assert_match "$(page all.html text serve)" "its tables show every row within [0-9]+ KiB each" "-n 0: the last section says the bound"
for opt in --lines --module --no-inline --no-default-rules --native; do
    "$MPQ" report basic.db $opt -o opt.html -q || fail "report $opt failed"
    assert_eq "$(page opt.html table top-memtot)" "$(csv_rows top basic.db $opt -n 20)" "$opt: top's rows with $opt"
    assert_eq "$(page opt.html table functions-ncalls-self)" "$(csv_rows top basic.db --functions --by ncalls $opt -n 20)" \
      "$opt: top --functions' rows with $opt"
    assert_match "$(page opt.html text selection)" "^basic.db · $opt · mpquery" "$opt: the page's selection says it"
done
"$MPQ" report ts.db --pid "$child" --image 1 -o image.html -q || fail "report --pid --image failed"
assert_eq "$(page image.html table top-memtot)" "$(csv_rows top ts.db --pid "$child" --image 1 -n 20)" \
  "--pid CHILD --image 1: top's rows of that image"
assert_match "$(page image.html text selection)" "pid $child .*image 1" "--image: the page's selection says it"
expect_fail 2 "^mpquery: ts.db: --image 1 needs --pid" "$MPQ" report ts.db --image 1 -o x.html

# errors: one line, exit 2 (1 for a file that cannot be written)
expect_fail 2 "^mpquery: basic.db: no peak snapshot in the selected processes" "$MPQ" report basic.db --snapshot peak -o x.html
expect_fail 2 "^mpquery: report: bad value 'x' for --min-width \(expected pixels, 0 to 1200\)" "$MPQ" report basic.db --min-width x
expect_fail 2 "^mpquery: report: bad value '-1' for -n \(expected a count \(0: all, within the page's 5 MiB\)\)" "$MPQ" report basic.db -n -1
expect_fail 2 '^mpquery: report: missing DB' "$MPQ" report -o x.html
expect_fail 2 '^mpquery: report: unknown option --by' "$MPQ" report basic.db --by ncalls
expect_fail 2 '^mpquery: nope.db: No such file or directory$' "$MPQ" report nope.db -o x.html
expect_fail 1 '^mpquery: no/such/dir/x.html: No such file or directory$' "$MPQ" report basic.db -o no/such/dir/x.html
for cols in 80 200; do
    assert_eq "$({ COLUMNS=$cols script -qec "$MPQ report basic.db" /dev/null; echo "rc=$?"; } | tr -d '\r')" \
"mpquery: report: the page is HTML: write it to a file with -o FILE.html, or to a pipe (see mpquery report --help)
rc=2" "a terminal ($cols columns): asks for -o FILE.html, exit 2"
done
expect_fail 2 '^mpquery: report: -o r.svg: report writes HTML \(\*\.html, \*\.htm\) \(see mpquery report --help\)$' \
  "$MPQ" report basic.db -o r.svg
[ ! -e r.svg ] || fail "report -o r.svg: no file"
"$MPQ" report basic.db -o page.htm -q >out.txt 2>&1 || fail "report -o page.htm -q failed"
assert_eq "$(cat out.txt)" "" "report -q: nothing said"
"$MPQ" report basic.db -o page >out.txt 2>&1 || fail "report -o page (no extension) failed"
assert_match "$(cat out.txt)" '^mpquery: wrote page \([0-9.]+ KiB\)$' "report -o NAME without an extension: HTML"
assert_match "$("$MPQ" --help)" 'report +the profile as one HTML page' "report in the command list"
assert_match "$("$MPQ" report --help)" 'example:' "report --help"

# in a browser: Debian's chromium, headless (skipped when it cannot be installed)
if ! sh "$ROOT/tests/lib/deps.sh" chromium >deps.log 2>&1 || ! command -v chromium >/dev/null; then
    echo "SKIP: chromium not installed: $(tail -n 1 deps.log)"
    exit 0
fi
chrome() { timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" --hide-scrollbars \
               --enable-logging=stderr --v=0 "$@" 2>chrome.err; }
chrome --dump-dom "file://$T/af.html#functions" >af.dom.html || fail "chromium failed: $(tail -n 3 chrome.err)"
grep -E 'Uncaught|CONSOLE' chrome.err && fail "JavaScript errors: $(cat chrome.err)"
assert_eq "$(page af.dom.html flames)" "$(page af.html flames)" "chromium: the graphs' frames and names in the document"
assert_eq "$(page af.dom.html table functions-memtot-self)" "$(page af.html table functions-memtot-self)" "chromium: the tables rendered"

# a screenshot of the demo's report, for people to look at
profile demo.db "$B/demos/request_loop" >/dev/null 2>&1 || fail "the demo failed"
"$MPQ" report demo.db -o demo.html || fail "report on the demo failed"
mkdir -p "$B/testlogs"
shot=$B/testlogs/mpquery_report.png
rm -f "$shot"
chrome --screenshot="$shot" --window-size=1280,2000 "file://$T/demo.html" || fail "chromium --screenshot failed"
assert_eq "$(python3 -c 'import struct, sys; d = open(sys.argv[1], "rb").read(24); print(d[:8] == b"\x89PNG\r\n\x1a\n", *struct.unpack(">II", d[16:24]))' "$shot")" \
  "True 1280 2000" "a screenshot of the demo's report, 1280 x 2000"
echo "# screenshot of the demo's report: $shot ($(wc -c <"$shot") bytes)"
