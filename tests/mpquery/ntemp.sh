#!/bin/bash
# mpquery's ntemp counter (temporary blocks: freed by the thread that
# allocated them before it allocated or freed anything else, heaptrack's
# definition): top by it (stacks and
# --functions; text, csv, json), fold, show and diff, on a recorded profile
# of tests/progs/cheap_modes.c (tests/recorder/modes_cheap.sh checks the same numbers
# in SQL) and on the basic fixture with ntemp values; a file of format
# version 1 has no sample.ntemp and reads it as 0.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

# cheap_modes.c: every pair (10000) and every zeroed calloc (10) is freed
# at once; grow's 8 realloc steps free the block just made, then its last
# block is freed (9); peak frees its 2000 blocks in order, the last one
# after the others (none); tagged_work's 300 'outer' pairs (its 'inner'
# blocks are freed after later ones were made); keep and big free nothing.
profile full.db "$B/tests/cheap_modes" 2>/dev/null || fail "cheap_modes failed"
assert_eq "$("$MPQ" top full.db --by ntemp --functions --format csv | cut -d, -f7,14,15)" \
"self.ntemp,inclusive.ntemp,function
10000,10000,pairs
300,300,tagged_work
10,10,zeroed
9,9,grow" "top --by ntemp --functions: the temporary blocks of each function"
assert_eq "$("$MPQ" top full.db --by ntemp --format csv | cut -d, -f1,7,10)" \
"ncalls,ntemp,where
10000,10000,pairs < main
300,300,tagged_work < main < [tag] outer
10,10,zeroed < main
9,9,grow < main" "top --by ntemp: stacks (keep, big, peak and the inner tag path have none)"
assert_match "$("$MPQ" top full.db --by ntemp -n 1 --all-counters --bytes)" \
  "^ncalls +memtot +nfree +nlive +memlive +maxlive +ntemp +% +stack +where
 +13520 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +10319 +100.0 +\(total: 4 stacks\)
 +10000 +240000 +10000 +0 +0 +24 +10000 +96.9 +[0-9]+ +pairs < main$" "top text: ntemp after maxlive"
assert_eq "$("$MPQ" fold full.db --by ntemp)" \
"[tag] outer;main;tagged_work 300
main;grow 9
main;pairs 10000
main;zeroed 10" "fold --by ntemp: one line per path with temporary blocks"

json=$("$MPQ" top full.db --by ntemp --format json)
assert_eq "$(json_get "$json" 'j[0]["ntemp"], j[0]["ncalls"], j[0]["frames"], [r["ntemp"] for r in j]')" \
  "(10000, 10000, ['pairs', 'main'], [10000, 300, 10, 9])" "top --format json: the ntemp field"
json=$("$MPQ" top full.db --by ntemp --functions --format json -n 1)
assert_eq "$(json_get "$json" 'j[0]["function"], j[0]["self"]["ntemp"], j[0]["inclusive"]["ntemp"]')" \
  "('pairs', 10000, 10000)" "top --functions --format json: self.ntemp and inclusive.ntemp"
id=$("$MPQ" top full.db --by ntemp --format csv -n 1 | tail -1 | cut -d, -f8)
assert_match "$("$MPQ" show full.db "$id" | head -1)" "^stack $id: ncalls 10000 .* maxlive 24 B ntemp 10000$" "show: ntemp last on the header"
assert_eq "$(json_get "$("$MPQ" show full.db "$id" --format json)" 'j["ntemp"]')" 10000 "show --format json: ntemp"

# the basic fixture (tests/lib/fixtures/basic.sql) with temporary blocks:
# A 4 of its 10 frees, B 2 (main thread), C 15, F 1
fixture basic v2.db >/dev/null
sqlite3 v2.db "UPDATE sample SET ntemp = 4 WHERE stack = 5; UPDATE sample SET ntemp = 2 WHERE stack = 8 AND thread = 1;
               UPDATE sample SET ntemp = 15 WHERE stack = 11; UPDATE sample SET ntemp = 1 WHERE stack = 18;" \
  || fail "cannot set the fixture's ntemp"
assert_eq "$("$MPQ" top v2.db --by ntemp --format csv | cut -d, -f7,8,10)" \
"ntemp,stack,where
15,11,std::vector<int>::push_back(int const&) < main
4,5,helper < load < main
2,8,parse(std::string const&) < main
1,18,parse(std::string const&) < parse(std::string const&) < main" "fixture: top --by ntemp (B's threads summed)"
assert_eq "$("$MPQ" top v2.db --by ntemp --functions --inclusive --format csv | tail -n +2 | cut -d, -f7,14,15)" \
"0,22,main
15,15,std::vector<int>::push_back(int const&)
4,4,helper
0,4,load
3,3,parse(std::string const&)" "fixture: --functions --inclusive (F's recursion counted once: parse 2 + 1)"

# the basic fixture in format version 1
old_fixture 1
assert_eq "$(q v1.db "SELECT count(*) FROM pragma_table_info('sample') WHERE name = 'ntemp'")" 0 "version 1: no sample.ntemp"
assert_eq "$("$MPQ" top v1.db --format csv | cut -d, -f7 | sort -u | tr '\n' ' ')" "0 ntemp " "version 1: top reads ntemp as 0"
assert_eq "$("$MPQ" top v1.db --by ntemp)" "ncalls  ntemp  %  stack  where
    42      0  -         (total: 0 stacks in 0 rows)" \
  "version 1: top --by ntemp lists no stack"
assert_eq "$("$MPQ" fold v1.db --by ntemp | wc -c)" 0 "version 1: fold --by ntemp is empty"
assert_eq "$("$MPQ" show v1.db 8 --bytes | head -1)" "stack 8: ncalls 6 memtot 5100 nfree 2 nlive 4 memlive 3100 maxlive 3100 ntemp 0" \
  "version 1: show"
assert_eq "$("$MPQ" diff v1.db v2.db --by ntemp --format csv)" \
"a,b,delta,ratio,where
0,15,15,,std::vector<int>::push_back(int const&) < main
0,4,4,,helper < load < main
0,2,2,,parse(std::string const&) < main
0,1,1,,parse(std::string const&) < parse(std::string const&) < main" "diff --by ntemp: version 1 against version 2"
assert_eq "$("$MPQ" diff v1.db v2.db --by ntemp --functions --inclusive -n 1)" \
"v1.db ntemp  v2.db ntemp  delta  ratio  function
          0           22     22  -      (total: 5 functions, 4 more not shown)
          0           22     22  -      main" "diff --by ntemp --functions --inclusive"

# the totals have no ntemp: info does not list it, hist refuses it
assert_eq "$(json_get "$("$MPQ" info v2.db --format json)" '"ntemp" in j["totals"], j["totals"]["ncalls"]')" \
  "(False, 50)" "info: totals without ntemp"
expect_fail 2 '^mpquery: hist: --by ntemp' "$MPQ" hist v2.db --by ntemp
