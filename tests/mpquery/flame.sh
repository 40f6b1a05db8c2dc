#!/bin/bash
# mpquery flame and diff --flame: the SVG is well-formed XML (python3's
# xml.etree) with a frame per path prefix of the basic fixture, widths
# proportional to the --by counter (exact at 10 px a call), tooltips with
# every counter in human units and its share of the total, the script
# inline without any network address; --icicle, --filter, selection,
# merging of narrow frames, hostile names; the differential colours and
# tooltips; a recorded program's functions; errors. Where Debian's chromium
# can be installed, the script runs in it: zoom and search through the
# address's fragment (#zoom=N&search=RE), without a JavaScript error.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null

# frames SVG [FIELDS]: one line per frame, in document order, FIELDS of
# name (the title's first line), v (data-v), o (data-o), x, w (the rect's),
# y, fill, text (the label shown, "-" for none), title (lines joined by |)
frames() {
    python3 - "$1" "${2:-name v}" <<'EOF' || fail "$1 is not well-formed XML"
import sys, xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
root = ET.parse(sys.argv[1]).getroot()
group = [g for g in root.iter(NS + 'g') if g.get('id') == 'frames'][0]
for g in group.findall(NS + 'g'):
    title = g.find(NS + 'title').text
    rect, text = g.find(NS + 'rect'), g.find(NS + 'text')
    f = dict(name=title.split('\n')[0], v=g.get('data-v'), o=g.get('data-o'), x=rect.get('x'),
             w=rect.get('width'), y=rect.get('y'), fill=rect.get('fill'),
             text='-' if text is None else text.text, title='|'.join(title.split('\n')))
    print(' '.join(f[k] for k in sys.argv[2].split()))
EOF
}

# tooltip SVG NAME [N]: the N-th (default 1st) tooltip of a frame named NAME
tooltip() {
    frames "$1" title | awk -F'|' -v name="$2" -v n="${3:-1}" '$1 == name && ++k == n'
}

"$MPQ" flame basic.db >basic.svg || fail "mpquery flame failed"
assert_eq "$(frames basic.svg)" \
"all 8337
main 8337
app+0x999 7
foo(int) 30
load 1000
helper 1000
parse(std::string const&) 5300
parse(std::string const&) 200
std::vector<int>::push_back(int const&) 2000" "frames: the paths of fold (default rules), memtot of their subtrees, in path order"
# widths: 1180 px (1200 - 2 * 10) for the 8337 bytes, to 2 decimals
assert_eq "$(frames basic.svg 'v w' | awk '{ d = $2 - $1 * 1180 / 8337; if (d < -0.005 || d > 0.005) print "bad:", $0 }')" "" \
  "widths = memtot * 1180 / 8337 (to 0.005 px)"
assert_eq "$(tooltip basic.svg 'parse(std::string const&)')" \
"parse(std::string const&)|ncalls: 8 (19.05%)|memtot: 5.18 KiB (63.57%)|nfree: 3 (8.82%)|nlive: 5 (62.50%)|memlive: 3.12 KiB (99.07%)|maxlive: 3.17 KiB (81.51%)|ntemp: 0|module: app" \
  "tooltip: every counter of parse's subtree (B 5+1 calls, F 2; 5300 of 8337 bytes...), human units, share of the total"
assert_eq "$(tooltip basic.svg all)" \
"all|ncalls: 42 (100.00%)|memtot: 8.14 KiB (100.00%)|nfree: 34 (100.00%)|nlive: 8 (100.00%)|memlive: 3.15 KiB (100.00%)|maxlive: 3.89 KiB (100.00%)|ntemp: 0" \
  "the root's tooltip: the totals (ntemp 0: no share)"
assert_eq "$(tooltip basic.svg 'parse(std::string const&)' 2)" \
"parse(std::string const&)|ncalls: 2 (4.76%)|memtot: 200 B (2.40%)|nfree: 1 (2.94%)|nlive: 1 (12.50%)|memlive: 100 B (3.10%)|maxlive: 150 B (3.76%)|ntemp: 0|module: app" \
  "tooltip of the recursive call (bytes below 1024 whole)"
