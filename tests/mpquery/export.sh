#!/bin/bash
# mpquery export --format speedscope|pprof|massif|folded: exact contents on
# the basic and phases fixtures (every value known) and on a recorded
# program, each file read back by the tool it is for: speedscope's JSON
# validated against speedscope's own schema (ajv-cli) and loaded in
# speedscope's web app (headless chromium); pprof decoded with the npm
# package pprof-format, and by `go tool pprof` when Go is installed;
# massif.out read by valgrind's ms_print; folded equal to fold's output.
# npm packages, pinned, go to build/npm (installed when missing); a part
# whose tool cannot be installed is skipped with a SKIP line.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null
fixture phases >/dev/null
fixture snapshots >/dev/null

# ---------------------------------------------------------------- folded
for args in "" "--by memlive" "--by ncalls --filter ^parse" "--lines --no-default-rules" "--no-inline --thread 100"; do
    "$MPQ" export basic.db --format folded $args >export.txt 2>&1 || fail "export --format folded $args failed"
    "$MPQ" fold basic.db $args >fold.txt 2>&1 || fail "fold $args failed"
    [ -s fold.txt ] && cmp -s export.txt fold.txt || fail "--format folded $args: not fold's lines: $(diff export.txt fold.txt)"
    echo "  ok: --format folded $args: fold's $(wc -l <fold.txt) lines"
done
"$MPQ" export basic.db --format folded --by ncalls --filter '^parse' -o basic.folded >out.txt 2>err.txt \
  || fail "export --format folded -o failed"
assert_eq "$(wc -c <out.txt)" 0 "-o: nothing on stdout"
assert_eq "$(cat basic.folded)" "$("$MPQ" fold basic.db --by ncalls --filter '^parse' 2>/dev/null)" "-o FILE: fold's lines"
assert_eq "$(cat err.txt)" "ignored 4 stacks (34 calls, 3037 bytes) with 1 filters
mpquery: wrote basic.folded (92 B)" "what --filter left out, then what it wrote, on stderr"

# -o's name tells the format when --format is not given; a name of none
# is refused with the names each format takes
"$MPQ" export basic.db --by ncalls --filter '^parse' -o named.folded -q >out.txt 2>err.txt || fail "export -o named.folded failed"
cmp -s named.folded basic.folded || fail "-o NAME.folded: --format folded"
assert_eq "$(cat out.txt err.txt)" "ignored 4 stacks (34 calls, 3037 bytes) with 1 filters" "export -q: no 'wrote' line"
"$MPQ" export basic.db -o named.pb.gz -q 2>/dev/null && "$MPQ" export basic.db --format pprof -o basic.pb.gz -q 2>/dev/null \
  || fail "export -o named.pb.gz failed"
cmp -s named.pb.gz basic.pb.gz || fail "-o NAME.pb.gz: --format pprof"
for name in x.png x; do
    expect_fail 2 "^mpquery: export: -o $name: export writes speedscope \(\*\.json\), pprof \(\*\.pb\.gz, \*\.pb\), massif \(massif\.out\*, \*\.massif\), folded \(\*\.folded\) \(see mpquery export --help\)$" \
      "$MPQ" export basic.db -o $name
done
"$MPQ" export basic.db --format folded -o any.name -q || fail "--format folded -o any.name: the name is not checked"
expect_fail 2 '^mpquery: export: missing --format \(speedscope, pprof, massif or folded\), or -o FILE naming one' "$MPQ" export basic.db

