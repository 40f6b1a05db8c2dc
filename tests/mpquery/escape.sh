#!/bin/bash
# Hostile names from a recorded profile: tests/progs/hostile_names.c, run
# as an executable whose name is markup and a terminal escape, with
# snapshot labels that are script (an <img onerror>, a "</script>", an
# attribute's end with <svg onload>, a CDATA end "]]>") or terminal
# escapes (ESC, BEL, C1 CSI, an invalid UTF-8 byte), a thread name and a
# tag scope (a function name) that are markup too; its host set to markup
# and an escape (sqlite3). Every payload that runs marks the document
# (data-pwned on, or an id "pwn..." of, an element).
#   - terminal text (info, top, show, leaks, tree, timeline's table) and
#     error messages hold no control character, C1 or invalid UTF-8, and
#     still show the names (escapes as spaces, bad bytes as U+FFFD);
#   - report's page, timeline's and flame's SVG and diff --flame's, opened
#     in headless chromium: no payload ran, the SVGs' own scripts did, each
#     SVG parsed, and the names are there as text (escaped in the file).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

ESC=$'\e'
thread="<i id=pwnt>${ESC}[7m"                                             # 15 bytes: a thread name's most
tag="<img src=x onerror=\"document.documentElement.id='pwnfn'\">"$'\xc2\x9b\xff'   # < 64 bytes: a tag's most
l_img="<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">"
l_script="</script><script>document.documentElement.setAttribute('data-pwned','script')</script>"
l_attr="\"><svg onload=\"document.documentElement.setAttribute('data-pwned','svg')\">"
l_cdata="]]><script>document.documentElement.setAttribute('data-pwned','cdata')</script>"
l_term=$'\e]0;pwned\a\e[2J\xc2\x9b31m\xffend'
exe_name="\"><i id=pwnexe>${ESC}[31mx"
mkdir bin && cp "$B/tests/hostile_names" "bin/$exe_name" || fail "cannot copy the program"
LD_LIBRARY_PATH=$B MP_QUIET=1 profile h.db "bin/$exe_name" "$thread" "$tag" "$l_img" "$l_script" "$l_attr" "$l_cdata" \
    "$l_term" || fail "hostile_names failed"
sqlite3 h.db "UPDATE process SET host = '<i id=pwnhost>' || char(27) || '[31mhost' || char(7)" || fail "cannot set the host"
assert_eq "$(q h.db "SELECT count(*) FROM snapshot WHERE reason = 'api'")|$(q h.db "SELECT name FROM thread")" \
  "5|$thread" "the profile: 5 labelled snapshots, the thread's name"

# clean FILE WHAT: no control character but newline, no C1, valid UTF-8
clean() {
    $PY3 - "$1" <<'EOF' || fail "$2: control characters or invalid UTF-8 in the text: $(cat -A "$1" | head -c 600)"
import re, sys
b = open(sys.argv[1], 'rb').read()
t = b.decode('utf-8')                       # raises on invalid UTF-8
bad = re.findall('[\x00-\x09\x0b-\x1f\x7f-\x9f]', t)
assert not bad, bad[:5]
EOF
    echo "  ok: $2: no control character, valid UTF-8"
}
# the label and names as text shows them: escapes as spaces, bad bytes as U+FFFD
t_term=$' ]0;pwned  [2J 31m\xef\xbf\xbdend'
t_tag="<img src=x onerror=\"document.documentElement.id='pwnfn'\"> "$'\xef\xbf\xbd'
t_thread="<i id=pwnt> [7m"

