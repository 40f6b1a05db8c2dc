#!/bin/bash
# mpquery leaks: the blocks still live at the selected snapshot, by path
# after rules, largest bytes first, and one summary line; --filter,
# --exclude, --suppressions (what they ignore, counted exactly), csv, json,
# selection. On the basic fixture (tests/lib/fixtures/basic.sql: live
# blocks are ncalls - nfree of B 4 (3100 bytes), D 3 (30), F 1 (100)) and on
# recorded programs: alloc_functions leaks 7 blocks of 1000 bytes in
# do_leak, threads_cross_free 12 blocks of 64 bytes in thread_leak (plus
# the 4 DTVs glibc keeps with its cached thread stacks). Also top --by nlive.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null
# the counting below in bytes and whole names (text is for people by
# default: see the end)
leaks_raw() { "$MPQ" leaks "$@" --bytes --signatures; }

assert_eq "$(leaks_raw basic.db)" \
"blocks  bytes  stack  where
     4   3100  8      parse(std::string const&) < main
     1    100  18     parse(std::string const&) < parse(std::string const&) < main
     3     30  13     foo(int) < main
8 leaked blocks (3230 bytes) in 3 stacks" \
  "leaks: live blocks and bytes by stack, largest bytes first, the summary"
assert_eq "$(q basic.db 'SELECT SUM(ncalls - nfree), SUM(memlive) FROM sample')" "8|3230" "... which SQL agrees with"

# order: bytes, then blocks, then stack id
NO_PROFILE_CHECK="$NO_PROFILE_CHECK tie.db"   # made by hand
cp basic.db tie.db && sqlite3 tie.db "UPDATE sample SET memlive = 100, memtot = 100 WHERE stack = 13" || fail "cannot derive tie.db"
assert_eq "$(leaks_raw tie.db --format csv | cut -d, -f1-3)" \
"blocks,bytes,stack
4,3100,8
3,100,13
1,100,18" "equal bytes: more blocks first"
sqlite3 tie.db "UPDATE sample SET ncalls = 1 WHERE stack = 13" || fail "cannot derive tie.db"
assert_eq "$(leaks_raw tie.db --format csv | cut -d, -f1-3 | tail -2)" \
"1,100,13
1,100,18" "equal bytes and blocks: lower stack id first"

# rows are paths after rules: stacks merged, counting only leaking ones
printf 'drop ^(foo|parse)\n' > merge.rules
assert_eq "$(leaks_raw basic.db --rules merge.rules)" \
"blocks  bytes  stack  where
     8   3230  8+2    main
8 leaked blocks (3230 bytes) in 3 stacks (1 rows)" \
  "B, D, F merged into main: the largest stack's id, +2"

# display and selection options, as top's
assert_eq "$(leaks_raw basic.db -n 1)" \
"blocks  bytes  stack  where
     4   3100  8      parse(std::string const&) < main
8 leaked blocks (3230 bytes) in 3 stacks" \
  "-n 1: one row; the summary counts every leak"
assert_eq "$(leaks_raw basic.db -n 1 --depth 1 --lines | sed -n 2p)" \
  "     4   3100  8      parse(std::string const&) (parse.cc:30) < …" "--depth 1 --lines"
assert_eq "$(leaks_raw basic.db --thread 101 | tail -1)" \
  "1 leaked block (100 bytes) in 1 stack" "--thread 101: the worker's block"
fixture snapshots >/dev/null
assert_eq "$(leaks_raw snapshots.db --format csv | cut -d, -f1,2,5)" "blocks,bytes,where
2,20,fy < main" "default: the latest run, each process at exit (pid 20 freed all of fx)"
assert_eq "$(leaks_raw snapshots.db --run 1 --format csv | cut -d, -f1,2,5)" "blocks,bytes,where
3,300,fx < main" "--run 1: fx's row carried from seq 2; fy freed all"
assert_eq "$(leaks_raw snapshots.db --run 1 --snapshot 1 --format csv | cut -d, -f1,2,5)" "blocks,bytes,where
1,100,fx < main" "--snapshot 1: live at that snapshot"

# --filter, --exclude, --suppressions: ignored leaks are counted, never hidden
assert_eq "$(leaks_raw basic.db --exclude '^parse')" \
"blocks  bytes  stack  where
     3     30  13     foo(int) < main
3 leaked blocks (30 bytes) in 1 stack; ignored 2 stacks (5 blocks, 3200 bytes) with 1 filters" "--exclude: B and F ignored"
assert_eq "$(leaks_raw basic.db --filter 'foo' | tail -1)" \
  "3 leaked blocks (30 bytes) in 1 stack; ignored 2 stacks (5 blocks, 3200 bytes) with 1 filters" "--filter: only D kept"
