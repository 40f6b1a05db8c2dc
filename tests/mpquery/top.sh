#!/bin/bash
# mpquery top: exact stacks and functions (self and inclusive) on the basic
# fixture (tests/lib/fixtures/basic.sql documents every value), each
# selection and display option, csv and json.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null

assert_eq "$("$MPQ" top basic.db)" \
"ncalls    memtot      %  stack  where
    42  8.14 KiB  100.0         (total: 6 stacks in 6 rows)
     6  4.98 KiB   61.2  8      parse < main
    20  1.95 KiB   24.0  11     std::vector<…>::push_back < main
    10    1000 B   12.0  5      helper < load < main
     2     200 B    2.4  18     parse < parse < main
     3      30 B    0.4  13     foo < main
     1       7 B    0.1  15     app+0x999 < main" "top by memtot (text: ncalls and the --by counter in units with its share of the 8337 bytes, a totals row, C++ names shortened)"
assert_eq "$("$MPQ" top basic.db --all-counters --bytes --signatures --full-names)" \
"ncalls  memtot      %  nfree  nlive  memlive  maxlive  ntemp  stack  where
    42    8337  100.0     34      8     3230     3987      0         (total: 6 stacks in 6 rows)
     6    5100   61.2      2      4     3100     3100      0  8      parse(std::string const&) < main
    20    2000   24.0     20      0        0      400      0  11     std::vector<int>::push_back(int const&) < main
    10    1000   12.0     10      0        0      300      0  5      helper < load < main
     2     200    2.4      1      1      100      150      0  18     parse(std::string const&) < parse(std::string const&) < main
     3      30    0.4      0      3       30       30      0  13     foo(int) < main
     1       7    0.1      1      0        0        7      0  15     app+0x999 < main" "top --all-counters --bytes --signatures --full-names (default rules, threads summed, _Z name demangled; nlive = ncalls - nfree; the fixture has no temporary blocks: ntemp 0)"

assert_eq "$("$MPQ" top basic.db --by ncalls -n 3 --format csv)" \
"ncalls,memtot,nfree,nlive,memlive,maxlive,ntemp,stack,stacks,where
20,2000,20,0,0,400,0,11,1,std::vector<int>::push_back(int const&) < main
10,1000,10,0,0,300,0,5,1,helper < load < main
6,5100,2,4,3100,3100,0,8,1,parse(std::string const&) < main" "--by ncalls -n 3 --format csv"

assert_eq "$("$MPQ" top basic.db --by memlive --format csv | tail -n +2 | cut -d, -f5,8)" \
"3100,8
100,18
30,13" "--by memlive lists only stacks with live memory"

assert_eq "$("$MPQ" top basic.db --thread 101 --format csv | tail -n +2 | cut -d, -f1-6,8)" \
"20,2000,20,0,0,400,11
1,100,0,1,100,100,8" "--thread 101: the worker's allocations only"

assert_eq "$("$MPQ" top basic.db --pid 100 -n 1 --format csv | tail -1 | cut -d, -f2)" 5100 "--pid 100"
expect_fail 2 '^mpquery: basic.db: no process with pid 999 in the selected run$' "$MPQ" top basic.db --pid 999
expect_fail 2 '^mpquery: basic.db: no thread with tid 5 in the selected processes$' "$MPQ" top basic.db --thread 5

# display options
assert_eq "$("$MPQ" top basic.db --by ncalls -n 2 --format csv --lines | tail -1 | cut -d, -f10)" \
  "helper (main.cc:41) < load (main.cc:40) < main (main.cc:10)" "--lines"
assert_eq "$("$MPQ" top basic.db --by ncalls -n 2 --format csv --no-inline | tail -1 | cut -d, -f10)" \
  "load < main" "--no-inline hides the inlined helper"
assert_eq "$("$MPQ" top basic.db --by ncalls -n 2 --format csv --module | tail -1 | cut -d, -f10)" \
  "helper [app] < load [app] < main [app]" "--module"