# ---------------------------------------------------------------- speedscope
# ss FILE WHAT: frames ("name|file|line"), profiles ("name|unit|endValue",
# the active one starred), or a profile's samples as folded lines (N: its
# index), after checking that weights sum to endValue
ss() {
    python3 - "$1" "$2" <<'EOF' || fail "$1: not a speedscope file as expected"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["$schema"] == "https://www.speedscope.app/file-format-schema.json"
frames = j["shared"]["frames"]
for p in j["profiles"]:
    assert p["type"] == "sampled" and p["startValue"] == 0 and len(p["samples"]) == len(p["weights"])
    assert sum(p["weights"]) == p["endValue"] and all(w > 0 for w in p["weights"])
what = sys.argv[2]
if what == "frames":
    for f in frames:
        print("%s|%s|%s" % (f["name"], f.get("file", ""), f.get("line", "")))
elif what == "profiles":
    for i, p in enumerate(j["profiles"]):
        print("%s%s|%s|%d" % ("*" if i == j["activeProfileIndex"] else "", p["name"], p["unit"], p["endValue"]))
else:
    p = j["profiles"][int(what)]
    for s, w in zip(p["samples"], p["weights"]):
        print(";".join(frames[i]["name"] for i in s), w)
EOF
}
"$MPQ" export basic.db --format speedscope -o basic.json || fail "export --format speedscope failed"
assert_eq "$(ss basic.json profiles)" \
"ncalls of app (pid 100)|none|42
*memtot of app (pid 100)|bytes|8337
nfree of app (pid 100)|none|34
nlive of app (pid 100)|none|8
memlive of app (pid 100)|bytes|3230
maxlive of app (pid 100)|bytes|3987
ntemp of app (pid 100)|none|0" "speedscope: a profile per counter, its unit, the fixture's sums; memtot active"
i=0
for counter in ncalls memtot nfree nlive memlive maxlive ntemp; do
    assert_eq "$(ss basic.json $i)" "$("$MPQ" fold basic.db --by $counter)" "speedscope: the $counter profile's samples are fold's lines"
    i=$((i + 1))