assert_eq "$(leaks_raw basic.db --filter main --exclude foo | tail -1)" \
  "5 leaked blocks (3200 bytes) in 2 stacks; ignored 1 stacks (3 blocks, 30 bytes) with 2 filters" "--filter and --exclude: 2 filters"
assert_eq "$(leaks_raw basic.db --exclude helper --exclude push_back | tail -1)" \
  "8 leaked blocks (3230 bytes) in 3 stacks; ignored 0 stacks (0 blocks, 0 bytes) with 2 filters" \
  "stacks without live blocks (A, C) are not counted as ignored"

cat > known.supp <<'S'
# known leaks of the fixture
drop ^foo\(int\)$
S
assert_eq "$(leaks_raw basic.db --suppressions known.supp | tail -1)" \
  "5 leaked blocks (3200 bytes) in 2 stacks; ignored 1 stacks (3 blocks, 30 bytes) with 1 filters" "--suppressions: a drop rule names a known leak"
cat > renamed.supp <<'S'
replace ^parse\(.*\)$ => PARSER
prune ^PARSER$
replace ^main$ => MAIN
S
assert_eq "$(leaks_raw basic.db --suppressions renamed.supp)" \
"blocks  bytes  stack  where
     3     30  13     foo(int) < main
3 leaked blocks (30 bytes) in 1 stack; ignored 2 stacks (5 blocks, 3200 bytes) with 1 filters" \
  "suppressions: replace rewrites only what the rules below it test (names shown unchanged, not counted)"
printf 'root ^foo\n' > root.supp
assert_eq "$(leaks_raw basic.db --suppressions known.supp --suppressions root.supp --exclude '^parse')" \
  "0 leaked blocks (0 bytes) in 0 stacks; ignored 3 stacks (8 blocks, 3230 bytes) with 3 filters" \
  "everything ignored: no table, only the summary (two files, one --exclude: 3 filters)"

# csv: one row a leak, the ignored line on stderr; json: summary and leaks
"$MPQ" leaks basic.db --exclude foo --format csv >out.csv 2>err.txt
assert_eq "$(cat out.csv)" \
"blocks,bytes,stack,stacks,where
4,3100,8,1,parse(std::string const&) < main
1,100,18,1,parse(std::string const&) < parse(std::string const&) < main" "--format csv"
assert_eq "$(cat err.txt)" "ignored 1 stacks (3 blocks, 30 bytes) with 1 filters" "csv: what was ignored, on stderr"
json=$("$MPQ" leaks basic.db --exclude foo --format json)
assert_eq "$(json_get "$json" 'j["summary"]')" \
  "{'blocks': 5, 'bytes': 3200, 'stacks': 2, 'rows': 2, 'ignored_stacks': 1, 'ignored_blocks': 3, 'ignored_bytes': 30, 'filters': 1, 'suppressed_stacks': 0, 'suppressed_blocks': 0, 'suppressed_bytes': 0}" \
  "json summary"
assert_eq "$(json_get "$json" '[(r["stack"], r["blocks"], r["bytes"], r["frames"]) for r in j["leaks"]], list(j["leaks"][0]), list(j)')" \
  "([(8, 4, 3100, ['parse(std::string const&)', 'main']), (18, 1, 100, ['parse(std::string const&)', 'parse(std::string const&)', 'main'])], ['stack', 'blocks', 'bytes', 'frames'], ['summary', 'leaks'])" \
  "json leaks: stack, blocks, bytes, frames leaf first (as top's)"

# text for people: units, short names, as top's
assert_eq "$("$MPQ" leaks basic.db)" \
"blocks     bytes  stack  where
     4  3.03 KiB  8      parse < main
     1     100 B  18     parse < parse < main
     3      30 B  13     foo < main
8 leaked blocks (3.15 KiB) in 3 stacks" \
  "leaks: sizes in units, names without parameter lists"
assert_eq "$("$MPQ" leaks basic.db --exclude foo | tail -1)" \
  "5 leaked blocks (3.12 KiB) in 2 stacks; ignored 1 stacks (3 blocks, 30 B) with 1 filters" "the summary in units"

