#!/bin/bash
# mpquery serve: the one line it prints (a URL on 127.0.0.1 with a token),
# every view answering with the token and 403 without it (or with another),
# the figures of /tree and /bottomup equal to top's CSV on the basic
# fixture, a parameter meaning what the option means (a bad one: the
# command's own message, HTTP 400), hostile names escaped in every view,
# /source only for files the profile's frames name, a recorded program's
# functions and source, SIGTERM and SIGINT (exit 0, the port free again),
# bad --port and --bind (one line, exit 2), a port in use (exit 1); the
# time range: the chart shaded, the links keeping it, the views following it
# (the overview's info too).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null
command -v curl >/dev/null || sh "$ROOT/tests/lib/deps.sh" curl >/dev/null 2>&1 || fail "no curl"

source "$ROOT/tests/lib/serve.sh"

start basic basic.db
assert_eq "$(wc -l <basic.url)" 1 "serve prints one line"
VIEWS="/ /timeline /flame /tree /bottomup /peak /leaks /temporaries /hist /rss /threads /source /diff"
for v in $VIEWS /callers; do
    code=$(curl -s -o page.html -w '%{http_code}' "$BASE$v")
    assert_eq "$code" 403 "$v without the token"
    code=$(curl -s -o page.html -w '%{http_code}' "$BASE$v?token=${TOK%?}0")
    [ "${TOK: -1}" = 0 ] && code=$(curl -s -o page.html -w '%{http_code}' "$BASE$v?token=${TOK%?}1")
    assert_eq "$code" 403 "$v with another token"
done
assert_eq "$(get /nothing)" 404 "an unknown path: 404"
for v in / /timeline /flame /tree /bottomup /callers /leaks /temporaries /hist /threads /source /diff; do
    assert_eq "$(get $v)" 200 "$v"
    grep -q '</html>' page.html || fail "$v: the page is cut"
    grep -Eq '(src|href)="(https?:)?//' page.html && fail "$v: refers to another site"
done
assert_eq "$(get /timeline.svg)" 200 "the timeline's plot"
head -c 200 page.html | grep -q '<svg' || fail "/timeline.svg is not an SVG"

# the figures: /tree's root is every stack's sum (top's CSV rows), /bottomup's
# rows each function's self value (top --functions), /tree's node its
# inclusive one
sum=$("$MPQ" top basic.db --format csv -n 0 | awk -F, 'NR > 1 { s += $2 } END { print s }')
get /tree >/dev/null
assert_eq "$(rows | sed -n 2p | cut -d'|' -f2,15)" "$sum|all" "/tree: the total memtot = the sum of top's rows"
get /bottomup >/dev/null
"$MPQ" top basic.db --format csv --functions -n 0 | awk -F, 'NR > 1 { print $1 "|" $2 "|" $2 "|" $15 }' | sort >top.txt
rows | awk -F'|' 'NR > 2 { print $1 "|" $2 "|" $9 "|" $15 }' | sed 's/ callers.*$//' | sort >bu.txt
assert_eq "$(cat bu.txt)" "$(cat top.txt)" \
  "/bottomup: each leaf function's ncalls, memtot and self memtot = top --functions' self"
get /tree 'path=main%3Bparse(std%3A%3Astring%20const%26)' >/dev/null
assert_eq "$(rows | sed -n 2p | cut -d'|' -f1,2,9)" "8|5300|5100" \
  "/tree at main;parse: inclusive ncalls, memtot (top --functions' inclusive) and self memtot"
assert_eq "$("$MPQ" top basic.db --format csv --functions | grep '^8,5300' | cut -d, -f8,9)" "8,5300" "top --functions' inclusive of parse"
get /tree 'by=ncalls&thread=101' >/dev/null
assert_eq "$(rows | sed -n 2p | cut -d'|' -f1,2)" \
  "$("$MPQ" top basic.db --format csv -n 0 --thread 101 | awk -F, 'NR > 1 { c += $1; m += $2 } END { print c "|" m }')" \
  "/tree?thread=101: top --thread 101's sums"
