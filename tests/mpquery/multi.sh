#!/bin/bash
# Several databases given to a reading command are one profile (merged into
# a temporary database that is removed when mpquery exits): top a.db b.db
# is top a.db + top b.db row by row; by default each file's latest run is
# selected, --run all takes every run, --run N the id info shows; info
# lists the files and their runs; diff takes a side of several files
# before and after '--'. Profiles of tests/progs/alloc_functions.c and
# tags_threads.c (exact allocations).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
export TMPDIR=$T/tmp
mkdir "$TMPDIR"

# f1.db: tags_threads (run x1), then alloc_functions (x2, its latest); f2.db: alloc_functions (y1)
record_run x1 f1.db "$B/tests/tags_threads"
record_run x2 f1.db "$B/tests/alloc_functions"
record_run y1 f2.db "$B/tests/alloc_functions"
no_temp() { assert_eq "$(ls "$TMPDIR" | wc -l)" 0 "$1: no temporary file left"; }

echo "# top, fold, hist: the sum of each file's"
# sum_rows KEYCOLS: csv rows (header first) summed per key (the last KEYCOLS columns), sorted
sum_rows() {
    awk -F, -v k="$1" 'NR == 1 { next } { key = ""; for (i = NF - k + 1; i <= NF; i++) key = key "," $i
        for (i = 1; i <= NF - k; i++) s[key, i] += $i; n[key] = NF - k }
        END { for (key in n) { line = ""; for (i = 1; i <= n[key]; i++) line = line (i > 1 ? "," : "") s[key, i]; print line key } }' | sort
}
for cmd in "top --functions -n 0" "top --by ncalls -n 0"; do
    cols=1-; [ "$cmd" = "top --functions -n 0" ] || cols=1-7,10     # not top's ids: stack, stacks
    both=$("$MPQ" $cmd --format csv f1.db f2.db | cut -d, -f$cols | sum_rows 1)
    each=$( { "$MPQ" $cmd --format csv f1.db; "$MPQ" $cmd --format csv f2.db | tail -n +2; } | cut -d, -f$cols | sum_rows 1)
    assert_eq "$both" "$each" "$cmd f1.db f2.db = the sum of f1.db's and f2.db's rows"
done
assert_eq "$("$MPQ" fold f1.db f2.db)" "$( { "$MPQ" fold f1.db; "$MPQ" fold f2.db; } \
    | awk '{ v = $NF; $NF = ""; s[$0] += v } END { for (p in s) print p s[p] }' | sort)" "fold: the sum of each file's lines"
assert_eq "$("$MPQ" top --functions --format csv f1.db f2.db | grep -e ',do_malloc$' -e ',do_leak$' | cut -d, -f1,2,5)" \
"2000,200000,0
14,14000,14000" "top --functions: do_malloc and do_leak of the latest runs x2 and y1"
assert_eq "$("$MPQ" hist f2.db --format csv | grep '^64,')|$("$MPQ" hist f1.db f2.db --format csv | grep '^64,')" \
    "64,128,1006,100600,0,0|64,128,2012,201200,0,0" "hist: [64, 128) twice do_malloc's 1000 blocks of 100 bytes, do_valloc's 5, a realloc's"
assert_eq "$("$MPQ" top f1.db f1.db --format csv)" "$("$MPQ" top f1.db --format csv)" "a file given twice counts once"

echo "# selection: each file's latest run; --run all; --run N"
assert_eq "$("$MPQ" top --functions --format csv f1.db f2.db | grep -c ',in_a$')" 0 "default: not f1.db's first run"
assert_eq "$("$MPQ" top --functions --format csv --run all f1.db f2.db | grep -e ',in_a$' -e ',do_malloc$' | cut -d, -f1,2)" \
"2000,200000
4,4000" "--run all: every run of both files"
assert_eq "$("$MPQ" top --functions --format csv --run 1 f1.db f2.db | grep -c ',do_malloc$')" 0 \
    "--run 1: the first run started (x1, tags_threads) alone"
