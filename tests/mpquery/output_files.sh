#!/bin/bash
# -o across the commands that write files (tempfile.c's output_kind and
# output_close): a name of a format the command cannot write is refused
# (exit 2, no file), naming what it writes; a name without an extension is
# the command's default; a file made says so in one line on stderr, after
# everything else, -q silencing it; a pipe or device written as given says
# nothing. flame.sh, report.sh and export.sh test their own commands more.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null
fixture snapshots >/dev/null
cp basic.db b.db

# wrote FILE: the command's stderr with the size as S
said() { sed -E 's/[0-9.]+ (B|KiB|MiB)\)$/S)/' err.txt; }

"$MPQ" timeline snapshots.db -o t.csv >out.txt 2>err.txt || fail "timeline -o t.csv failed"
assert_eq "$(head -1 t.csv)" "time,pid,seq,reason,label,ncalls,memtot,memlive,maxlive,rss" "timeline -o NAME.csv: csv"
assert_eq "$(cat out.txt; said)" "mpquery: wrote t.csv (S)" "timeline -o: one line says what it wrote"
"$MPQ" timeline snapshots.db -o t.json 2>/dev/null && "$MPQ" timeline snapshots.db -o plot.svg 2>/dev/null \
  && "$MPQ" timeline snapshots.db -o table 2>/dev/null || fail "timeline -o json, svg, no extension"
assert_eq "$(head -c 9 t.json; echo; head -c 5 plot.svg; echo; head -1 table | awk '{print $1}')" '{"rows": 
<?xml
time' "timeline: json, SVG and (no extension) text from the names"
expect_fail 2 '^mpquery: timeline: -o t.png: timeline writes an SVG plot \(\*\.svg\), text \(\*\.txt\), csv \(\*\.csv\), json \(\*\.json\) \(see mpquery timeline --help\)$' \
  "$MPQ" timeline snapshots.db -o t.png
"$MPQ" timeline snapshots.db --format csv -o t.png 2>/dev/null || fail "timeline --format csv -o any name"

"$MPQ" diff basic.db b.db --flame -o d.svg >out.txt 2>err.txt || fail "diff --flame -o failed"
assert_eq "$(cat out.txt; said)" "mpquery: wrote d.svg (9 frames, S)" "diff --flame -o: the 'wrote' line"
"$MPQ" diff basic.db b.db --flame -o d.svg -q >out.txt 2>&1 || fail "diff --flame -q failed"
assert_eq "$(cat out.txt)" "" "diff --flame -q: nothing said"

"$MPQ" flame basic.db --filter '^parse' -o f.svg 2>err.txt || fail "flame --filter -o failed"
assert_eq "$(said)" "ignored 4 stacks (34 calls, 3037 bytes) with 1 filters
mpquery: wrote f.svg (4 frames, S)" "flame: what the filters left out, then the 'wrote' line, last"

"$MPQ" flame basic.db -o /dev/stdout 2>err.txt | cat >pipe.svg || fail "flame -o /dev/stdout failed"
assert_eq "$(head -c 5 pipe.svg; cat err.txt)" "<?xml" "-o /dev/stdout, a pipe: written through, nothing said"

"$MPQ" merge -o m.db basic.db 2>err.txt || fail "merge failed"
assert_match "$(cat err.txt)" '^mpquery: merged 1 file into m\.db: 1 run ' "merge: its own summary line, once"
assert_eq "$(wc -l <err.txt)" 1 "merge: one line"
assert_eq "$(ls | grep -c '\.tmp-')" 0 "no temporary file left next to the outputs"
