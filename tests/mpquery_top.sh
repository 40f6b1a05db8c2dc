#!/bin/bash
# mpquery top: exact stacks and functions (self and inclusive) on the basic
# fixture (tests/mpquery_fixtures/basic.sql documents every value), each
# selection and display option, csv and json.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/mpquery_fixtures/lib.sh"
fixture basic >/dev/null

assert_eq "$("$MPQ" top basic.db)" \
"ncalls  memtot  nfree  memlive  maxlive  stack  where
     6    5100      2     3100     3100  8      parse(std::string const&) < main
    20    2000     20        0      400  11     std::vector<int>::push_back(int const&) < main
    10    1000     10        0      300  5      helper < load < main
     2     200      1      100      150  18     parse(std::string const&) < parse(std::string const&) < main
     3      30      0       30       30  13     foo(int) < main
     1       7      1        0        7  15     app+0x999 < main" "top by memtot (default rules, threads summed, _Z name demangled)"

assert_eq "$("$MPQ" top basic.db --by ncalls -n 3 --format csv)" \
"ncalls,memtot,nfree,memlive,maxlive,stack,stacks,where
20,2000,20,0,400,11,1,std::vector<int>::push_back(int const&) < main
10,1000,10,0,300,5,1,helper < load < main
6,5100,2,3100,3100,8,1,parse(std::string const&) < main" "--by ncalls -n 3 --format csv"

assert_eq "$("$MPQ" top basic.db --by memlive --format csv | tail -n +2 | cut -d, -f4,6)" \
"3100,8
100,18
30,13" "--by memlive lists only stacks with live memory"

assert_eq "$("$MPQ" top basic.db --thread 101 --format csv | tail -n +2 | cut -d, -f1-6)" \
"20,2000,20,0,400,11
1,100,0,100,100,8" "--thread 101: the worker's allocations only"

assert_eq "$("$MPQ" top basic.db --pid 100 -n 1 --format csv | tail -1 | cut -d, -f2)" 5100 "--pid 100"
expect_fail 2 '^mpquery: basic.db: no process with pid 999 in the selected run$' "$MPQ" top basic.db --pid 999
expect_fail 2 '^mpquery: basic.db: no thread with tid 5 in the selected processes$' "$MPQ" top basic.db --thread 5

# display options
assert_eq "$("$MPQ" top basic.db --by ncalls -n 2 --format csv --lines | tail -1 | cut -d, -f8)" \
  "helper (main.cc:41) < load (main.cc:40) < main (main.cc:10)" "--lines"
assert_eq "$("$MPQ" top basic.db --by ncalls -n 2 --format csv --no-inline | tail -1 | cut -d, -f8)" \
  "load < main" "--no-inline hides the inlined helper"
assert_eq "$("$MPQ" top basic.db --by ncalls -n 2 --format csv --module | tail -1 | cut -d, -f8)" \
  "helper [app] < load [app] < main [app]" "--module"
assert_eq "$("$MPQ" top basic.db -n 1 --depth 1 | tail -1 | sed 's/.*  //')" "parse(std::string const&) < ..." "--depth 1"
assert_eq "$("$MPQ" top basic.db -n 1 --no-default-rules --depth 0 | tail -1 | sed 's/.*  8  *//')" \
  "malloc < operator new(unsigned long) < parse(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&) < main < __libc_start_main" \
  "--no-default-rules --depth 0: the raw stack"

# functions: self = leaf after rules, inclusive = on the path, once per stack
assert_eq "$("$MPQ" top basic.db --functions --format csv)" \
"self.ncalls,self.memtot,self.nfree,self.memlive,self.maxlive,inclusive.ncalls,inclusive.memtot,inclusive.nfree,inclusive.memlive,inclusive.maxlive,function
8,5300,3,3200,3250,8,5300,3,3200,3250,parse(std::string const&)
20,2000,20,0,400,20,2000,20,0,400,std::vector<int>::push_back(int const&)
10,1000,10,0,300,10,1000,10,0,300,helper
3,30,0,30,30,3,30,0,30,30,foo(int)
1,7,1,0,7,1,7,1,0,7,app+0x999" "--functions (self): recursion counted once"

assert_eq "$("$MPQ" top basic.db --functions --inclusive -n 3 --format csv | tail -n +2)" \
"0,0,0,0,0,42,8337,34,3230,3987,main
8,5300,3,3200,3250,8,5300,3,3200,3250,parse(std::string const&)
20,2000,20,0,400,20,2000,20,0,400,std::vector<int>::push_back(int const&)" "--functions --inclusive"

json=$("$MPQ" top basic.db --functions --inclusive --format json)
assert_eq "$(json_get "$json" 'j[0]["function"], j[0]["inclusive"]["memtot"], j[0]["self"]["ncalls"], sorted(j[1]["self"])')" \
  "('main', 8337, 0, ['maxlive', 'memlive', 'memtot', 'ncalls', 'nfree'])" "--functions --format json: self and inclusive objects"

json=$("$MPQ" top basic.db --format json)
assert_eq "$(json_get "$json" 'len(j), j[0]["stack"], j[0]["memtot"], j[0]["frames"], j[3]["where"]')" \
  "(6, 8, 5100, ['parse(std::string const&)', 'main'], 'parse(std::string const&) < parse(std::string const&) < main')" "top --format json"

csvrows=$("$MPQ" top basic.db --format csv | python3 -c 'import csv,sys; r=list(csv.DictReader(sys.stdin)); print(len(r), sum(int(x["memtot"]) for x in r))')
assert_eq "$csvrows" "6 8337" "csv parses; memtot over stacks = sum of samples"
assert_eq "$(q basic.db 'SELECT SUM(memtot) FROM sample')" 8337 "... which SQL agrees with"