# ---- text for a terminal
"$MPQ" info h.db --bytes >info.txt || fail "info failed"
clean info.txt "info"
pid=$(q h.db "SELECT pid FROM process")
assert_eq "$(grep -c -F "process $pid: $T/bin/\"><i id=pwnexe> [31mx" info.txt)" 1 "info: the executable, its escape as a space"
assert_match "$(grep -F '  started' info.txt)" ' on <i id=pwnhost> \[31mhost $' "info: the host, ESC and BEL as spaces"
assert_match "$(grep -E "^ +$pid  <" info.txt)" "^ +$pid  <i id=pwnt> \[7m +6 +5100 " "info: the thread's name in its table"
assert_eq "$(grep -F ' api ' info.txt | grep -c -F "$t_term")" 1 "info: the label, ESC, BEL and C1 as spaces, 0xff as U+FFFD"
assert_eq "$(grep -c -F "  bin/\"><i id=pwnexe> [31mx $t_thread $t_tag" info.txt)" 1 "info: the command line, cleaned"
assert_eq "$(grep -c -F "\"><svg onload=" info.txt)" 2 "info: the command line and a label as they are (markup is text here)"
for cmd in "top h.db --per-thread --no-default-rules" "leaks h.db --no-default-rules" "tree h.db" \
           "show h.db $(q h.db "SELECT s.id FROM stack s JOIN frame f ON f.id = s.frame JOIN function n ON n.id = f.function WHERE n.name GLOB '<img*'")" \
           "timeline h.db --format text"; do
    "$MPQ" $cmd >out.txt 2>err.txt || fail "mpquery $cmd failed: $(cat err.txt)"
    clean out.txt "mpquery ${cmd%% *}"
done
"$MPQ" top h.db --per-thread --no-default-rules >top.txt
assert_eq "$(grep -c -F "$t_thread (tid $pid)" top.txt) $(grep -c -F "[tag] $t_tag" top.txt)" "3 1" "top: the thread (on its 3 rows) and the tag, cleaned"
"$MPQ" timeline h.db --format text >tl.txt
assert_eq "$(grep -c -F "$t_term" tl.txt)" 1 "timeline's table: the label, cleaned"
"$MPQ" tree h.db >tree.txt
assert_eq "$(grep -c -F "$t_tag" tree.txt)" 1 "tree: the tag scope, cleaned"
# error messages: one line, cleaned (here a label of the command line's)
expect_fail 2 "^mpquery: h.db: .*label.* \[31mnope" "$MPQ" info h.db --snapshot "label:${ESC}[31mnope"$'\n'"more"
"$MPQ" info h.db --snapshot "label:${ESC}[31mnope" 2>err.txt >/dev/null
clean err.txt "an error message"