done
assert_eq "$(ss basic.json frames)" \
"main|/src/app/main.cc|10
app+0x999||
foo(int)|/src/app/main.cc|50
load|/src/app/main.cc|40
helper|/src/app/main.cc|41
parse(std::string const&)|/src/app/parse.cc|
std::vector<int>::push_back(int const&)|/src/app/main.cc|20" \
  "speedscope frames: file and line (parse's two lines 30 and 31: none; app+0x999: neither)"
"$MPQ" export phases.db --format speedscope --by memlive --snapshot peak -o peak.json || fail "speedscope --by --snapshot peak"
assert_eq "$(ss peak.json profiles)" "*memlive of pk (pid 300) at its peak|bytes|34650" "--by memlive --snapshot peak: one profile"
assert_eq "$(ss peak.json 0)" \
"main;grow 30000
main;outer;inner 4000
main;small 500
main;tiny 100
main;tiny2 50" "the peak's live bytes per path"
"$MPQ" export basic.db --format speedscope --by memtot --lines --filter load -o lines.json 2>/dev/null || fail "--lines"
assert_eq "$(ss lines.json frames | tr '\n' ,)" \
  "main (main.cc:10)|/src/app/main.cc|10,load (main.cc:40)|/src/app/main.cc|40,helper (main.cc:41)|/src/app/main.cc|41," \
  "--lines: a frame per line, each with its file and line"
sqlite3 basic.db "UPDATE process SET settings = settings || ' MP_TIME=1'; UPDATE sample SET time = 1000 * ncalls" \
  || fail "cannot add times"
"$MPQ" export basic.db --format speedscope -o time.json || fail "speedscope with times"
assert_eq "$(ss time.json profiles | tail -n 1)" "time of app (pid 100)|nanoseconds|42000" "MP_TIME: a time profile in nanoseconds"
fixture basic >/dev/null
"$MPQ" export snapshots.db --format speedscope --by ncalls -o two.json || fail "speedscope of two processes"
assert_eq "$(ss two.json profiles)" "*ncalls of make (pid 20), cc (pid 21)|none|9" "two processes: both named"

# ---------------------------------------------------------------- massif
"$MPQ" export phases.db --format massif >phases.massif || fail "export --format massif failed"
# massif_head SNAPSHOT TIME BYTES TREE: a snapshot's first lines in massif.out
massif_head() {
    printf '#-----------\nsnapshot=%s\n#-----------\ntime=%s\nmem_heap_B=%s\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=%s\n' "$@"
}
HEAP='(heap allocation functions) malloc/new/new[], --alloc-fns, etc.'
{
    cat <<'EOF'
desc: mallocprof profile phases.db, pid 300, --time-unit=ms
cmd: pk --run
time_unit: ms
EOF
    massif_head 0 500 10500 detailed
    cat <<EOF
n2: 10500 $HEAP
 n1: 10000 0x200: grow (pk.c:20)
  n0: 10000 0x100: main (pk.c:10)
 n1: 500 0x300: small (pk.c:30)
  n0: 500 0x100: main (pk.c:10)
EOF
    massif_head 1 1000 34650 peak
    cat <<EOF
n4: 34650 $HEAP
 n1: 30000 0x200: grow (pk.c:20)
  n0: 30000 0x100: main (pk.c:10)
 n1: 4000 0x400: inner (inner.h:41)
  n1: 4000 0x400: outer (pk.c:40)
   n0: 4000 0x100: main (pk.c:10)
 n1: 500 0x300: small (pk.c:30)
  n0: 500 0x100: main (pk.c:10)
 n0: 150 in 2 places, all below massif's threshold (1.00%)
EOF
    massif_head 2 2000 4500 detailed
    cat <<EOF
n2: 4500 $HEAP
 n1: 4000 0x400: inner (inner.h:41)
  n1: 4000 0x400: outer (pk.c:40)
   n0: 4000 0x100: main (pk.c:10)
 n1: 500 0x300: small (pk.c:30)
  n0: 500 0x100: main (pk.c:10)
EOF
} >expected.massif
diff -u expected.massif phases.massif >diff.txt || fail "massif of phases.db: $(cat diff.txt)"
echo "  ok: massif: the three snapshots (S carried from seq 1; the peak's rows its own); inner inlined into outer; T and U merged"
assert_eq "$("$MPQ" export phases.db --format massif --time-unit B | grep -e '^time' -e '^desc' | tr '\n' ,)" \
  "desc: mallocprof profile phases.db, pid 300, --time-unit=B,time_unit: B,time=10500,time=34650,time=34750," \
  "--time-unit B: bytes allocated so far"
assert_eq "$("$MPQ" export phases.db --format massif --threshold 0.2 | sed -n '/heap_tree=peak/,/^#/p' | grep -v '^#' | tail -n 3)" \
" n1: 100 0x500: tiny (pk.c:50)
  n0: 100 0x100: main (pk.c:10)
 n0: 50 in 1 place, below massif's threshold (0.20%)" "--threshold 0.2: 69 bytes; tiny shown, tiny2 merged alone"
assert_eq "$("$MPQ" export phases.db --format massif --thread worker | grep -e '^mem_heap_B' -e '^n' | tr '\n' ,)" \
  "mem_heap_B=0,n0: 0 $HEAP,mem_heap_B=4000,n1: 4000 $HEAP,mem_heap_B=4000,n1: 4000 $HEAP," \
  "--thread worker: its 4000 bytes from the peak on"
assert_eq "$("$MPQ" export phases.db --format massif --exclude grow | grep '^mem_heap_B' | tr '\n' ,)" \
  "mem_heap_B=500,mem_heap_B=4650,mem_heap_B=4500," "--exclude grow: its bytes in no snapshot"
assert_eq "$("$MPQ" export snapshots.db --format massif --run 1 | grep -e '^time=' -e '^mem_heap_B' -e '^heap_tree' | tr '\n' ,)" \
  "time=1000,mem_heap_B=100,heap_tree=detailed,time=2000,mem_heap_B=300,heap_tree=detailed,time=3000,mem_heap_B=300,heap_tree=detailed," \
  "rows stored only when changed: seq 3 keeps fx's 300 bytes"
if ! command -v ms_print >/dev/null && ! sh "$ROOT/tests/lib/deps.sh" valgrind >deps.log 2>&1; then
    echo "SKIP: ms_print: valgrind not installed: $(tail -n 1 deps.log)"
else
    ms_print phases.massif >ms.txt 2>&1 || fail "ms_print failed: $(cat ms.txt)"
    assert_match "$(cat ms.txt)" 'Detailed snapshots: \[0, 1 \(peak\), 2\]' "ms_print: three detailed snapshots, 1 the peak"
    assert_match "$(cat ms.txt)" $'\n  1          1,000           34,650           34,650             0            0\n' \
      "ms_print: the peak's line (1000 ms, 34,650 B)"
    assert_match "$(cat ms.txt)" $'\n->86.58% \\(30,000B\\) 0x200: grow \\(pk.c:20\\)\n' "ms_print: grow's 86.58% at the peak"
    assert_match "$(cat ms.txt)" $'\n\\| ->11.54% \\(4,000B\\) 0x400: outer \\(pk.c:40\\)\n' "ms_print: outer under inner"
    assert_match "$(sed -n 1,12p ms.txt)" '33.84\^ +#+' "ms_print: the graph's peak bar (#) at 33.84 KB"
fi

# ---------------------------------------------------------------- pprof
source "$ROOT/tests/lib/npm.sh"
PINS="speedscope@1.25.0 ajv-cli@5.0.0 ajv-formats@3.0.1 pprof-format@2.3.2"
npm_pins $PINS
have_npm=1
npm_ready $PINS || { have_npm=0; echo "SKIP: npm packages ($PINS) not installed: $(tail -n 1 npm.log)"; }

# pprof FILE: sample types, the default, the totals of each, the
# functions, each location's lines (innermost first) and the mappings
pprof() {
    NPM=$NPM node - "$1" <<'EOF' || fail "$1: pprof-format cannot decode it"
const fs = require('fs'), zlib = require('zlib');
const { Profile } = require(process.env.NPM + '/node_modules/pprof-format');
const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(process.argv[2])));
const s = i => p.stringTable.strings[Number(i)];
const fn = new Map(p.function.map(f => [String(f.id), f]));
console.log('types: ' + p.sampleType.map(t => s(t.type) + '/' + s(t.unit)).join(' ') + ', default ' + s(p.defaultSampleType));
console.log('totals: ' + p.sampleType.map((t, k) => p.sample.reduce((a, x) => a + BigInt(x.value[k]), 0n)).join(' '));
console.log('functions: ' + [...new Set(p.function.map(f => s(f.name)))].sort().join(', '));
for (const l of p.location)
    if (l.line.length > 1)
        console.log('inlined: ' + l.line.map(x => s(fn.get(String(x.functionId)).name) + ':' + x.line).join(' < '));