# errors: one line, the file and what is wrong, exit 2
expect_fail 2 "^mpquery: leaks: bad regex '\(' \(.*\)$" "$MPQ" leaks basic.db --filter '('
expect_fail 2 '^mpquery: nosuch.supp: No such file or directory$' "$MPQ" leaks basic.db --suppressions nosuch.supp
printf '# ok\nfrob x\n' > bad.supp
expect_fail 2 "^mpquery: bad.supp:2: unknown rule .*'frob'$" "$MPQ" leaks basic.db --suppressions bad.supp
printf 'drop (\n' > badre.supp
expect_fail 2 "^mpquery: badre.supp:1: bad regex " "$MPQ" leaks basic.db --suppressions badre.supp
expect_fail 2 '^mpquery: leaks: missing DB \(see mpquery leaks --help\)$' "$MPQ" leaks
h=$("$MPQ" leaks --help) || fail "leaks --help exit $?"
assert_match "$h" "^usage: mpquery leaks DB" "leaks --help has a usage line"
assert_match "$h" "--suppressions FILE" "leaks --help lists --suppressions"
assert_match "$h" "example" "leaks --help has an example"
assert_match "$("$MPQ" --help)" "^  leaks " "mpquery --help lists leaks"

# recorded: alloc_functions frees everything but do_leak's 7 blocks of 1000 bytes
[ -x "$B/tests/alloc_functions" ] && [ -x "$B/tests/threads_cross_free" ] || fail "test programs not built (make)"
profile af.db "$B/tests/alloc_functions" >/dev/null 2>&1
assert_eq "$(leaks_raw af.db --format csv | cut -d, -f1,2,4,5)" "blocks,bytes,stacks,where
7,7000,1,do_leak < main" "alloc_functions: one leak, do_leak"
assert_eq "$(leaks_raw af.db | tail -1)" \
  "7 leaked blocks (7000 bytes) in 1 stack" "alloc_functions: summary"
assert_eq "$(leaks_raw af.db --exclude '^do_leak$' | tail -1)" \
  "0 leaked blocks (0 bytes) in 0 stacks; ignored 1 stacks (7 blocks, 7000 bytes) with 1 filters" "--exclude do_leak"
assert_eq "$("$MPQ" top af.db --by nlive --format csv | cut -d, -f1-7,10)" \
"ncalls,memtot,nfree,nlive,memlive,maxlive,ntemp,where
7,7000,0,7,7000,7000,0,do_leak < main" "top --by nlive: only do_leak has live blocks (never freed: none temporary)"

# threads_cross_free: thread_leak's blocks from 4 threads are one row; glibc's DTVs a known leak
profile tc.db "$B/tests/threads_cross_free" >/dev/null 2>&1 || fail "threads_cross_free failed"
dtv=$(q tc.db "SELECT COUNT(DISTINCT stack) || ' stacks (' || SUM(ncalls - nfree) || ' blocks, ' || SUM(memlive) || ' bytes)'
               FROM last_sample WHERE stack IN (SELECT stack FROM stack_frames WHERE function = '_dl_allocate_tls')")
assert_match "$dtv" '^1 stacks \(4 blocks, [0-9]+ bytes\)$' "glibc allocated one DTV per thread (from main)"
assert_eq "$(leaks_raw tc.db --filter '^thread_leak$' --format csv 2>/dev/null | cut -d, -f1,2,4)" "blocks,bytes,stacks
12,768,1" "thread_leak: 4 threads x 3 blocks of 64 bytes, one stack"
printf '# glibc keeps each thread'"'"'s DTV with its cached stack\ndrop ^_dl_allocate_tls$\n' > glibc.supp
assert_eq "$(leaks_raw tc.db --suppressions glibc.supp --no-default-suppressions | tail -1)" \
  "12 leaked blocks (768 bytes) in 1 stack; ignored $dtv with 1 filters" "--suppressions: the DTVs ignored"
assert_eq "$(leaks_raw tc.db | tail -2)" \
  "12 leaked blocks (768 bytes) in 1 stack
suppressed: $(q tc.db "SELECT SUM(ncalls - nfree) || ' blocks (' || SUM(memlive) || ' bytes)' FROM last_sample
               WHERE stack IN (SELECT stack FROM stack_frames WHERE function = '_dl_allocate_tls')") by the built-in list" "by default the built-in list suppresses the DTVs"
assert_eq "$(leaks_raw tc.db --no-default-suppressions --exclude '^thread_leak$' --format json | python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; print(s["stacks"], s["blocks"], s["ignored_stacks"], s["ignored_blocks"], s["ignored_bytes"], s["filters"])')" \
  "1 4 1 12 768 1" "--exclude thread_leak (json): the DTVs left, thread_leak ignored"
assert_eq "$("$MPQ" top tc.db --by nlive --format csv | tail -n +2 | cut -d, -f4)" "12
4" "top --by nlive: thread_leak's 12 blocks, the 4 DTVs; thread_alloc freed all"