assert_eq "$("$MPQ" tree --run 1 f1.db f2.db --format csv | cut -d, -f3,5 | grep '^A,')" "A,4000" "tree --run 1: its scope A"
expect_fail 2 '^mpquery: f1\.db \(and 1 more\): no run 9 in these profiles \(see mpquery info\)$' "$MPQ" top f1.db f2.db --run 9
no_temp "after an error"

echo "# info: the files, their runs"
assert_eq "$("$MPQ" info f1.db f2.db | sed -n '1,15p' | sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}/DATE/')" \
"profile f1.db (and 1 more) (schema version 4)

files:
  f1.db
    run 1  x1  1 process
    run 2  x2  1 process  (latest)
  f2.db
    run 3  y1  1 process

runs:
    run 1  DATE  1 process
  * run 2  DATE  1 process
  * run 3  DATE  1 process

runs 2, 3 (the latest of each file)" "text: files and runs first, the selected runs marked"
json=$("$MPQ" info f1.db f2.db --format json)
assert_eq "$(json_get "$json" 'j["file"], j["selected_runs"], [(f["path"], f["latest"], [(r["id"], r["token"], r["processes"]) for r in f["runs"]]) for f in j["files"]]')" \
    "('f1.db (and 1 more)', [2, 3], [('f1.db', 2, [(1, 'x1', 1), (2, 'x2', 1)]), ('f2.db', 3, [(3, 'y1', 1)])])" \
    "json: \"files\" with their runs and latest run, \"selected_runs\""
assert_eq "$(json_get "$json" 'j["totals"]["ncalls"]')" 2324 "json: the totals of the two alloc_functions runs"
assert_eq "$("$MPQ" info --run all f1.db f2.db --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["ncalls"])')" \
    "$(( 2324 + $("$MPQ" info f1.db --run 1 --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["ncalls"])') ))" \
    "--run all: tags_threads' calls too"

echo "# diff: a side of several files"
assert_eq "$("$MPQ" diff --functions --format csv --bytes f1.db f2.db -- f2.db | grep ',do_malloc$')" \
    "200000,100000,-100000,0.500,do_malloc" "diff f1.db f2.db -- f2.db: side a sums both files"
assert_eq "$("$MPQ" diff --format csv f1.db f2.db)" "$("$MPQ" diff --format csv f1.db -- f2.db)" "two operands: with or without '--'"
expect_fail 2 "^mpquery: diff: several profiles a side go around '--': A1\.db A2\.db -- B1\.db B2\.db \(see mpquery diff --help\)$" \
    "$MPQ" diff f1.db f2.db f2.db
expect_fail 2 "^mpquery: diff: needs profiles on both sides of '--': A1\.db A2\.db -- B1\.db B2\.db \(see mpquery diff --help\)$" \
    "$MPQ" diff f1.db f2.db --
expect_fail 2 '^mpquery: diff: needs two profiles A and B \(see mpquery diff --help\)$' "$MPQ" diff f1.db

echo "# the other commands take several files"
for cmd in "leaks" "timeline --format csv" "flame -o f.svg" "export --format speedscope -o s.json" "report -o r.html"; do
    out=$("$MPQ" $cmd f1.db f2.db 2>&1) || fail "$cmd f1.db f2.db: $out"
    echo "  ok: $cmd"
done
stack=$("$MPQ" top f1.db f2.db --format csv -n 1 | tail -1 | cut -d, -f8)
assert_match "$("$MPQ" show f1.db f2.db "$stack" --bytes | head -1)" "^stack $stack: ncalls 2000 memtot 200000 " \
    "show DB... STACK: the stack's counters summed over the selected runs"
assert_eq "$(python3 -c 'import json; print(json.load(open("s.json"))["name"])')" "f1.db (and 1 more)" "export names the files"
expect_fail 2 '^mpquery: nosuch\.db: No such file or directory$' "$MPQ" top f1.db nosuch.db
no_temp "after every command"