assert_eq "$(frames basic.svg 'name text' | sed -n '3,4p;8p')" "app+0x999 -
foo(int) -
parse(std::string const&) p.." "labels: none where 3 characters do not fit, elided with '..'"

# the script and style are inline; the only address is the SVG namespace
python3 - basic.svg <<'EOF' || fail "script or style not inline"
import re, sys, xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
root = ET.parse(sys.argv[1]).getroot()
scripts = list(root.iter(NS + 'script'))
assert len(scripts) == 1 and len(scripts[0].text) > 1000, 'one inline script'
assert len(list(root.iter(NS + 'style'))) == 1, 'one inline style'
assert not re.search(r'https?://', scripts[0].text), 'no address in the script'
text = open(sys.argv[1]).read().replace('xmlns="http://www.w3.org/2000/svg"', '')
assert not re.search(r'https?:|href|src=|@import|url\(', text), 'no reference outside'
EOF
echo "  ok: one inline script and style, no http(s) address, href, src or url()"

# exact ratios: 1 call = 10 px with --width 440 (420 px for 42 calls)
"$MPQ" flame basic.db --by ncalls --width 440 >calls.svg || fail "flame --by ncalls failed"
assert_eq "$(frames calls.svg 'name v x w' | tr '\n' ,)" \
"all 42 10.00 420.00,main 42 10.00 420.00,app+0x999 1 10.00 10.00,foo(int) 3 20.00 30.00,load 10 50.00 100.00,\
helper 10 50.00 100.00,parse(std::string const&) 8 150.00 80.00,parse(std::string const&) 2 150.00 20.00,\
std::vector<int>::push_back(int const&) 20 230.00 200.00," "--by ncalls --width 440: x and widths 10 px a call"

# an icicle by default: the root at the top (y 60, under the title), depth
# downwards; --no-icicle: the classic flame, the root at the bottom
assert_eq "$(frames basic.svg 'name y' | sed -n '1,2p;5,6p' | tr '\n' ,)" "all 60,main 76,load 92,helper 108," \
  "flame: the root at the top, each level 16 px below its parent's"
assert_match "$(cat basic.svg)" '<text id="title"[^>]*>Icicle graph: memtot</text>' "flame: the title says icicle"
"$MPQ" flame basic.db --icicle >icicle.svg || fail "flame --icicle failed"
cmp -s basic.svg icicle.svg || fail "--icicle is the default"
"$MPQ" flame basic.db --no-icicle >upward.svg || fail "flame --no-icicle failed"
assert_eq "$(frames upward.svg 'name y' | sed -n '1,2p;5,6p' | tr '\n' ,)" "all 108,main 92,load 76,helper 60," \
  "--no-icicle: the root at the bottom, each level 16 px above its parent's"
assert_match "$(cat upward.svg)" '<text id="title"[^>]*>Flame graph: memtot</text>' "--no-icicle: the title says flame"

# a deep profile (as clang's: a wide shallow part and a narrow spike 150
# frames deep, 2,522 px) opens on its root: the root and
# main in the first screen (y < 600), the leaves 2,400 px below
{ printf '10\tmain'; for i in $(seq 1 150); do printf '\tf%d' "$i"; done; printf '\n1000\tmain\twide\n'; } | stacks_db deep.db
"$MPQ" flame deep.db -o deep.svg 2>/dev/null || fail "flame deep.db failed"
assert_eq "$(frames deep.svg 'name y' | grep -E '^(all|main|f150) ' | tr '\n' ,)" "all 60,main 76,f150 2476," \
  "deep profile: root and main at the top of the first screen, f150 2,400 px below"
assert_match "$(head -2 deep.svg)" '<svg version="1.1" width="1200" height="2522"' "deep profile: the picture 2,522 px tall"
"$MPQ" flame deep.db --no-icicle -o deep-up.svg 2>/dev/null || fail "flame --no-icicle deep.db failed"
assert_eq "$(frames deep-up.svg 'name y' | sed -n '1,2p' | tr '\n' ,)" "all 2476,main 2460," \
  "deep profile, --no-icicle: the root at the bottom"

