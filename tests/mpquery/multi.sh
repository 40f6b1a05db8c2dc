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
"profile f1.db (and 1 more) (schema version 5)

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

echo "# one program of a tree: --exe NAME|PATH, --pid PID --image N"
# exec.db: pid 30 ran sh, exec'd python3.11, exec'd sh again; its children
# 31 (/usr/bin/cc) and 32 (/opt/cc/bin/cc); a process row per image
fixture exec >/dev/null
xf() { "$MPQ" fold exec.db --by ncalls "$@" | tr '\n' ' '; }
assert_eq "$(xf)" "main;fa 5 main;fb 2 main;fc 24 " "exec.db: every image of every process"
assert_eq "$(xf --exe sh)" "main;fa 5 " "--exe NAME: both images of pid 30 that ran sh (1 + 4 calls)"
assert_eq "$(xf --exe cc)" "main;fc 24 " "--exe NAME: the file name of either path (8 + 16 calls)"
assert_eq "$(xf --exe /usr/bin/cc)" "main;fc 8 " "--exe PATH: that path only"
assert_eq "$(xf --exe python3.11)" "main;fb 2 " "--exe: the image pid 30 exec'd"
assert_eq "$(xf --pid 30)" "main;fa 5 main;fb 2 " "--pid without --image: all of that pid's images"
assert_eq "$(xf --pid 30 --image 1)" "main;fa 1 " "--image 1: the program the pid started with"
assert_eq "$(xf --pid 30 --image 2)" "main;fb 2 " "--image 2: after the first exec"
assert_eq "$(xf --pid 30 --image 3)" "main;fa 4 " "--image 3: after the second"
assert_eq "$(xf --pid 30 --exe sh)" "main;fa 5 " "--pid and --exe together"
assert_eq "$("$MPQ" top exec.db --exe cc --bytes -n 1)" \
"ncalls  memtot      %  stack  where
    24    2400  100.0         (total: 1 stacks in 1 rows)
    24    2400  100.0  4      fc < main" "top --exe cc"
assert_eq "$("$MPQ" info exec.db --pid 30 --image 2 --format json | json_get "$(cat)" '[(p["pid"], p["exe"]) for p in j["processes"]]')" \
  "[(30, '/usr/bin/python3.11')]" "info --pid 30 --image 2: that image only"
assert_eq "$("$MPQ" timeline exec.db --exe python3.11 --format csv)" "time,pid,seq,reason,label,ncalls,memtot,memlive,maxlive,rss
1.500,30,1,exec,,2,200,0,200,
1.500,0,,,,2,200,0,,"  "timeline --exe"
expect_fail 2 "^mpquery: exec.db: no process of executable 'perl' in the selected run \(there are: sh, python3.11, cc\)$" \
  "$MPQ" top exec.db --exe perl
expect_fail 2 "^mpquery: exec.db: no process of executable '/bin/cc' in the selected run \(there are: /bin/sh, /usr/bin/python3.11, /usr/bin/cc, /opt/cc/bin/cc\)$" \
  "$MPQ" fold exec.db --exe /bin/cc
expect_fail 2 "^mpquery: exec.db: no process of executable 'python3.11' with that pid in the selected run \(there are: cc\)$" \
  "$MPQ" fold exec.db --exe python3.11 --pid 31
expect_fail 2 '^mpquery: exec.db: no image 4 of pid 30 \(it ran 3: 1 /bin/sh, 2 /usr/bin/python3.11, 3 /bin/sh\)$' \
  "$MPQ" fold exec.db --pid 30 --image 4
expect_fail 2 '^mpquery: exec.db: no image 2 of pid 30 running sh \(it ran 3: 1 /bin/sh, 2 /usr/bin/python3.11, 3 /bin/sh\)$' \
  "$MPQ" fold exec.db --pid 30 --image 2 --exe sh
expect_fail 2 '^mpquery: exec.db: no image 2 of pid 31 \(it ran 1: 1 /usr/bin/cc\)$' "$MPQ" flame exec.db --pid 31 --image 2
expect_fail 2 '^mpquery: exec.db: --image 2 needs --pid: the process whose programs it counts$' "$MPQ" top exec.db --image 2
expect_fail 2 "^mpquery: top: bad value '0' for --image \(expected a number from 1\)" "$MPQ" top exec.db --pid 30 --image 0
expect_fail 2 "^mpquery: exec.db: no process with pid 99 in the selected run$" "$MPQ" top exec.db --pid 99 --image 1
expect_fail 2 '^mpquery: top: --image does not apply to --server' "$MPQ" top --server http://127.0.0.1:1/ --image 1
