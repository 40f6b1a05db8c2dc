#!/bin/bash
# Threads by name: --thread takes a tid (digits) or a POSIX ERE that must
# match a thread's whole name, in every command that selects; top
# --per-thread lists each thread's largest rows in a first column 'thread',
# and --group-threads RE merges the threads whose names match into one
# group named RE. On the basic fixture (threads main, tid 100, and worker,
# tid 101) and on tests/progs/tags_threads.c (four threads worker-1..4
# allocating 1..4 blocks of 10000 bytes).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null

# by name, whole name only: 'work' names no thread, 'work.*' the worker
assert_eq "$("$MPQ" top basic.db --thread 'work.*' --format csv | cut -d, -f1,2,8)" \
"ncalls,memtot,stack
20,2000,11
1,100,8" "top --thread 'work.*': the worker's rows, as --thread 101"
assert_eq "$("$MPQ" top basic.db --thread 'work.*' --format csv)" "$("$MPQ" top basic.db --thread 101 --format csv)" \
  "top: --thread 'work.*' = --thread 101"
assert_eq "$("$MPQ" fold basic.db --thread worker)" "main;parse(std::string const&) 100
main;std::vector<int>::push_back(int const&) 2000" "fold --thread worker"
assert_eq "$("$MPQ" leaks basic.db --thread 'w[a-z]+' | tail -n 1)" \
  "1 leaked block (100 B) in 1 stack" "leaks --thread 'w[a-z]+'"
assert_eq "$("$MPQ" show basic.db 8 --thread 'main' --bytes | head -n 1)" \
  "stack 8: ncalls 5 memtot 5000 nfree 2 nlive 3 memlive 3000 maxlive 3000 ntemp 0" "show --thread main"
assert_eq "$("$MPQ" diff basic.db basic.db --thread 'main|worker' --format csv | tail -n +2 | wc -l)" 6 \
  "diff --thread 'main|worker': both threads, both profiles"
assert_eq "$("$MPQ" top basic.db --thread 'main|worker' --format csv)" "$("$MPQ" top basic.db --format csv)" \
  "--thread 'main|worker': every thread"

expect_fail 2 "^mpquery: basic.db: no thread whose name matches 'work' in the selected processes \(see mpquery info\)$" \
    "$MPQ" top basic.db --thread work
expect_fail 2 "^mpquery: basic.db: no thread with tid 5 in the selected processes$" "$MPQ" top basic.db --thread 5
expect_fail 2 "^mpquery: top: bad regex '\(' for --thread \(.*\) \(see mpquery top --help\)$" "$MPQ" top basic.db --thread '('
expect_fail 2 "^mpquery: fold: bad regex 'a\{1' for --thread" "$MPQ" fold basic.db --thread 'a{1'
expect_fail 2 "^mpquery: top: bad regex '\[' for --group-threads" "$MPQ" top basic.db --group-threads '['

# top --per-thread: each thread's rows, the largest thread first
assert_eq "$("$MPQ" top basic.db --per-thread -n 2 --bytes)" \
"thread            ncalls  memtot      %  stack  where
main (tid 100)        21    6237  100.0         (total: 5 stacks in 5 rows)
main (tid 100)         5    5000   80.2  8      parse < main
main (tid 100)        10    1000   16.0  5      helper < load < main
worker (tid 101)      21    2100  100.0         (total: 2 stacks in 2 rows)
worker (tid 101)      20    2000   95.2  11     std::vector<…>::push_back < main
worker (tid 101)       1     100    4.8  8      parse < main" "top --per-thread -n 2: text, each thread's totals (its stacks: 6237 of main's 6300 bytes have one) and shares"
# by ncalls the threads tie (21 each): by name
assert_eq "$("$MPQ" top basic.db --per-thread --functions --by ncalls -n 1 --format csv | cut -d, -f1,2,3,16)" \
"thread,self.ncalls,self.memtot,function
main (tid 100),10,1000,helper
worker (tid 101),20,2000,std::vector<int>::push_back(int const&)" "top --per-thread --functions --by ncalls: csv"
assert_eq "$("$MPQ" top basic.db --per-thread --functions --by memlive -n 1 --format csv | cut -d, -f1,6,16)" \
"thread,self.memlive,function
main (tid 100),3100,parse(std::string const&)
worker (tid 101),100,parse(std::string const&)" "top --per-thread --by memlive: the largest thread first"
json=$("$MPQ" top basic.db --group-threads 'main|worker' --format json) || fail "top --group-threads json"
assert_eq "$(json_get "$json" '[(r["thread"], r["ncalls"], r["stack"]) for r in j][:2]')" \
  "[('main|worker', 6, 8), ('main|worker', 20, 11)]" "top --group-threads 'main|worker': one group, rows merged"
assert_eq "$("$MPQ" top basic.db --group-threads main --format csv | cut -d, -f1 | uniq -c | sed 's/^ *//')" \
"1 thread
5 main
2 worker (tid 101)" "--group-threads main: the worker stays alone"
assert_eq "$("$MPQ" top basic.db --per-thread --exclude foo --by ncalls -n 0 --format csv 2>&1 >/dev/null)" \
  "ignored 1 stacks (3 calls, 30 bytes) with 1 filters" "--per-thread with --exclude: left out, said on stderr"

# a recorded profile: four worker-N threads, exact per thread
[ -x "$B/tests/tags_threads" ] || fail "$B/tests/tags_threads is not built (make)"
MP_QUIET=1 profile a.db "$B/tests/tags_threads" || fail "tags_threads failed"
assert_eq "$("$MPQ" top a.db --thread 'worker-.*' --format csv | cut -d, -f1,2)" "ncalls,memtot
10,100000" "--thread 'worker-.*': the four workers, 10 blocks, 100000 bytes"
assert_eq "$("$MPQ" top a.db --thread 'worker-[34]' --format csv | cut -d, -f1,2)" "ncalls,memtot
7,70000" "--thread 'worker-[34]'"
assert_eq "$("$MPQ" top a.db --per-thread --thread 'worker-.*' --format csv | cut -d, -f1-3 | sed -E 's/tid [0-9]+/tid N/')" \
"thread,ncalls,memtot
worker-4 (tid N),4,40000
worker-3 (tid N),3,30000
worker-2 (tid N),2,20000
worker-1 (tid N),1,10000" "top --per-thread: one row per worker"
assert_eq "$("$MPQ" top a.db --group-threads 'worker-.*' --format csv | cut -d, -f1-3 | sed -E 's/tid [0-9]+/tid N/')" \
"thread,ncalls,memtot
tags_threads (tid N),1,1048576
tags_threads (tid N),2,8000
tags_threads (tid N),3,6000
tags_threads (tid N),4,4000
tags_threads (tid N),5,500
worker-.*,10,100000" "top --group-threads 'worker-.*': the workers merged"
tid=$(q a.db "SELECT tid FROM thread WHERE name = 'worker-2'")
assert_eq "$("$MPQ" top a.db --thread "$tid" --format csv | cut -d, -f1,2)" "ncalls,memtot
2,20000" "--thread TID still selects one thread"