# --filter, --exclude and the selection choose what is drawn
"$MPQ" flame basic.db --filter '^parse' --by ncalls >filter.svg 2>err.txt || fail "flame --filter failed"
assert_eq "$(frames filter.svg | tr '\n' ,)" "all 8,main 8,parse(std::string const&) 8,parse(std::string const&) 2," \
  "--filter ^parse: only parse's paths"
assert_eq "$(cat err.txt)" "ignored 4 stacks (34 calls, 3037 bytes) with 1 filters" "--filter: what it left out, on stderr"
"$MPQ" flame basic.db --exclude 'push_back|parse' >exclude.svg 2>/dev/null || fail "flame --exclude failed"
assert_eq "$(frames exclude.svg | tr '\n' ,)" "all 1037,main 1037,app+0x999 7,foo(int) 30,load 1000,helper 1000," \
  "--exclude: parse and push_back gone"
"$MPQ" flame basic.db --thread 101 --by ncalls >thread.svg || fail "flame --thread failed"
assert_eq "$(frames thread.svg | tr '\n' ,)" "all 21,main 21,parse(std::string const&) 1,std::vector<int>::push_back(int const&) 20," \
  "--thread 101: the worker's allocations"
"$MPQ" flame basic.db --no-default-rules --by ncalls >norules.svg || fail "flame --no-default-rules failed"
assert_eq "$(frames norules.svg | sed -n 2,3p | tr '\n' ,)" "__libc_start_main 42,main 42," "--no-default-rules"
"$MPQ" flame basic.db --by memlive --title 'a <b> & "c"' --width 2000 -o out.svg >stdout.txt || fail "flame -o failed"
assert_eq "$(wc -c <stdout.txt)" 0 "-o: nothing on stdout"
assert_eq "$(frames out.svg | tr '\n' ,)" "all 3230,main 3230,foo(int) 30,parse(std::string const&) 3200,parse(std::string const&) 100," \
  "--by memlive: frames without live bytes left out"
assert_eq "$(python3 -c 'import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
print(r.get("width"), [t.text for t in r.iter("{http://www.w3.org/2000/svg}text") if t.get("id") == "title"][0])' out.svg)" \
  '2000 a <b> & "c"' "--width, --title (escaped, read back)"

# colours: a hue per module (warm: red >= green >= blue), or per name
python3 - basic.svg <<'EOF' || fail "colours"
import re, sys, xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
for r in ET.parse(sys.argv[1]).getroot().iter(NS + 'rect'):
    m = re.fullmatch(r'rgb\((\d+),(\d+),(\d+)\)', r.get('fill') or '')
    if m and r.get('height') == '15':
        red, green, blue = map(int, m.groups())
        assert red >= green >= blue, r.get('fill')
EOF
echo "  ok: warm colours (red >= green >= blue)"
"$MPQ" flame basic.db --colors hash >hash.svg || fail "flame --colors hash failed"
assert_eq "$(frames hash.svg 'name fill' | awk '$1 == "main" || $1 == "load" { print $2 }' | sort -u | wc -l)" 2 \
  "--colors hash: main and load (one module) differ"
assert_eq "$(diff <(frames basic.svg 'name v x w') <(frames hash.svg 'name v x w') && echo same)" same \
  "--colors hash: the same frames"

# narrow frames: 20 frames of 1 byte beside one of 1000 (1.16 px each)
for i in $(seq 1 20); do printf '1\tmain\tsmall%02d\n' "$i"; done >narrow.txt
printf '1000\tmain\tbig\n' >>narrow.txt
stacks_db narrow.db <narrow.txt
"$MPQ" flame narrow.db --no-default-rules --min-width 2 >narrow.svg || fail "flame --min-width failed"
assert_eq "$(frames narrow.svg 'name v o' | tr '\n' ,)" "all 1020 0,main 1020 0,big 1000 0,[20 narrow frames] 20 1000," \
  "--min-width 2: the 20 narrow frames merged after the wide ones"
