#!/bin/bash
# mpquery report: one self-contained HTML page (read back with python3's
# html.parser, tests/lib/report_page.py): no reference to
# anything outside it, every element closed; the summary's cards, the
# stack, function, leak, process and thread tables with exact values (in
# human units, the exact one in each cell's title) for the basic fixture,
# a selection (--thread) and two recorded programs (alloc_functions: one
# process; timeline_steps: two, with peak snapshots); a flame graph per
# counter; hostile names escaped; errors. Where Debian's chromium can be
# installed, the page runs in it: its script makes the flame graphs
# interactive and shows the tabs the address names, without a JavaScript
# error; and a screenshot of the demo's report is left for people to see.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null

# page FILE REQUEST...: see report_page.py
page() { python3 "$ROOT/tests/lib/report_page.py" "$@" || fail "cannot read $1: $*"; }

"$MPQ" report basic.db -o basic.html >out.txt 2>&1 || fail "mpquery report failed: $(cat out.txt)"
assert_eq "$(sed -E 's/\([0-9.]+ KiB\)/(N KiB)/' out.txt)" "mpquery: wrote basic.html (N KiB)" "-o FILE: one line on stderr says what it wrote"
assert_eq "$(page basic.html refs)" "" "nothing outside the page: no src, href but #, url(), @import, loading element"
assert_eq "$(page basic.html addresses)" "" "no address at all: no http(s):, file://, //host/ (not even the SVG namespace)"
assert_eq "$(page basic.html balance)" "" "every element closed"
assert_eq "$(head -c 15 basic.html)" "<!DOCTYPE html>" "an HTML5 document"
assert_eq "$(grep -c '<script>' basic.html) $(grep -c '</script' basic.html)" "1 1" "one inline script, no '</script' inside it"

# the summary: the totals row (with the 8 calls, 63 bytes without a stack)
assert_eq "$(page basic.html cards)" \
"processes|1|1|
threads|2|2|
duration|2.500 s||
allocations|50|50|50 calls
bytes allocated|8.20 KiB|8400|8400 bytes
frees|40|40|40 frees
still allocated|3.18 KiB|3260|3260 bytes
live blocks|10|10|10 blocks
peak live|4.88 KiB|5000|5000 bytes (no peak snapshot)
without a stack|8|8|8 calls, 63 bytes
stacks|6|6|with samples (the stack tree: 18 nodes)" "cards: the totals in human units, exact in the title and the note"