get /flame 'search=parse' >/dev/null
assert_match "$(cat page.html)" 'matched <b class=matched>5300</b> \(63.57%\)' "/flame?search=parse: 5300 of 8337 matched"
get /flame 'zoom=main%3Bload' >/dev/null
assert_match "$(cat page.html)" 'memtot of the graph: <b>1000</b> \(11.99% of all\)' "/flame?zoom=main;load: load's 1000 bytes"
get /callers >/dev/null
assert_eq "$(rows | sed -n 2,3p)" "8337|0|main
5300|5300|parse(std::string const&)" "/callers without a function: the functions by inclusive memtot (top --functions')"
get /callers 'function=helper' >/dev/null
assert_match "$(rows | tr '\n' '#')" '#10\|1000\|[^#]*\|load callers main.cc:40#' "/callers?function=helper: load calls it, 10 calls, 1000 bytes"

# a parameter is the option: a bad value gets the command's message, 400
assert_eq "$(get /tree by=bogus)" 400 "/tree?by=bogus: 400"
assert_eq "$(err)" "$("$MPQ" top basic.db --by bogus 2>&1)" "top's message of --by bogus"
assert_eq "$(get /leaks 'filter=(')" 400 "/leaks?filter=(: 400"
assert_eq "$(err)" "$("$MPQ" leaks basic.db --filter '(' 2>&1)" "leaks' message of --filter ("
assert_eq "$(get /flame 'search=(')" 400 "/flame?search=(: 400"
assert_match "$(err)" "^mpquery: flame: bad value '\(' for search \(expected a POSIX ERE: " "/flame: the search's error"
assert_eq "$(get /peak)" 400 "/peak on a profile without a peak snapshot: 400"
assert_eq "$(err)" "$("$MPQ" top basic.db --snapshot peak 2>&1)" "/peak: top --snapshot peak's message"
assert_eq "$(get /source file=/etc/passwd)" 403 "/source of a file no frame names: 403"
assert_eq "$(get /source 'file=/src/app/../../etc/passwd')" 403 "/source of a path through the profile's directory: 403"
assert_eq "$(get /source file=/src/app/main.cc)" 200 "/source of a file the frames name"
assert_match "$(cat page.html)" 'not readable here' "/source: the file is not on this machine: its path alone"

# the server stops on SIGTERM: exit 0, the port free again
port=${BASE##*:}
kill -TERM $SPID
wait $SPID; rc=$?
assert_eq "$rc" 0 "SIGTERM: exit 0"
curl -s -o /dev/null "$BASE/?token=$TOK" && fail "the server still answers after SIGTERM"
"$MPQ" serve basic.db --port "$port" >again.url 2>again.err &
SPID=$!
on_exit "kill $SPID 2>/dev/null"
for _ in $(seq 100); do [ -s again.url ] && break; sleep 0.1; done
assert_match "$(cat again.url)" "^http://127.0.0.1:$port/\\?token=" "--port $port: the port is free again, and taken"
expect_fail 1 "^mpquery: serve: cannot listen on 127.0.0.1 port $port: Address already in use$" "$MPQ" serve basic.db --port "$port"
kill -INT $SPID
wait $SPID; rc=$?
assert_eq "$rc" 0 "SIGINT: exit 0"

expect_fail 2 "^mpquery: serve: bad value 'x' for --port \(expected a port number, 1 to 65535\)" "$MPQ" serve basic.db --port x
expect_fail 2 "^mpquery: serve: bad value '70000' for --port" "$MPQ" serve basic.db --port 70000
expect_fail 2 "^mpquery: serve: bad value 'localhost:1' for --bind \(expected an IPv4 or IPv6 address" "$MPQ" serve basic.db --bind localhost:1
expect_fail 2 "^mpquery: serve: missing DB" "$MPQ" serve
expect_fail 2 "^mpquery: nothing.db: No such file or directory" "$MPQ" serve nothing.db

# hostile names: markup and a script's end in frames, a name in the URL
printf '%s\n' $'100,1000,0,100,100\tmain\t</script><script>alert(1)</script>' $'5,50,0,5,5\tmain\t<img src=x onerror=alert(2)>' \
    | stacks_db hostile.db
start hostile hostile.db
for v in /flame /tree /bottomup /temporaries /leaks /threads; do
    get $v >/dev/null
    grep -qiE '<script>alert|<img src=x' page.html && fail "$v: a frame's name is markup in the page"
done
get /bottomup >/dev/null
grep -qF '&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;' page.html || fail "/bottomup: the hostile name is not shown escaped"
echo "  ok: hostile frame names escaped in /flame, /tree, /bottomup, /temporaries, /leaks, /threads"
assert_eq "$(get /callers 'function=%3Cscript%3Ealert(3)%3C%2Fscript%3E')" 400 "/callers of a function that is not there: 400"
grep -qF '<script>alert(3)' page.html && fail "/callers: the function= of the URL is markup in the page"
assert_match "$(err)" "no frame named '<script>alert\(3\)</script>'" "/callers: the name of the URL shown as text"
kill -TERM $SPID; wait $SPID

# a recorded program: its functions, and its source file (named by its frames)
profile af.db "$B/tests/alloc_functions" >/dev/null 2>&1
start af af.db
get /bottomup >/dev/null
for f in do_malloc do_calloc do_realloc do_leak; do grep -q ">$f</a>" page.html || fail "/bottomup: no $f"; done
echo "  ok: alloc_functions' functions in /bottomup"
src=$ROOT/tests/progs/alloc_functions.c
enc=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$src")
assert_eq "$(get /source "file=$enc&line=1")" 200 "/source of alloc_functions.c"
grep -qF 'do_leak' page.html || fail "/source: alloc_functions.c's lines are not shown"
echo "  ok: /source shows alloc_functions.c"
get /tree path=main >/dev/null
link=$(grep -o 'href="/source[^"]*">alloc_functions.c:[0-9]*' page.html | head -n 1 | sed 's/^href="//; s/&amp;/\&/g')
line=${link##*:}
link=${link%%\"*}
[ -n "$link" ] || fail "/tree: no link from a row to its source"
assert_eq "$(curl -s -o page.html -w '%{http_code}' "$BASE$link")" 200 "/tree: a row's link to alloc_functions.c:$line"
assert_eq "$(python3 -c 'import html, re; print(html.unescape(re.search(r"<tr class=cur><td class=n>(\d+)</td><td><pre>(.*?)</pre>", open("page.html").read()).group(1, 2)[0]))')" \
  "$line" "/source: line $line marked"
assert_eq "$(python3 -c 'import html, re; print(html.unescape(re.search(r"<tr class=cur><td class=n>\d+</td><td><pre>(.*?)</pre>", open("page.html").read()).group(1)))')" \
  "$(sed -n "${line}p" "$src")" "/source: the marked line is line $line of the file"
# the options without a value are parameters too (lines=1 ...), and the
# listing kept for one state is not another's: /top, /top?lines=1, /top
csvrows() { "$MPQ" "$@" --format csv | python3 -c 'import csv, sys; [print("|".join(r)) for r in csv.reader(sys.stdin)]'; }
for q in "" lines=1 "" module=1 "lines=1&no-inline=1" no-default-rules=1; do
    opts=$(echo "$q" | tr '&' '\n' | sed -n 's/^\(.*\)=1$/--\1/p' | tr '\n' ' ')
    assert_eq "$(get /top "$q")" 200 "/top?$q"
    assert_eq "$(rows)" "$(csvrows top af.db $opts -n 100)" "/top?$q: top $opts's rows"
done
get /top lines=1 >/dev/null
[ "$(rows)" != "$(get /top >/dev/null; rows)" ] || fail "/top?lines=1 shows what /top shows: the test cannot tell"
kill -TERM $SPID; wait $SPID

# the time range (since, until): the chart in the overview's and the
# timeline's page (timeline's SVG inline, its axis in data-*) is the whole
# run with the range shaded on each panel; every nav link keeps the range;
# the range's line links to the same view without it (the view's own
# parameters kept); the views follow it (tests/progs/window_phases.c:
# phase_a before snapshot a, phase_b between a and b, phase_c after b); a
# hostile value shown as text
MP_QUIET=1 profile wp.db "$B/tests/window_phases" || fail "window_phases failed"
t0=$(q wp.db "SELECT start_time FROM process")
at() { q wp.db "SELECT time - $t0 FROM snapshot WHERE label = '$1' AND reason = 'api'"; }
mid=$(python3 -c 'import sys; print("%.3f" % ((float(sys.argv[1]) + float(sys.argv[2])) / 2))' "$(at a)" "$(at b)")
range="since=%2B0.000&until=%2B$mid"
start wp wp.db
phases() { grep -o 'phase_[abc]' page.html | sort -u | paste -sd' '; }
get /flame >/dev/null
assert_eq "$(phases)" "phase_a phase_b phase_c" "/flame, the whole run: every phase"
assert_eq "$(get /flame "$range&zoom=main")" 200 "/flame over +0.000..+$mid"
assert_eq "$(phases)" "phase_a" "/flame over +0.000..+$mid (between snapshots a and b): phase_a only"
hrefs=$(grep -o '<nav>.*</nav>' page.html | grep -o 'href="[^"]*"')
assert_eq "$(printf '%s\n' "$hrefs" | grep -vc "&amp;since=%2B0.000&amp;until=%2B$mid\"")" 0 \
  "every nav link keeps the range ($(printf '%s\n' "$hrefs" | wc -l) links)"
assert_eq "$(grep -o '<p class=range>.*</p>' page.html | sed "s/$TOK/T/")" \
  "<p class=range>time range <b class=range>+0.000..+$mid</b>: the views show the allocations made in it · <a class=reset href=\"/flame?token=T&amp;zoom=main\">the whole run</a></p>" \
  "the range's line: its ends, a link to the same view (zoom kept) over the whole run"
get / >/dev/null
assert_eq "$(grep -c '<rect class="range"' page.html) $(grep -c '<?xml' page.html)" "0 0" "/: no range, nothing shaded; the SVG inline"
grep -q '<div class=chart><svg [^>]*data-plot-left="90" data-plot-width="640" data-tmax="[0-9.]*"' page.html \
  || fail "/: the chart is not in the page with its axis"
for v in / /timeline; do
    assert_eq "$(get $v "$range")" 200 "$v over the range"
    tmax=$(grep -o 'data-tmax="[0-9.]*"' page.html | grep -o '[0-9.]*')
    want=$(python3 -c 'import sys; print("x=\"90.0\" y=\"60\" width=\"%.1f\"" % (float(sys.argv[1]) / float(sys.argv[2]) * 640))' "$mid" "$tmax")
    assert_eq "$(grep -o '<rect class="range" [^>]*>' page.html | sed -n 's/.* \(x="[^"]*" y="60" width="[^"]*"\).*/\1/p')" "$want" \
      "$v: the first panel shaded from 0 to +$mid s of $tmax"
    assert_eq "$(grep -c '<rect class="range"' page.html)" "$(grep -c '<g class="panel">' page.html)" "$v: every panel shaded"
done
get /timeline.svg >/dev/null; grep -v 'class="range"' page.html >whole.svg
get /timeline.svg "$range" >/dev/null; grep -v 'class="range"' page.html >ranged.svg
cmp -s whole.svg ranged.svg || fail "/timeline.svg over the range is not the whole run's plot (but the shade)"
assert_eq "$(get /flame 'since=%3Ci%20id%3Dpwn%3E')" 400 "a since that is no time: 400"
assert_eq "$(grep -c '<i id=pwn>' page.html) $(grep -c '<b class=range>&lt;i id=pwn&gt;..end</b>' page.html)" "0 1" \
  "a hostile since shown as text in the range's line"
# the overview's info follows the range: phase_b's allocations between
# snapshots a and b (200 x 500 bytes; 50 of them and 20 of phase_a's freed)
mid2=$(python3 -c 'import sys; print("%.3f" % ((float(sys.argv[1]) + float(sys.argv[2])) / 2))' "$(at b)" "$(at c)")
assert_eq "$(get / "since=%2B$mid&until=%2B$mid2")" 200 "/ over +$mid..+$mid2"
text() { python3 -c 'import html, re; print(html.unescape(re.sub(r"<[^>]*>", "", open("page.html").read())))'; }
assert_eq "$(text | grep -A5 '^totals' | sed 's/ *(.*//')" "totals of the time range +$mid..+$mid2
  ncalls  200 allocations
  memtot  97.7 KiB allocated
  nfree   70 frees
  nlive   130 blocks still allocated
  memlive 53.7 KiB still allocated" "/ over +$mid..+$mid2: info's totals are phase_b's (at snapshot b less at a)"
get / >/dev/null
assert_eq "$(text | grep -c '^totals:')" 1 "/ without a range: the totals of the whole run"
get / "since=%2B0.5&until=%2B0.1" >/dev/null
assert_eq "$(err) $(grep -c 'is after' page.html)" "mpquery: wp.db: --since +0.5 is after --until +0.1 1" \
  "/: info's refusal shown, once"
expect_fail 2 "^mpquery: timeline: --shade-window is for the svg plot" "$MPQ" timeline wp.db --shade-window
kill -TERM $SPID; wait $SPID

# Python first in the chart too (tests/progs/runtimes/py_first.py: b, under
# <module> < a and under a thread's worker < a, holds the most): the
# legend's stacks are named as /peak and /flame name them, the Python
# frame b (the interpreter's frames folded into it), the same stacks as
# /peak's rows; native=1 names the native leaf in all of them
PY=/usr/bin/python3     # Debian's (a pyenv shim would add its shell processes)
MP_QUIET=1 profile py.db "$PY" -I "$ROOT/tests/progs/runtimes/py_first.py" 100 >/dev/null || fail "py_first.py failed"
start py py.db
legend() { grep -o '<text x="772" y="[0-9]*">#[^<]*' page.html | sed 's/.*>//'; }
get / >/dev/null; legend >legend.txt
assert_eq "$(cut -d' ' -f2- legend.txt | sed -n 1,2p)" "b
b" "the chart's first two stacks: b (Python first)"
get /peak >/dev/null
assert_eq "$(cut -d' ' -f1 legend.txt | tr -d '#' | sed -n 1,2p)" "$(rows | sed -n 2,3p | cut -d'|' -f8)" \
  "the chart's stacks are /peak's first rows (their stacks merged as there)"
assert_match "$(rows | sed -n 2p)" '\|b < a < ' "/peak: b first"
get / native=1 >/dev/null; legend >legend.txt
get /peak native=1 >/dev/null
assert_eq "$(sed -n 1p legend.txt)" "#$(rows | sed -n 2p | cut -d'|' -f8) $(rows | sed -n 2p | cut -d'|' -f10 | sed 's/ < .*//')" \
  "native=1: the chart names /peak's first stack by its native leaf, as /peak does"
kill -TERM $SPID; wait $SPID

# two profiles: /diff is diff's table and its differential flame graph
start two basic.db af.db
assert_eq "$(get /diff)" 200 "/diff of two profiles"
assert_eq "$(rows | sed -n 1,2p)" "a|b|delta|ratio|where
0|100000|100000||do_malloc < main" "/diff: diff's rows (af.db's do_malloc is new)"
assert_eq "$(get /diff.svg)" 200 "/diff.svg"
grep -q 'class="flame"' page.html || fail "/diff.svg is not diff --flame's graph"
kill -TERM $SPID; wait $SPID