assert_eq "$(tooltip narrow.svg '[20 narrow frames]')" \
  "[20 narrow frames]|ncalls: 20 (95.24%)|memtot: 20 B (1.96%)|nfree: 0|nlive: 20 (95.24%)|memlive: 20 B (1.96%)|maxlive: 20 B (1.96%)|ntemp: 0" \
  "the merged frame's tooltip: their sums"
"$MPQ" flame narrow.db --no-default-rules --min-width 30 >narrow2.svg || fail "flame --min-width 30 failed"
assert_eq "$(frames narrow2.svg | tr '\n' ,)" "all 1020,main 1020,big 1000," "--min-width 30: the merged frame too narrow, left out"
assert_eq "$("$MPQ" flame narrow.db --no-default-rules | grep -c '<g data-o')" 23 "default 0.1 px: every frame"

# human units at scale, and names that are not text
printf '%s\n' $'3400,1610612736,0,1572864,1572864\tmain\tbig<&>' $'1,5,0,5,5\tmain\tctl\\x3b\\t\\rend' | stacks_db units.db
sqlite3 units.db "UPDATE function SET name = CAST(X'62616401FF78EFBFBE' AS TEXT) WHERE name LIKE 'ctl%'" \
  || fail "cannot write the bad name"
"$MPQ" flame units.db --no-default-rules --min-width 0 >units.svg || fail "flame on hostile names failed"
assert_eq "$(tooltip units.svg 'big<&>')" \
  "big<&>|ncalls: 3.40k (99.97%)|memtot: 1.50 GiB (100.00%)|nfree: 0|nlive: 3.40k (99.97%)|memlive: 1.50 MiB (100.00%)|maxlive: 1.50 MiB (100.00%)|ntemp: 0|module: app" \
  "human units: 3.40k calls, 1.50 GiB, 1.50 MiB"
assert_eq "$(frames units.svg | sed -n 3p | od -An -tx1 | tr -d ' \n')" "62616420efbfbd78efbfbd20350a" \
  "names: a control character as a space, invalid UTF-8 and U+FFFE as U+FFFD"

# an empty selection: a valid picture that says so
"$MPQ" flame basic.db --by ntemp >empty.svg || fail "flame --by ntemp failed"
assert_eq "$(frames empty.svg | wc -l)" 0 "no ntemp: no frames"
assert_match "$(cat empty.svg)" 'nothing to draw: no ntemp in the selected samples' "no ntemp: said in the picture"

# a recorded program: its functions, exact values (alloc_functions.c's comment)
profile af.db "$B/tests/alloc_functions" >/dev/null 2>&1
"$MPQ" flame af.db -o af.svg || fail "flame on a recorded profile failed"
assert_eq "$(frames af.svg | sed 1,2d | sort | tr '\n' ,)" \
"do_aligned_alloc 5120,do_calloc 10000,do_leak 7000,do_malloc 100000,do_memalign 5120,do_posix_memalign 7680,do_realloc 21000,do_valloc 500," \
  "alloc_functions: one frame per function under main, its bytes"
assert_eq "$(tooltip af.svg do_malloc | cut -d'|' -f1-3)" "do_malloc|ncalls: 1.00k (86.06%)|memtot: 97.7 KiB (63.93%)" \
  "alloc_functions: do_malloc's 1000 calls of 100 bytes, of 1162 calls and 156420 bytes"
assert_match "$(tooltip af.svg do_malloc)" '\|module: alloc_functions$' "the module of a recorded frame"