# stacks by memtot: mpquery top's rows (paths after the default rules)
assert_eq "$(page basic.html rows stacks memtot | sed 's/=stack [^|]*//')" \
"# The largest stacks by memtot (bytes allocated): 6 rows of 6 (6 stacks)
stack=the database id of the largest stack of the row (mpquery show DB ID)|ncalls|memtot|nfree|nlive|memlive|maxlive|ntemp|share|where (leaf first)
8|6=6|4.98 KiB=5100|2=2|4=4|3.03 KiB=3100|3.03 KiB=3100|0=0|61.2%=5100 of 8337|parse(std::string const&) < main=parse(std::string const&) / main
11|20=20|1.95 KiB=2000|20=20|0=0|0 B=0|400 B=400|0=0|24.0%=2000 of 8337|std::vector<int>::push_back(int const&) < main=std::vector<int>::push_back(int const&) / main
5|10=10|1000 B=1000|10=10|0=0|0 B=0|300 B=300|0=0|12.0%=1000 of 8337|helper < load < main=helper / load / main
18|2=2|200 B=200|1=1|1=1|100 B=100|150 B=150|0=0|2.4%=200 of 8337|parse(std::string const&) < parse(std::string const&) < main=parse(std::string const&) / parse(std::string const&) / main
13|3=3|30 B=30|0=0|3=3|30 B=30|30 B=30|0=0|0.4%=30 of 8337|foo(int) < main=foo(int) / main
15|1=1|7 B=7|1=1|0=0|0 B=0|7 B=7|0=0|0.1%=7 of 8337|app+0x999 < main=app+0x999 / main" \
  "stacks by memtot: every counter (B's two threads summed), the share, the path leaf first"
assert_eq "$(page basic.html rows stacks ncalls | sed -n '3,4p' | cut -d'|' -f1-3)" "11=stack 11: mpquery show DB 11|20=20|1.95 KiB=2000
5=stack 5: mpquery show DB 5|10=10|1000 B=1000" "stacks by ncalls: push_back's 20, then helper's 10"
assert_eq "$(page basic.html rows stacks memlive | sed 1,2d | cut -d'|' -f1,6 | tr '\n' ,)" \
  "8=stack 8: mpquery show DB 8|3.03 KiB=3100,18=stack 18: mpquery show DB 18|100 B=100,13=stack 13: mpquery show DB 13|30 B=30," \
  "stacks by memlive: only the three with live bytes"
assert_eq "$(page basic.html panes stacks | tr '\n' ,)" "memtot shown,ncalls shown,memlive shown,maxlive shown," \
  "a tab per counter (no ntemp, no time, no peak snapshot in the fixture), all shown without JavaScript"

# functions: self (the leaf after rules) and inclusive (anywhere, recursion once)
assert_eq "$(page basic.html rows functions memtot-inclusive | sed 1,3d | cut -d'|' -f1,2,9)" \
"0 B=0|8.14 KiB=8337|main=main
5.18 KiB=5300|5.18 KiB=5300|parse(std::string const&)=parse(std::string const&)
1.95 KiB=2000|1.95 KiB=2000|std::vector<int>::push_back(int const&)=std::vector<int>::push_back(int const&)
1000 B=1000|1000 B=1000|helper=helper
0 B=0|1000 B=1000|load=load
30 B=30|30 B=30|foo(int)=foo(int)
7 B=7|7 B=7|app+0x999=app+0x999" "functions by inclusive memtot: main 8337 (0 self), parse 5300 (its recursion once)"
assert_eq "$(page basic.html rows functions memtot-self | sed -n 1,3p)" \
"# The largest functions by self memtot (bytes allocated): 5 of 5
memtot|ncalls|memlive|maxlive|
self|inclusive|self|inclusive|self|inclusive|self|inclusive|function" "functions: self and inclusive of each counter"

# leaks: as mpquery leaks (B 4 blocks 3100 bytes, F 1 100, D 3 30)
assert_eq "$(page basic.html text leak-summary)" "8 leaked blocks (3.15 KiB) in 3 stacks: still allocated at exit." \
  "leaks: the summary"
assert_eq "$(page basic.html table leaks 0 | cut -d'|' -f1-4)" \
"stack|blocks|bytes|share
8=stack 8: mpquery show DB 8|4=4|3.03 KiB=3100|96.0%=3100 of 3230
18=stack 18: mpquery show DB 18|1=1|100 B=100|3.1%=100 of 3230
13=stack 13: mpquery show DB 13|3=3|30 B=30|0.9%=30 of 3230" "leaks: largest bytes first"

# processes and threads: the totals rows, names
assert_eq "$(page basic.html table threads 0)" \
"pid|ppid|command|threads|duration|ended|ncalls|memtot|nfree|nlive|memlive|maxlive|peak
100|1|app=app --x|2|2.500 s|no final snapshot|50=50|8.20 KiB=8400|40=40|10=10|3.18 KiB=3260|4.88 KiB=5000|-" \
  "the process: its totals row"
assert_eq "$(page basic.html table threads 1)" \
"pid|tid|name|ncalls|memtot|nfree|nlive|memlive|maxlive|share of memtot
100|100|main|29=29|6.15 KiB=6300|20=20|9=9|3.09 KiB=3160|3.91 KiB=4000|75.0%=6300 of 8400
100|101|worker|21=21|2.05 KiB=2100|20=20|1=1|100 B=100|500 B=500|25.0%=2100 of 8400" "the threads: named, their totals rows"

# flame graphs: one per counter, the frames of mpquery flame
assert_eq "$(page basic.html flames)" \
"flame-memtot- 9 8337 all,main,app+0x999,foo(int),load,helper,parse(std::string const&),parse(std::string const&),std::vector<int>::push_back(int const&)
flame-ncalls- 9 42 all,main,app+0x999,foo(int),load,helper,parse(std::string const&),parse(std::string const&),std::vector<int>::push_back(int const&)
flame-memlive- 5 3230 all,main,foo(int),parse(std::string const&),parse(std::string const&)
flame-maxlive- 9 3987 all,main,app+0x999,foo(int),load,helper,parse(std::string const&),parse(std::string const&),std::vector<int>::push_back(int const&)" \
  "flame graphs of memtot, ncalls, memlive and maxlive, with the frames of mpquery flame"
"$MPQ" flame basic.db --min-width 0.5 >basic.svg || fail "mpquery flame failed"
assert_eq "$(grep -o '<g data-o[^>]*><title>[^<]*' basic.html | head -n 9)" "$(grep -o '<g data-o[^>]*><title>[^<]*' basic.svg)" \
  "the memtot graph's frames and tooltips are mpquery flame's"
assert_eq "$(grep -c '<svg class="timeline"' basic.html)" 1 "the timeline plot inline"
assert_match "$(cat basic.html)" '<title>#8 parse\(std::string const&amp;\) at 2.500 s: 3.03 KiB \(3100\)</title>' \
  "the timeline: the stacks that held the most (no peak snapshot: at the last) named by their leaf after rules"

# a selection: the worker thread (a name pattern)
"$MPQ" report basic.db --thread 'work.*' -o worker.html || fail "report --thread failed"
assert_eq "$(page worker.html cards | sed -n '2p;4,5p' | tr '\n' ,)" "threads|1|1|,allocations|21|21|21 calls,bytes allocated|2.05 KiB|2100|2100 bytes," \
  "--thread work.*: the worker's totals row"
assert_eq "$(page worker.html rows stacks memtot | sed 1,2d | cut -d'|' -f1-3 | tr '\n' ,)" \
  "11=stack 11: mpquery show DB 11|20=20|1.95 KiB=2000,8=stack 8: mpquery show DB 8|1=1|100 B=100," "--thread: the worker's stacks"
assert_eq "$(page worker.html table threads 1 | sed 1d | cut -d'|' -f2,3)" "101|worker" "--thread: its thread alone"
assert_match "$(page worker.html text selection)" \
  "^basic.db · run 1, started [-0-9: ]+ · snapshot: each process's last \(at exit\) · threads work\.\* · mpquery " \
  "the selection said under the title"
"$MPQ" report basic.db --pid 100 --image 1 --exe app -o app.html -q || fail "report --pid --image --exe failed"
assert_match "$(page app.html text selection)" "· pid 100 image 1 · executable app · mpquery " \
  "--pid, --image and --exe said under the title"

# --title escaped, stdout when it is not a terminal, --no-default-rules
"$MPQ" report basic.db --title 'a <b> & "c"' --no-default-rules >title.html || fail "report to stdout failed"
assert_eq "$(grep -o '<title>[^<]*</title>' title.html | head -n 1) $(grep -o '<h1>[^<]*</h1>' title.html)" \
  '<title>a &lt;b&gt; &amp; &quot;c&quot;</title> <h1>a &lt;b&gt; &amp; &quot;c&quot;</h1>' "--title escaped"
assert_eq "$(page title.html flames | sed -n 1p | cut -d' ' -f4 | cut -d, -f1-3)" "all,__libc_start_main,main" \
  "--no-default-rules: __libc_start_main kept"

# hostile names: markup, a script's end, control characters, invalid UTF-8
printf '%s\n' $'100,1000,0,100,100\tmain\t</script><script>alert(1)</script>' $'5,50,0,5,5\tmain\t<img src=http://x/y.png>' \
    $'1,5,0,5,5\tmain\tctl\\x3b\\t\\rend' | stacks_db hostile.db
sqlite3 hostile.db "UPDATE function SET name = CAST(X'62616401FF78EFBFBE' AS TEXT) WHERE name LIKE 'ctl%'" \
  || fail "cannot write the bad name"
"$MPQ" report hostile.db --no-default-rules -o hostile.html || fail "report on hostile names failed"
assert_eq "$(page hostile.html refs)" "" "hostile names: nothing outside the page (an address in a name is text)"
assert_eq "$(page hostile.html balance)" "" "hostile names: every element closed"
assert_eq "$(grep -c '<script>' hostile.html) $(grep -c '</script>' hostile.html)" "1 1" "hostile names: one script element"
assert_eq "$(page hostile.html rows stacks memtot | sed 1,2d | cut -d'|' -f10)" \
  "</script><script>alert(1)</script> < main=</script><script>alert(1)</script> / main
<img src=http://x/y.png> < main=<img src=http://x/y.png> / main
bad �x� < main=bad �x� / main" \
  "hostile names: shown as text (a control character as a space, invalid UTF-8 and U+FFFE as U+FFFD)"

# recorded: alloc_functions.c's exact values (see its comment)
profile af.db "$B/tests/alloc_functions" >/dev/null 2>&1
"$MPQ" report af.db -o af.html || fail "report on a recorded profile failed"
assert_eq "$(page af.html refs)$(page af.html addresses)" "" "alloc_functions: nothing outside the page, no address"
assert_eq "$(page af.html cards | sed -n '4,8p')" \
"allocations|1.16k|1162|1162 calls
bytes allocated|153 KiB|156420|156420 bytes
frees|1.16k|1155|1155 frees
still allocated|6.84 KiB|7000|7000 bytes
live blocks|7|7|7 blocks" "alloc_functions: the totals"
# the peak: the high-water mark (maxlive, 7000, as info says), and what the
# peak snapshot holds (the database's totals row there), taken within 4 KiB
# below it
af_peak=$(q af.db "SELECT t.memlive FROM totals t JOIN snapshot s ON s.id = t.snapshot WHERE s.reason = 'peak' AND t.thread = 0 ORDER BY s.id DESC LIMIT 1")
assert_match "$(page af.html cards | sed -n 9p)" "^peak live\\|[0-9.]+ KiB\\|7000\\|7000 bytes, peak snapshot at \\+0\\.[0-9]{3} s \\(holding $af_peak bytes: it is taken within 1/128 or 4 KiB below the peak\\)$" \
  "alloc_functions: its peak (maxlive, 7000), when the peak snapshot was taken and what it holds ($af_peak)"
assert_match "$("$MPQ" info af.db --bytes | grep '^  peak ')" "^  peak    7000 bytes: the process peak \\(its maxlive; its peak snapshot, taken within 1/128 or 4 KiB below it, holds $af_peak bytes\\)$" \
  "... info says the same"
# its plot: the peak snapshot marked as the peak, and the curve's highest
# point above it (the exit's 7000 live bytes) as what it is
assert_match "$(grep -o '<g class="peakmark"><title>[^<]*' af.html | sed 's/.*<title>//' | paste -sd'|')" \
  "^peak snapshot [0-9.]+ KiB at 0\\.[0-9]{3} s \\($af_peak bytes, the peak snapshot\\)\\|highest sampled 6.84 KiB at 0\\.[0-9]{3} s \\($(q af.db "SELECT MAX(maxlive) FROM totals WHERE thread = 0") bytes, the whole tree's highest point\\)$" \
  "alloc_functions: the plot marks the peak snapshot, and the higher sampled point as sampled"
assert_eq "$(page af.html rows functions memtot-self | sed 1,3d | awk -F'|' '{ print $1 "|" $3 "|" $NF }' | sed 's/=[^|]*$//')" \
"97.7 KiB=100000|1.00k=1000|do_malloc
20.5 KiB=21000|20=20|do_realloc
9.77 KiB=10000|50=50|do_calloc
7.50 KiB=7680|30=30|do_posix_memalign
6.84 KiB=7000|7=7|do_leak
5.00 KiB=5120|40=40|do_aligned_alloc
5.00 KiB=5120|10=10|do_memalign
500 B=500|5=5|do_valloc" "alloc_functions: its functions, self memtot and ncalls"
assert_eq "$(page af.html text leak-summary)" "7 leaked blocks (6.84 KiB) in 1 stacks: still allocated at exit." "alloc_functions: do_leak's 7 blocks"
assert_eq "$(page af.html table leaks 0 | sed 1d | cut -d'|' -f2-3,5)" "7=7|6.84 KiB=7000|do_leak < main=do_leak / main" \
  "alloc_functions: the leak's stack"
assert_eq "$(page af.html panes flame | tr '\n' ,)" "memtot shown,ncalls shown,memlive shown,peak shown,maxlive shown,ntemp shown," \
  "alloc_functions: flame graphs of the live bytes at the peak and of ntemp too"
assert_eq "$(page af.html flames | awk '{print $1, $3}' | sed -n '1,3p;6p' | tr '\n' ,)" \
  "flame-memtot- 156420,flame-ncalls- 1162,flame-memlive- 7000,flame-ntemp- 1155," "alloc_functions: the graphs' totals"

# two processes, their peaks (tests/progs/timeline_steps.c)
MP_QUIET=1 profile ts.db "$B/tests/timeline_steps" || fail "timeline_steps failed"
parent=$(q ts.db "SELECT pid FROM process WHERE ppid NOT IN (SELECT pid FROM process)")
child=$(q ts.db "SELECT pid FROM process WHERE ppid = $parent")
"$MPQ" report ts.db -o ts.html || fail "report on two processes failed"
assert_eq "$(page ts.html table threads 0 | cut -d'|' -f1,2,6-12 | sed -e "s/^$parent|/P|/" -e "s/^$child|/C|/" -e "s/|$parent|/|P|/")" \
"pid|ppid|ended|ncalls|memtot|nfree|nlive|memlive|maxlive
P|$(q ts.db "SELECT ppid FROM process WHERE pid = $parent")|returned from main with status 0|3.00k=3000|2.86 MiB=3000000|1.00k=1000|2.00k=2000|1.91 MiB=2000000|2.86 MiB=3000000
C|P|_exit(0)|500=500|977 KiB=1000000|0=0|500=500|977 KiB=1000000|977 KiB=1000000" "the processes, by start: parent and child"
assert_eq "$(page ts.html cards | sed -n '1p;4,5p;7p' | tr '\n' ,)" \
  "processes|2|2|,allocations|3.50k|3500|3500 calls,bytes allocated|3.81 MiB|4000000|4000000 bytes,still allocated|2.86 MiB|3000000|3000000 bytes," \
  "the summary sums the processes"
peak_of() { q ts.db "SELECT MAX(t.maxlive) FROM totals t JOIN snapshot s ON s.id = t.snapshot JOIN process p ON p.id = s.process WHERE p.pid = $1 AND t.thread = 0"; }
ppeak=$(peak_of "$parent") cpeak=$(peak_of "$child")
assert_match "$(page ts.html cards | sed -n 9p)" "^peak live\|[0-9.]+ MiB\|$ppeak\|$ppeak bytes in pid $parent \(timeline_steps\), peak snapshot at \+0\.[0-9]+ s( \(holding [0-9]+ bytes: it is taken within 1/128 or 4 KiB below the peak\))?; sum of the processes' peaks: $(awk "BEGIN { printf \"%.2f\", ($ppeak + $cpeak) / 1048576 }") MiB$" \
  "the peak: the largest process's (the parent's maxlive, $ppeak), and the sum of the processes' peaks"