for (const m of p.mapping) console.log('mapping ' + m.id + ': ' + s(m.filename) + ' ' + s(m.buildId));
EOF
}
"$MPQ" export basic.db --format pprof -o basic.pb.gz || fail "export --format pprof failed"
assert_eq "$(head -c 2 basic.pb.gz | od -An -tx1 | tr -d ' ')" 1f8b "pprof: gzip's magic"
if [ $have_npm = 1 ]; then
    assert_eq "$(pprof basic.pb.gz)" \
"types: alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes, default inuse_space
totals: 42 8337 8 3230
functions: app+0x999, foo(int), helper, load, main, parse(std::string const&), std::vector<int>::push_back(int const&)
inlined: helper:41 < load:40
mapping 1: /usr/bin/app abcd" \
      "pprof-format: Go's heap sample types, the fixture's ncalls, memtot, nlive, memlive; helper inlined into load"
    "$MPQ" export phases.db --format pprof --snapshot peak -o peak.pb.gz || fail "pprof --snapshot peak"
    assert_eq "$(pprof peak.pb.gz | sed -n '2p;4,5p')" \
"totals: 41 34650 41 34650
inlined: inner:41 < outer:40
mapping 1: /usr/bin/pk beef01" "pprof --snapshot peak: the peak's values"
    "$MPQ" export phases.db --format pprof --thread worker --no-inline -o worker.pb.gz || fail "pprof --thread --no-inline"
    assert_eq "$(pprof worker.pb.gz | sed -n '2,4p')" \