# diff --flame: b is a with 3 more 10-byte allocations in foo(int), helper's
# 1000 bytes halved, addresses moved (app+0x999 becomes app+0x1999)
fixture basic a.db >/dev/null
fixture basic b.db >/dev/null
sqlite3 b.db "UPDATE sample SET ncalls = ncalls + 3, memtot = memtot + 30, memlive = memlive + 30 WHERE stack = 13;
              UPDATE sample SET memtot = 500 WHERE stack = 5;
              UPDATE frame SET id = id + 100, offset = offset + 4096;
              UPDATE stack_run SET frames = (SELECT json_group_array(value + 100) FROM json_each(frames));
              UPDATE stack_run SET id = id + 1000, parent = CASE parent WHEN 0 THEN 0 ELSE parent + 1000 END;
              UPDATE sample SET stack = stack + 1000;" || fail "cannot derive b.db"
"$MPQ" diff a.db b.db --flame >diff.svg || fail "diff --flame failed"
assert_eq "$(frames diff.svg 'name v fill' | tr '\n' ,)" \
"all 7867 rgb(225,225,255),main 7867 rgb(225,225,255),app+0x1999 7 rgb(255,60,60),foo(int) 60 rgb(255,148,148),\
load 500 rgb(148,148,255),helper 500 rgb(148,148,255),parse(std::string const&) 5300 rgb(224,224,224),\
parse(std::string const&) 200 rgb(224,224,224),std::vector<int>::push_back(int const&) 2000 rgb(224,224,224)," \
  "diff --flame: widths from b; grew red, shrank blue (by |b - a| / max), unchanged grey"
assert_eq "$(frames diff.svg 'name fill' | awk '$1 == "foo(int)" || $1 == "helper" {
    split(substr($2, 5), c, /[,)]/); print $1, (c[1] > c[3] ? "red" : c[3] > c[1] ? "blue" : "grey") }' | tr '\n' ,)" \
  "foo(int) red,helper blue," "diff --flame: foo grew (r > b), helper shrank (b > r)"
assert_eq "$(tooltip diff.svg 'foo(int)')" \
  "foo(int)|memtot in a: 30 B (0.36%)|memtot in b: 60 B (0.76%)|delta: +30 B|ratio: 2.000" "diff tooltip: a, b, delta, ratio"
assert_eq "$(tooltip diff.svg helper)" \
  "helper|memtot in a: 1000 B (11.99%)|memtot in b: 500 B (6.36%)|delta: -500 B|ratio: 0.500" "diff tooltip of a shrink"
assert_eq "$(tooltip diff.svg app+0x1999)" \
  "app+0x1999|memtot in a: 0 B (0.00%)|memtot in b: 7 B (0.09%)|delta: +7 B|ratio: - (not in a)" "diff tooltip of a new frame"
"$MPQ" diff a.db b.db --flame --by ncalls --icicle --width 440 -o diff2.svg >stdout.txt 2>/dev/null || fail "diff --flame options failed"
assert_eq "$(wc -c <stdout.txt)" 0 "diff --flame -o: nothing on stdout"
assert_eq "$(frames diff2.svg 'name v w y' | sed -n '1p;4p' | tr '\n' ,)" "all 45 420.00 60,foo(int) 6 56.00 92," \
  "diff --flame --by ncalls --icicle --width 440: b's 45 calls"
assert_match "$(cat diff2.svg)" '<text id="title"[^>]*>Differential icicle graph: ncalls</text>' "diff --flame: the title"

# errors: one line, exit 2 (1 for a file that cannot be written)
expect_fail 2 "^mpquery: flame: bad value 'foo' for --by \(expected ncalls, memtot, .*\) \(see mpquery flame --help\)$" \
  "$MPQ" flame basic.db --by foo