assert_eq "$(grep -c '<polygon class="peak"' ts.html)" 2 "the timeline: each process's peak marked"
assert_eq "$(page ts.html flames | awk '{print $1, $4}' | sed -n 3,4p | tr '\n' ,)" \
  "flame-memlive- all,main,child_work,grow_b,flame-peak- all,main,child_work,grow_a,grow_b," \
  "memlive at exit (grow_a freed) and at the peaks (grow_a still live)"
"$MPQ" report ts.db --pid "$child" --snapshot label:child -o child.html || fail "report --pid --snapshot failed"
assert_eq "$(page child.html table threads 0 | sed 1d | cut -d'|' -f1,7,11)" "$child|500=500|977 KiB=1000000" "--pid CHILD --snapshot label:child"

# errors: one line, exit 2 (1 for a file that cannot be written)
expect_fail 2 "^mpquery: basic.db: no peak snapshot in the selected processes" "$MPQ" report basic.db --snapshot peak -o x.html
expect_fail 2 "^mpquery: report: bad value 'x' for --min-width \(expected pixels, 0 to 1200\)" "$MPQ" report basic.db --min-width x
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
chrome --dump-dom "file://$T/af.html#flame=ncalls&stacks=memlive&functions=memtot-inclusive" >af.dom.html \
  || fail "chromium failed: $(tail -n 3 chrome.err)"