"totals: 4 4000 4 4000
functions: main, outer
mapping 1: /usr/bin/pk beef01" "pprof --thread worker --no-inline: its stack, inner hidden"
fi
# rules decide the frames of every format: all dropped ("[no frames]"), a
# path restarted at a root frame
printf 'drop .\n' >all.rules
printf 'root ^load$\n' >root.rules
assert_eq "$("$MPQ" export basic.db --format massif --rules all.rules | sed -n '/^n/,$p')" \
"n1: 3230 $HEAP
 n0: 3230 [no frames]" "every frame dropped: massif's one site '[no frames]'"
"$MPQ" export basic.db --format speedscope --by ncalls --rules all.rules -o all.json || fail "speedscope, all dropped"
assert_eq "$(ss all.json frames; ss all.json 0)" "[no frames]||
[no frames] 42" "every frame dropped: speedscope's one frame, without file"
"$MPQ" export basic.db --format speedscope --by memtot --rules root.rules -o root.json || fail "speedscope, root rule"
assert_eq "$(ss root.json 0 | sed -n 1p)" "load;helper 1000" "root ^load\$: the path starts at load"
if [ $have_npm = 1 ]; then
    "$MPQ" export basic.db --format pprof --rules all.rules -o all.pb.gz || fail "pprof, all dropped"
    assert_eq "$(pprof all.pb.gz | sed -n 2,3p)" "totals: 42 8337 8 3230
functions: [no frames]" "every frame dropped: pprof's one location '[no frames]', every value"
fi
if command -v go >/dev/null; then
    go tool pprof -top -sample_index=alloc_space basic.pb.gz >top.txt 2>&1 || fail "go tool pprof failed: $(cat top.txt)"
    assert_match "$(cat top.txt)" 'Total samples = 8337B' "go tool pprof: 8337 bytes allocated"
    assert_match "$(cat top.txt)" $'\n +5300B 63.57% 63.57% +5300B 63.57%  parse\\(std::string const&\\)\n' \
      "go tool pprof -top: parse's 5300 bytes"
    assert_match "$(cat top.txt)" '1000B 11.99% .* helper \(inline\)' "go tool pprof: helper inlined"
else
    echo "# go not installed: go tool pprof not run"
fi

# ---------------------------------------------------------------- a recorded program
profile af.db "$B/tests/alloc_functions" >/dev/null 2>&1
info=$("$MPQ" info af.db --format json) || fail "info failed"
totals=$(json_get "$info" '" ".join(str(j["totals"][k]) for k in ("ncalls", "memtot", "nlive", "memlive", "ncalls_nostack", "memtot_nostack"))')
assert_eq "$totals" "1162 156420 7 7000 0 0" "alloc_functions: info's totals (every allocation with a stack)"
"$MPQ" export af.db --format pprof -o af.pb.gz || fail "pprof of a recorded profile"
if [ $have_npm = 1 ]; then
    assert_eq "$(pprof af.pb.gz | sed -n 2p)" "totals: ${totals% 0 0}" "pprof of alloc_functions: info's totals, exact"
    assert_match "$(pprof af.pb.gz | sed -n 3p)" \
      'do_aligned_alloc, do_calloc, do_leak, do_malloc, do_memalign, do_posix_memalign, do_realloc, do_valloc, main' \
      "pprof of alloc_functions: its functions"
    assert_match "$(pprof af.pb.gz | grep '^mapping 1:')" "^mapping 1: $B/tests/alloc_functions [0-9a-f]{40}$" \
      "pprof: the executable first, with its build id"