assert_eq "$("$MPQ" top basic.db -n 1 --depth 1 | tail -1 | sed 's/.*  //')" "parse < …" "--depth 1"
assert_eq "$("$MPQ" top basic.db -n 1 --no-default-rules --depth 0 --signatures | tail -1 | sed 's/.*  8  *//')" \
  "malloc < operator new(unsigned long) < parse(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&) < main < __libc_start_main" \
  "--no-default-rules --depth 0 --signatures: the raw stack"

# functions: self = leaf after rules, inclusive = on the path, once per stack
assert_eq "$("$MPQ" top basic.db --functions --format csv)" \
"self.ncalls,self.memtot,self.nfree,self.nlive,self.memlive,self.maxlive,self.ntemp,inclusive.ncalls,inclusive.memtot,inclusive.nfree,inclusive.nlive,inclusive.memlive,inclusive.maxlive,inclusive.ntemp,function
8,5300,3,5,3200,3250,0,8,5300,3,5,3200,3250,0,parse(std::string const&)
20,2000,20,0,0,400,0,20,2000,20,0,0,400,0,std::vector<int>::push_back(int const&)
10,1000,10,0,0,300,0,10,1000,10,0,0,300,0,helper
3,30,0,3,30,30,0,3,30,0,3,30,30,0,foo(int)
1,7,1,0,0,7,0,1,7,1,0,0,7,0,app+0x999" "--functions (self): recursion counted once"

assert_eq "$("$MPQ" top basic.db --functions --inclusive -n 3 --format csv | tail -n +2)" \
"0,0,0,0,0,0,0,42,8337,34,8,3230,3987,0,main
8,5300,3,5,3200,3250,0,8,5300,3,5,3200,3250,0,parse(std::string const&)
20,2000,20,0,0,400,0,20,2000,20,0,0,400,0,std::vector<int>::push_back(int const&)" "--functions --inclusive"

# text: the --by counter's self and inclusive with their shares, and the
# ncalls of the kind sorted by; every counter with --all-counters
assert_eq "$("$MPQ" top basic.db --functions)" \
"self.ncalls  self.memtot  self%  inclusive.memtot  inclusive%  function
         42     8.14 KiB  100.0          8.14 KiB       100.0  (total: 5 functions)
          8     5.18 KiB   63.6          5.18 KiB        63.6  parse
         20     1.95 KiB   24.0          1.95 KiB        24.0  std::vector<…>::push_back
         10       1000 B   12.0            1000 B        12.0  helper
          3         30 B    0.4              30 B         0.4  foo
          1          7 B    0.1               7 B         0.1  app+0x999" "--functions (text): self and inclusive memtot, their % of 8337 bytes, self.ncalls"
assert_eq "$("$MPQ" top basic.db --functions --inclusive -n 3 --bytes)" \
"self.memtot  self%  inclusive.ncalls  inclusive.memtot  inclusive%  function
       8337  100.0                42              8337       100.0  (total: 7 functions)
          0    0.0                42              8337       100.0  main
       5300   63.6                 8              5300        63.6  parse
       2000   24.0                20              2000        24.0  std::vector<…>::push_back" "--functions --inclusive --bytes: inclusive.ncalls; 7 functions have an inclusive value"
assert_eq "$("$MPQ" top basic.db --functions --by ncalls -n 1 --all-counters | cut -c1-69)" \
"self.ncalls  self%  self.memtot  self.nfree  self.nlive  self.memlive
         42  100.0     8.14 KiB          34           8      3.15 KiB
         20   47.6     1.95 KiB          20           0           0 B" "--functions --all-counters: every counter, % after the --by one"