# ---- HTML and SVG
"$MPQ" report h.db -o report.html 2>err.txt || fail "report failed: $(cat err.txt)"
"$MPQ" timeline h.db -o timeline.svg || fail "timeline failed"
"$MPQ" flame h.db --no-default-rules -o flame.svg || fail "flame failed"
"$MPQ" diff h.db h.db --flame --no-default-rules -o diff.svg || fail "diff --flame failed"
clean report.html "report's page"
clean timeline.svg "timeline's SVG"
# count TEXT FILE: occurrences
count() { grep -o -F -- "$1" "$2" | wc -l; }
# a label: in the page twice (the overview's info text: its snapshots'
# table and the command line; the plot is a data: URL), 3 in the SVG
for l in "$l_img" "$l_script" "$l_attr" "$l_cdata"; do
    e=$(printf '%s' "$l" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g')
    assert_eq "$(count "$e" report.html) $(count "$e" timeline.svg)" "2 3" "escaped in the page and the SVG: ${e:0:40}..."
done
assert_eq "$(count '&lt;i id=pwnt&gt; [7m' report.html)" 3 "the thread's name escaped in the page (its table, the command line twice)"
e_tag='&lt;img src=x onerror=&quot;document.documentElement.id=&#39;pwnfn&#39;&quot;&gt; '$'\xef\xbf\xbd'
e_tag=${e_tag//&#39;/\'}
assert_eq "$(count "$e_tag" flame.svg) $(count "$e_tag" diff.svg)" "1 1" "the tag escaped in flame's and diff --flame's frame"
assert_eq "$(grep -c '<script' report.html) $(grep -c '</script' report.html)" "0 0" "the page has no script"

if ! sh "$ROOT/tests/lib/deps.sh" chromium >deps.log 2>&1 || ! command -v chromium >/dev/null; then
    echo "SKIP: chromium not installed: $(tail -n 1 deps.log)"
    exit 0
fi
# One browser for the four documents: a page of frames (file: frames can
# read each other with --allow-file-access-from-files) whose script, once
# they have loaded, writes per frame what happened in it as JSON.
cat >frames.html <<'EOF'
<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>frames</title></head><body>
<iframe src="report.html"></iframe><iframe src="timeline.svg"></iframe>
<iframe src="flame.svg"></iframe><iframe src="diff.svg"></iframe>
<pre id="result"></pre>
<script>
window.addEventListener('load', function () {
  var out = [];
  document.querySelectorAll('iframe').forEach(function (f) {
    var d = f.contentDocument, r = { src: f.getAttribute('src') };
    if (!d) { r.error = 'no access'; out.push(r); return; }
    var status = d.getElementById('status');
    r.title = d.title;
    r.root = d.documentElement.localName;
    r.pwned = d.querySelectorAll('[data-pwned]').length + d.querySelectorAll('[id^=pwn]').length;
    r.img = d.querySelectorAll('img').length;
    r.parsererror = d.getElementsByTagName('parsererror').length;
    r.scripts = d.getElementsByTagName('script').length;
    r.status = status ? status.textContent : '';
    r.text = d.documentElement.textContent;
    out.push(r);
  });
  document.getElementById('result').textContent = JSON.stringify(out);
});
</script></body></html>
EOF
timeout 120 chromium --headless --no-sandbox --disable-gpu --allow-file-access-from-files --user-data-dir="$T/chromium" \
    --enable-logging=stderr --v=0 --dump-dom "file://$T/frames.html" >frames.dom 2>chrome.err \
  || fail "chromium failed: $(tail -n 3 chrome.err)"
grep -E 'Uncaught|CONSOLE' chrome.err && fail "JavaScript errors: $(grep -E 'Uncaught|CONSOLE' chrome.err)"
$PY3 - frames.dom >frames.txt <<'EOF' || fail "cannot read chromium's result: $(head -c 500 frames.dom)"
import html, json, re, sys
m = re.search(r'<pre id="result">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
for r in json.loads(html.unescape(m.group(1))):
    print('%s root=%s pwned=%d img=%d parsererror=%d scripts=%d title=%s status=%s' % (
        r['src'], r['root'], r['pwned'], r['img'], r['parsererror'], r['scripts'], r['title'], r['status'].split(':')[0]))
    open(r['src'] + '.text', 'w').write(r['text'])
EOF
assert_eq "$(cat frames.txt)" \
"report.html root=html pwned=0 img=1 parsererror=0 scripts=0 title=mallocprof report: \"><i id=pwnexe> [31mx status=
timeline.svg root=svg pwned=0 img=0 parsererror=0 scripts=0 title= status=
flame.svg root=svg pwned=0 img=0 parsererror=0 scripts=1 title= status=
diff.svg root=svg pwned=0 img=0 parsererror=0 scripts=1 title= status=" \
  "chromium: no payload ran, nothing of theirs made an element (the page's one img is its plot); each SVG parsed"
for f in report.html timeline.svg; do
    for l in "$l_img" "$l_script" "$l_attr" "$l_cdata"; do
        grep -q -F -- "$l" $f.text || fail "chromium: $f does not show the label [$l] as text"
    done
done
echo "  ok: chromium: the page and the timeline show the four labels as text"
grep -q -F "$t_thread" report.html.text && grep -q -F "\"><i id=pwnexe> [31mx $t_thread" report.html.text \
  && grep -q -F '"><i id=pwnexe> [31mx' timeline.svg.text || fail "chromium: the thread's or the executable's name not shown"
echo "  ok: chromium: the page shows the thread's name, the command line and the executable's name as text, the timeline the last"
for f in report.html flame.svg diff.svg; do
    grep -q -F -- "${t_tag% *}" $f.text || fail "chromium: $f does not show the tag as text"
done
echo "  ok: chromium: the page, flame and diff --flame show the tag (a function name) as text"