fi
if command -v go >/dev/null; then
    go tool pprof -top -sample_index=alloc_space af.pb.gz >aftop.txt 2>&1 || fail "go tool pprof on af.pb.gz: $(cat aftop.txt)"
    assert_match "$(cat aftop.txt)" ' 97.66kB 63\.93% .* do_malloc$' "go tool pprof: do_malloc's 100000 bytes"
fi
"$MPQ" export af.db --format speedscope -o af.json || fail "speedscope of a recorded profile"
assert_eq "$(ss af.json profiles | sed -n 1,2p | cut -d'|' -f3 | tr '\n' ' ')" "1162 156420 " "speedscope of alloc_functions: its ncalls and memtot"
"$MPQ" export af.db --format massif -o af.massif || fail "massif of a recorded profile"
assert_eq "$(grep -e '^heap_tree' -e '^mem_heap_B' af.massif | tr '\n' ,)" \
  "mem_heap_B=5000,heap_tree=peak,mem_heap_B=7000,heap_tree=detailed," "massif of alloc_functions: its peak (5 leaks), then exit (7)"
assert_match "$(sed -n '/heap_tree=peak/,/^#/p' af.massif)" \
  $'\n n1: 5000 0x[0-9A-F]+: do_leak \\(alloc_functions.c:[0-9]+\\)\n  n0: 5000 0x[0-9A-F]+: main \\(alloc_functions.c:[0-9]+\\)' \
  "massif: do_leak's 5000 bytes called from main, with their lines"
if command -v ms_print >/dev/null; then
    ms_print af.massif >afms.txt 2>&1 || fail "ms_print on a recorded profile: $(cat afms.txt)"
    assert_match "$(cat afms.txt)" 'Detailed snapshots: \[0 \(peak\), 1\]' "ms_print: the recorded peak"
    assert_match "$(cat afms.txt)" '100.00% \(7,000B\) 0x[0-9A-F]+: do_leak' "ms_print: do_leak holds the 7,000 bytes at exit"
fi

# ---------------------------------------------------------------- errors
expect_fail 2 '^mpquery: export: missing --format \(speedscope, pprof, massif or folded\)' "$MPQ" export basic.db
expect_fail 2 "^mpquery: export: bad value 'svg' for --format \(expected speedscope, pprof, massif or folded\)" \
  "$MPQ" export basic.db --format svg
expect_fail 2 "^mpquery: export: bad value 'x' for --by \(expected ncalls, " "$MPQ" export basic.db --format speedscope --by x
expect_fail 2 '^mpquery: export: --by goes with --format speedscope or folded' "$MPQ" export basic.db --format pprof --by memlive
expect_fail 2 '^mpquery: export: --lines and --module go with --format speedscope or folded' \
  "$MPQ" export basic.db --format massif --lines
expect_fail 2 '^mpquery: export: --time-unit goes with --format massif' "$MPQ" export basic.db --format pprof --time-unit B
expect_fail 2 "^mpquery: export: bad value 'i' for --time-unit \(expected ms or B\)" "$MPQ" export basic.db --format massif --time-unit i
expect_fail 2 "^mpquery: export: bad value '101' for --threshold" "$MPQ" export basic.db --format massif --threshold 101
expect_fail 2 '^mpquery: export: --format massif writes every snapshot: no --snapshot' \
  "$MPQ" export phases.db --format massif --snapshot peak
expect_fail 2 '^mpquery: snapshots.db: --format massif writes one process, the selection has 2 \(make \(pid 20\), cc \(pid 21\)\): choose one with --pid$' \
  "$MPQ" export snapshots.db --format massif
expect_fail 1 '^mpquery: no/such/dir/x.json: No such file or directory$' "$MPQ" export basic.db --format speedscope -o no/such/dir/x.json
expect_fail 1 '^mpquery: /dev/full: write error: No space left on device$' "$MPQ" export basic.db --format pprof -o /dev/full
expect_fail 2 '^mpquery: export: missing DB' "$MPQ" export --format pprof
assert_match "$("$MPQ" --help)" 'export +files for speedscope, go tool pprof, ms_print, flamegraph.pl' "export in the command list"
assert_match "$("$MPQ" export --help)" 'example:' "export --help"