expect_fail 2 '^mpquery: flame: unknown option --bogus \(see mpquery flame --help\)$' "$MPQ" flame basic.db --bogus
expect_fail 2 "^mpquery: flame: bad value '50' for --width \(expected pixels, 100 to 100000\)" "$MPQ" flame basic.db --width 50
expect_fail 2 "^mpquery: flame: bad value '-1' for --min-width" "$MPQ" flame basic.db --min-width -1
expect_fail 2 "^mpquery: flame: bad value 'red' for --colors \(expected module or hash\)" "$MPQ" flame basic.db --colors red
expect_fail 2 '^mpquery: flame: missing DB' "$MPQ" flame
expect_fail 2 "^mpquery: flame: bad regex '\(' " "$MPQ" flame basic.db --filter '('
expect_fail 2 '^mpquery: nope.db: No such file or directory$' "$MPQ" flame nope.db
expect_fail 1 '^mpquery: no/such/dir/x.svg: No such file or directory$' "$MPQ" flame basic.db -o no/such/dir/x.svg
expect_fail 2 '^mpquery: flame: -o x.png: flame writes SVG \(\*\.svg\) \(see mpquery flame --help\)$' "$MPQ" flame basic.db -o x.png
expect_fail 2 '^mpquery: diff: -o x.pdf: diff writes SVG \(\*\.svg\)' "$MPQ" diff a.db b.db --flame -o x.pdf
[ ! -e x.png ] && [ ! -e x.pdf ] || fail "-o with a name of another format: no file"

# on a terminal: refused, with what to do instead (at 80 and 200 columns)
for cols in 80 200; do
    assert_eq "$({ COLUMNS=$cols script -qec "$MPQ flame basic.db" /dev/null; echo "rc=$?"; } | tr -d '\r')" \
"mpquery: flame: the graph is SVG: write it to a file with -o FILE.svg, or to a pipe (see mpquery flame --help)
rc=2" "flame on a terminal ($cols columns): refused, exit 2"
done
assert_eq "$({ script -qec "$MPQ diff a.db b.db --flame" /dev/null; echo "rc=$?"; } | tr -d '\r')" \
"mpquery: diff: the graph is SVG: write it to a file with -o FILE.svg, or to a pipe (see mpquery diff --help)
rc=2" "diff --flame on a terminal: refused"
assert_eq "$(script -qec "$MPQ flame basic.db -o tty.svg" /dev/null | tr -d '\r' | sed -E 's/[0-9.]+ KiB/N KiB/')" \
  "mpquery: wrote tty.svg (9 frames, N KiB)" "flame -o on a terminal: one line says what it wrote"
"$MPQ" flame basic.db -o w.svg >out.txt 2>err.txt || fail "flame -o w.svg failed"
assert_eq "$(cat out.txt; sed -E 's/\([0-9]+ frames, [0-9.]+ KiB\)/(N frames, S KiB)/' err.txt)" "mpquery: wrote w.svg (N frames, S KiB)" \
  "flame -o: 'wrote' on stderr, nothing on stdout"
assert_eq "$(sed -E 's/.* frames, ([0-9.]+) KiB.*/\1/' err.txt)" "$(wc -c <w.svg | awk '{v = $1 / 1024; printf(v < 10 ? "%.2f" : v < 100 ? "%.1f" : "%.0f", v)}')" "the size said is the file's (3 digits)"
for q in -q --quiet; do
    "$MPQ" flame basic.db -o w.svg $q >out.txt 2>&1 || fail "flame $q failed"
    assert_eq "$(cat out.txt)" "" "flame -o $q: nothing said"
done
expect_fail 2 "^mpquery: diff: bad value 'x' for --by" "$MPQ" diff a.db b.db --flame --by x
expect_fail 2 '^mpquery: diff: unknown option --colors' "$MPQ" diff a.db b.db --flame --colors hash
expect_fail 2 '^mpquery: diff: -o, --icicle, --no-icicle, --title, --width and --min-width go with --flame' "$MPQ" diff a.db b.db --icicle
expect_fail 2 '^mpquery: diff: -o, --icicle, --no-icicle, --title, --width and --min-width go with --flame' "$MPQ" diff a.db b.db --no-icicle
expect_fail 2 '^mpquery: diff: --flame does not combine with --fold or --functions' "$MPQ" diff a.db b.db --flame --fold
assert_match "$("$MPQ" --help)" 'flame +an interactive flame graph' "flame in the command list"
assert_match "$("$MPQ" flame --help)" 'example:' "flame --help"

