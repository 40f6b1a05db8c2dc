#!/bin/bash
# mpquery merge: profiles of tests/progs/alloc_functions.c (exact
# allocations; three runs in two files, one file holding two runs) merged
# into one database that answers every reading command as the inputs given
# together; tag scopes named differently in two files and stored as files
# before a1de025 stored them (offset = the process's tag index, alike in
# both) stay distinct, and take the recorder's offsets; a file merged with
# itself, and a merge merged again with an input, store each run and
# process once; files of format versions 1 and 2 merge; bad inputs and
# outputs fail in one line and leave no file.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

record_run a1 r1.db "$B/tests/alloc_functions"
record_run a2 r1.db "$B/tests/alloc_functions"
record_run b1 r2.db "$B/tests/alloc_functions"
# the rows of every table, for "stores each run once"
tables="run process thread snapshot sample totals hist stack_hist stack frame module function file"
counts() {
    local t out=
    for t in $tables; do out="$out $t=$(q "$1" "SELECT count(*) FROM $t")"; done
    echo "$out"
}

echo "# merge two files, three runs"
"$MPQ" merge -o m.db r1.db r2.db 2>err || fail "merge failed: $(cat err)"
assert_match "$(cat err)" '^mpquery: merged 2 files into m\.db: 3 runs \(0 already there\), 3 processes, [0-9]+ stacks, 48 sample rows in [0-9.]+ s$' \
    "the summary line (16 sample rows a run)"
assert_eq "$(wc -l < err)" 1 "one line on stderr"
assert_eq "$(q m.db 'SELECT group_concat(token) FROM (SELECT token FROM run ORDER BY id)')" "a1,a2,b1" \
    "runs numbered by start time: the latest started has the largest id"
assert_eq "$(q m.db 'SELECT count(*) FROM process')|$(q m.db 'SELECT count(*) FROM sample')" "3|48" "three processes, every sample row"
assert_eq "$(q m.db 'SELECT count(*) FROM stack')" "$(q r2.db 'SELECT count(*) FROM stack')" \
    "stacks shared by content: the three runs of one program have the stacks of one"
assert_eq "$(q m.db 'SELECT count(*) FROM frame')" "$(q r2.db 'SELECT count(*) FROM frame')" "frames too"
assert_eq "$(q m.db 'PRAGMA user_version')" 5 "the current format"
assert_eq "$("$MPQ" sql m.db 'SELECT count(*) AS n FROM stack_totals' --format csv)" "n
$(q r2.db 'SELECT count(DISTINCT stack) FROM sample')" "mpquery's schema check accepts it (sql runs its views)"

echo "# every command: the merged file = the inputs given together"
big=$(q m.db "SELECT stack FROM sample ORDER BY memtot DESC, stack LIMIT 1")
for cmd in "top" "top --functions --inclusive" "top --by memlive --format csv" "fold" "fold --by ncalls" "leaks" \
           "hist" "hist --stack $big" "tree" "timeline --format csv" "export --format folded" "diff"; do
    if [ "$cmd" = diff ]; then
        merged=$("$MPQ" diff m.db m.db --a-run 1 --b-run 3 --functions --all 2>&1 | grep -v "^a: ")      # the legend names the files
        together=$("$MPQ" diff --a-run 1 --b-run 3 --functions --all r1.db r2.db -- r1.db r2.db 2>&1 | grep -v "^a: ")
    else
        merged=$("$MPQ" $cmd m.db --run all 2>&1) || fail "$cmd m.db: $merged"
        together=$("$MPQ" $cmd r1.db r2.db --run all 2>&1) || fail "$cmd r1.db r2.db: $together"
    fi
    [ "$merged" == "$together" ] || fail "$cmd: the merged file [$merged] differs from the inputs together [$together]"
    echo "  ok: $cmd: $(printf '%s\n' "$merged" | wc -l) lines alike"
done
info_body() { python3 -c 'import json,sys; j=json.load(sys.stdin); j.pop("file"); j.pop("files", None); print(json.dumps(j))'; }
[ "$("$MPQ" info m.db --run all --format json | info_body)" == "$("$MPQ" info r1.db r2.db --run all --format json | info_body)" ] \
    || fail "info --format json: the merged file differs from the inputs together"
echo "  ok: info --format json: everything but the file names alike"
assert_eq "$("$MPQ" top m.db --run all --functions --bytes -n 2)" \
"self.ncalls  self.memtot  self%  inclusive.memtot  inclusive%  function
       3486       469260  100.0            469260       100.0  (total: 8 functions)
       3000       300000   63.9            300000        63.9  do_malloc
         60        63000   13.4             63000        13.4  do_realloc" "top --functions: three runs' allocations summed"
assert_eq "$("$MPQ" leaks m.db --run all | tail -1)" \
    "21 leaked blocks (20.5 KiB) in 1 stack" "leaks: 7 blocks a run"
assert_eq "$("$MPQ" top m.db --functions --format csv | grep ',do_malloc$' | cut -d, -f1,2)" "1000,100000" \
    "default selection: the latest run (b1) alone"