# ---------------------------------------------------------------- the tools
[ $have_npm = 1 ] || exit 0
SCHEMA=$NPM/node_modules/speedscope/dist/release/file-format-schema.json
for f in basic.json peak.json lines.json time.json two.json af.json; do
    node "$NPM/node_modules/ajv-cli/dist/index.js" validate -s "$SCHEMA" -d "$f" -c ajv-formats --errors=line >ajv.txt 2>&1 \
        || fail "$f is not valid against speedscope's schema: $(cat ajv.txt)"
done
echo "  ok: every speedscope file valid against speedscope 1.25.0's file-format-schema.json (ajv-cli)"
sed 's/"unit": "none"/"unit": "count"/' basic.json >bad.json
node "$NPM/node_modules/ajv-cli/dist/index.js" validate -s "$SCHEMA" -d bad.json -c ajv-formats >/dev/null 2>&1 \
    && fail "ajv-cli accepts a unit speedscope does not know"
echo "  ok: the validator rejects a unit outside the schema's"

# speedscope's web app from the npm package, offline, in headless chromium:
# the file goes in as its command line does it (a script calling
# speedscope.loadFileFromBase64, named by #localProfilePath=)
if ! sh "$ROOT/tests/lib/deps.sh" chromium >deps.log 2>&1 || ! command -v chromium >/dev/null; then
    echo "SKIP: chromium not installed: $(tail -n 1 deps.log)"
    exit 0
fi
# app FILE VIEW: the page's text, one line per DOM text node
app() {
    python3 -c 'import base64, json, sys
d = open(sys.argv[1], "rb").read()
print("speedscope.loadFileFromBase64(%s, %s)" % (json.dumps(sys.argv[1]), json.dumps(base64.b64encode(d).decode())))' \
        "$1" >"$1.js"
    timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" --virtual-time-budget=10000 \
        --dump-dom "file://$NPM/node_modules/speedscope/dist/release/index.html#localProfilePath=$T/$1.js&view=$2" \
        2>app.err >app.html || fail "chromium failed on $1"
    python3 -c 'import html, re, sys
for t in re.split(r"<[^>]*>", open(sys.argv[1]).read()):
    if t.strip(): print(html.unescape(t.strip()))' app.html
}
app basic.json sandwich >basic.txt
assert_match "$(cat basic.txt)" $'^basic.json - speedscope\n' "speedscope: the file loaded (its name in the title)"
assert_match "$(tr '\n' '|' <basic.txt)" \
  '\|ncalls of app \(pid 100\)\|42\|2\|memtot of app \(pid 100\)\|8.14 KB\|3\|nfree of app \(pid 100\)\|34\|4\|nlive of app \(pid 100\)\|8\|' \
  "speedscope: the profiles listed with their totals"
for name in 'parse(std::string const&)' 'std::vector<int>::push_back(int const&)' helper 'foo(int)' app+0x999 load main; do
    grep -qxF -- "$name" basic.txt || fail "speedscope's sandwich view does not list $name"
done
echo "  ok: speedscope's sandwich view lists every frame of the memtot profile"
assert_match "$(tr '\n' '|' <basic.txt)" '\|5.18 KB \(64%\)\|5.18 KB \(64%\)\|parse\(std::string const&\)\|' \
  "speedscope: parse's 5300 bytes, 64%, self and total"
app af.json sandwich >af.txt
for name in do_malloc do_calloc do_realloc do_posix_memalign do_aligned_alloc do_memalign do_valloc do_leak main; do
    grep -qxF -- "$name" af.txt || fail "speedscope does not list $name of alloc_functions"
done
echo "  ok: speedscope lists alloc_functions' functions"