grep -E 'Uncaught|CONSOLE' chrome.err && fail "JavaScript errors: $(cat chrome.err)"
frames=$(page af.html flames | awk '{n += $2} END {print n}')
assert_eq "$(page af.dom.html text status)" "Interactive: 6 flame graphs ($frames frames), 3 tab groups." \
  "chromium: the script ran: every flame graph made interactive, the tabs set up"
assert_eq "$(page af.dom.html panes flame | tr '\n' ,)" \
  "memtot hidden,ncalls shown,memlive hidden,peak hidden,maxlive hidden,ntemp hidden," "chromium: #flame=ncalls shows that graph alone"
assert_eq "$(page af.dom.html panes stacks | grep shown) $(page af.dom.html panes functions | grep shown)" \
  "memlive shown memtot-inclusive shown" "chromium: the other tabs the address names"
assert_eq "$(page af.dom.html flames | sed -n 2p)" "$(page af.html flames | sed -n 2p)" \
  "chromium: the ncalls graph's frames and names in the document"
assert_eq "$(page af.dom.html cards | sed -n 4p)" "allocations|1.16k|1162|1162 calls" "chromium: the totals rendered"
assert_eq "$(page af.dom.html buttons flame | tr '\n' ,)" \
  "memtot off memtot,ncalls on ncalls,memlive off memlive,peak off memlive at the peak,maxlive off maxlive,ntemp off ntemp," \
  "chromium: the tab shown marked"
assert_eq "$(page af.dom.html buttons functions | grep -c ' on ') $(page af.html buttons functions | wc -l)" "1 10" \
  "chromium: one of the 10 function tabs (self and inclusive of the 5 counters but the peak) marked"

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