echo "# a file merged with itself, a merge with one of its inputs: each run once"
"$MPQ" merge -o s.db r1.db r1.db 2>err || fail "merge r1.db r1.db failed: $(cat err)"
assert_match "$(cat err)" ' 2 runs \(2 already there\), 2 processes, ' "the summary: two runs, both in both inputs"
assert_eq "$(counts s.db)" "$(counts r1.db)" "r1.db with itself: the rows of r1.db"
assert_eq "$("$MPQ" fold s.db --run all)" "$("$MPQ" fold r1.db --run all)" "and its answers"
"$MPQ" merge -o m2.db m.db r2.db 2>err || fail "merge m.db r2.db failed: $(cat err)"
assert_match "$(cat err)" ' 3 runs \(1 already there\), 3 processes, ' "m.db + r2.db: b1 was already there"
assert_eq "$(counts m2.db)" "$(counts m.db)" "m.db + r2.db: the rows of m.db"
cp m.db m3.db
"$MPQ" merge -o m3.db m3.db r1.db 2>/dev/null || fail "merge -o m3.db m3.db r1.db failed"
assert_eq "$(counts m3.db)" "$(counts m.db)" "OUT as an input, merged with r1.db in place: the rows of m.db"
assert_eq "$("$MPQ" top m3.db --run all --format csv)" "$("$MPQ" top m.db --run all --format csv)" "and top, ids and all"
assert_eq "$(ls | grep -c 'tmp-')" 0 "no temporary file left"

echo "# tag scopes: by name across files"
tags() { q "$1" "SELECT fn.name || '=' || f.offset FROM frame f JOIN module m ON m.id = f.module
                 JOIN function fn ON fn.id = f.function WHERE m.path = '[tag]' ORDER BY fn.name"; }
old_offsets() {     # the offsets files had before a1de025: the tag's index, per process, from BASE
    sqlite3 "$1" "UPDATE frame SET offset = $2 + (SELECT count(*) FROM frame g WHERE g.module = frame.module
                  AND g.id < frame.id) WHERE module = (SELECT id FROM module WHERE path = '[tag]')" || fail "cannot rewrite $1"
}
record_run t1 t1.db "$B/tests/tags_threads"
record_run t2 t2.db "$B/demos/request_loop"
record_run t3 t3.db "$B/tests/tags_threads"
expected=$( { tags t1.db; tags t2.db; } | sort)
assert_eq "$(tags t1.db | tr '\n' ' ')" "$(tags t3.db | tr '\n' ' ')" "the recorder names a tag's frame alike in two files"
tree_csv() { "$MPQ" tree "$@" --run all --format csv | tail -n +2 | sed -E 's/\(pid [0-9]+\)/(pid)/' | sort; }
expected_tree=$( { tree_csv t1.db; tree_csv t2.db; tree_csv t3.db; } | sort)
old_offsets t1.db 0; old_offsets t2.db 0; old_offsets t3.db 10
assert_eq "$(q t1.db "SELECT count(*) FROM frame f JOIN module m ON m.id = f.module WHERE m.path = '[tag]' AND f.offset = 0")|$(
           q t2.db "SELECT count(*) FROM frame f JOIN module m ON m.id = f.module WHERE m.path = '[tag]' AND f.offset = 0")" "1|1" \
    "t1.db and t2.db as older files: different tags at offset 0"
"$MPQ" merge -o tm.db t1.db t2.db t3.db 2>/dev/null || fail "merge of the tag files failed"
assert_eq "$(tags tm.db)" "$expected" "merged: one frame a tag name (A, B, C, W once for t1 and t3), at the recorder's offsets"
assert_eq "$(tree_csv tm.db)" "$expected_tree" "tree: every file's scopes, named as they were"
assert_eq "$("$MPQ" tree tm.db --run all --format csv | grep -c ',1,request,')" 1 "request_loop's scope 'request' in the merge"

echo "# format versions 1 and 2"
old_fixture 1
old_fixture 2 phases
fixture basic >/dev/null
fixture phases >/dev/null
"$MPQ" merge -o old.db v1.db v2.db basic.db 2>err || fail "merge of versions 1, 2 and 3 failed: $(cat err)"
assert_match "$(cat err)" ' 2 runs \(1 already there\), 2 processes, ' "v1.db and basic.db hold one run, one process: stored once"
assert_eq "$(q old.db 'PRAGMA user_version')" 5 "the output has the current format"
assert_eq "$("$MPQ" top old.db --run all --format csv)" "$("$MPQ" top basic.db phases.db --run all --format csv)" \
    "top: as the current-format files (ntemp, ended read with their defaults)"
for s in 1 peak last; do
    assert_eq "$("$MPQ" fold old.db --run 1 --snapshot $s)" "$("$MPQ" fold phases.db --snapshot $s)" \
        "phases' process at snapshot $s (interval, peak and exit rows in seq order)"
done

echo "# errors: one line, exit 2, nothing left"
echo "not a database" > text.db
mkdir dir
cp m.db keep.db
expect_fail 2 '^mpquery: nosuch\.db: No such file or directory$' "$MPQ" merge -o e.db r1.db nosuch.db
expect_fail 2 '^mpquery: text\.db: not a mallocprof profile \(not an SQLite database\)$' "$MPQ" merge -o e.db text.db r1.db
expect_fail 2 '^mpquery: merge: missing -o OUT \(see mpquery merge --help\)$' "$MPQ" merge r1.db r2.db
expect_fail 2 '^mpquery: merge: missing the databases to merge \(see mpquery merge --help\)$' "$MPQ" merge -o e.db
expect_fail 2 '^mpquery: dir: is a directory$' "$MPQ" merge -o dir r1.db
expect_fail 2 '^mpquery: nosuch\.db: No such file or directory$' "$MPQ" merge -o keep.db keep.db nosuch.db
[ ! -e e.db ] || fail "a failed merge left e.db"
cmp -s keep.db m.db || fail "a failed merge into keep.db changed it"
assert_eq "$(ls | grep -c 'tmp-')|$(ls dir | wc -l)" "0|0" "no output, no temporary file, keep.db as it was"