# the script in a browser: Debian's chromium, headless (skipped when it
# cannot be installed)
if ! sh "$ROOT/tests/lib/deps.sh" chromium >deps.log 2>&1 || ! command -v chromium >/dev/null; then
    echo "SKIP: chromium not installed: $(tail -n 1 deps.log)"
    exit 0
fi
# dom SVG FRAGMENT: the document after its script ran; console errors in dom.err
dom() {
    timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" \
        --enable-logging=stderr --v=0 --dump-dom "file://$T/$1#$2" 2>dom.err || fail "chromium failed on $1"
}
dom basic.svg 'zoom=5&search=help' >zoomed.xml
grep -E 'Uncaught|CONSOLE' dom.err && fail "JavaScript errors: $(cat dom.err)"
python3 - zoomed.xml <<'EOF' || fail "zoom and search in chromium"
import re, sys
doc = open(sys.argv[1]).read()
frames = re.findall(r'<g data-o="(\d+)" data-v="(\d+)"(?: class="([^"]*)")?><title>([^\n<]*)[^<]*</title>'
                    r'<rect x="([\d.]+)" y="\d+" width="([\d.]+)"', doc)
got = [(name, cls.strip(), x, w) for o, v, cls, name, x, w in frames]
want = [('all', 'anc', '10.00', '1180.00'), ('main', 'anc', '10.00', '1180.00'),
        ('app+0x999', 'hide', '10.00', '0.99'), ('foo(int)', 'hide', '10.99', '4.25'),
        ('load', 'anc', '10.00', '1180.00'), ('helper', 'hl', '10.00', '1180.00')]
assert got[:6] == want, got[:6]
assert all(cls == 'hide' for name, cls, x, w in got[6:]), got[6:]
assert re.search(r'<text id="matched"[^>]*>Matched: 11.99% of memtot \(1 frame\)</text>', doc), 'matched'
assert re.search(r'<text id="reset" class="btn"', doc), 'reset shown'
EOF
echo "  ok: chromium: #zoom=5 (helper): ancestors full width, others hidden; #search=help: 11.99%, 1 frame"
"$MPQ" diff a.db b.db --flame >d.svg
dom d.svg 'search=^parse' >searched.xml
grep -E 'Uncaught|CONSOLE' dom.err && fail "JavaScript errors: $(cat dom.err)"
assert_match "$(cat searched.xml)" 'Matched: 67.37% of memtot \(2 frames\)' \
  "chromium: diff --flame, search ^parse: 5300 of b's 7867 bytes (the nested frame counted once)"
# the first screen of a deep profile (1200 x 600): the root (y 60-75) and
# main (76-91) drawn across it; --no-icicle: white there, its root 2,400 px below
shot() {
    timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" --hide-scrollbars \
        --screenshot="$T/$2" --window-size=1200,600 "file://$T/$1" 2>/dev/null || fail "chromium --screenshot failed on $1"
}
shot deep.svg deep.png
shot deep-up.svg deep-up.png
assert_eq "$(python3 "$ROOT/tests/lib/png_pixels.py" deep.png 20,68 600,68 1180,68 600,84 | tr '\n' ,)" \
  "20,68 coloured,600,68 coloured,1180,68 coloured,600,84 coloured," \
  "chromium: a deep profile's first screen shows the root and main, across the width"
assert_eq "$(python3 "$ROOT/tests/lib/png_pixels.py" deep-up.png 600,68 600,84 600,590 | tr '\n' ,)" \
  "600,68 white,600,84 white,600,590 white," "chromium: --no-icicle's first screen: nothing there"
dom calls.svg 'zoom=6' >zoom6.xml
assert_eq "$(grep -A9 '<title>parse' zoom6.xml | grep -o '<rect x="[0-9.]*" y="[0-9]*" width="[0-9.]*"' | tr '\n' ,)" \
  '<rect x="10.00" y="92" width="420.00",<rect x="10.00" y="108" width="105.00",' \
  "chromium: #zoom=6 (parse, 8 calls): parse 420 px, its recursive call (2 calls) 105 px"