json=$("$MPQ" top basic.db --functions --inclusive --format json)
assert_eq "$(json_get "$json" 'j[0]["function"], j[0]["inclusive"]["memtot"], j[0]["self"]["ncalls"], sorted(j[1]["self"])')" \
  "('main', 8337, 0, ['maxlive', 'memlive', 'memtot', 'ncalls', 'nfree', 'nlive', 'ntemp'])" "--functions --format json: self and inclusive objects"

json=$("$MPQ" top basic.db --format json)
assert_eq "$(json_get "$json" 'len(j), j[0]["stack"], j[0]["memtot"], j[0]["frames"], j[3]["where"]')" \
  "(6, 8, 5100, ['parse(std::string const&)', 'main'], 'parse(std::string const&) < parse(std::string const&) < main')" "top --format json"

csvrows=$("$MPQ" top basic.db --format csv | python3 -c 'import csv,sys; r=list(csv.DictReader(sys.stdin)); print(len(r), sum(int(x["memtot"]) for x in r))')
assert_eq "$csvrows" "6 8337" "csv parses; memtot over stacks = sum of samples"
assert_eq "$(q basic.db 'SELECT SUM(memtot) FROM sample')" 8337 "... which SQL agrees with"

# --by nlive: blocks still allocated (B: 6 - 2, D: 3 - 0, F: 2 - 1); rows without any omitted
assert_eq "$("$MPQ" top basic.db --by nlive --format csv | tail -n +2 | cut -d, -f4,8)" \
"4,8
3,13
1,18" "--by nlive"

# --filter / --exclude as fold's; what they leave out is said after the table
assert_eq "$("$MPQ" top basic.db --filter '^parse' --by ncalls)" \
"ncalls      %  stack  where
     8  100.0         (total: 2 stacks in 2 rows)
     6   75.0  8      parse < main
     2   25.0  18     parse < parse < main
ignored 4 stacks (34 calls, 2.97 KiB) with 1 filters" "--filter: A, C, D, E left out (10+20+3+1 calls, 1000+2000+30+7 bytes, in units); the totals are what is kept"
assert_eq "$("$MPQ" top basic.db --filter '^parse' --by ncalls --bytes | tail -1)" \
  "ignored 4 stacks (34 calls, 3037 bytes) with 1 filters" "--bytes: what --filter left out in bytes"
assert_eq "$("$MPQ" top basic.db --exclude '^parse' --exclude helper --bytes)" \
"ncalls  memtot      %  stack  where
    24    2037  100.0         (total: 3 stacks in 3 rows)
    20    2000   98.2  11     std::vector<…>::push_back < main
     3      30    1.5  13     foo < main
     1       7    0.3  15     app+0x999 < main
ignored 3 stacks (18 calls, 6300 bytes) with 2 filters" "--exclude twice: B, F, A left out (6+2+10 calls, 5100+200+1000 bytes)"
assert_eq "$("$MPQ" top basic.db --filter main | tail -1)" "     1       7 B    0.1  15     app+0x999 < main" \
  "nothing left out: no 'ignored' line"
"$MPQ" top basic.db --functions --inclusive --exclude '^parse' -n 1 --format csv >out.csv 2>err.txt
assert_eq "$(tail -1 out.csv)" "0,0,0,0,0,0,0,34,3037,31,3,30,737,0,main" \
  "--functions --exclude: main without B and F (42 - 8 calls, 8337 - 5300 bytes, maxlive 3987 - 3250)"
assert_eq "$(cat err.txt)" "ignored 2 stacks (8 calls, 5300 bytes) with 1 filters" "csv: the 'ignored' line on stderr"
json=$("$MPQ" top basic.db --exclude '^parse' --exclude helper --format json)
assert_eq "$(json_get "$json" 'j["ignored"], [r["stack"] for r in j["rows"]]')" \
  "({'stacks': 3, 'calls': 18, 'bytes': 6300, 'filters': 2}, [11, 13, 15])" "json with filters: {ignored, rows}"
expect_fail 2 "^mpquery: top: bad regex '\(' \(.*\)$" "$MPQ" top basic.db --exclude '('
