#!/bin/bash
# mpquery diff: B is the basic fixture with 3 more 10-byte allocations in
# foo(int), every id renumbered and every address moved by 0x1000, so
# stacks match by names only (the symbol-less frame app+0x999 cannot match).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic a.db >/dev/null
fixture basic b.db >/dev/null
sqlite3 b.db "UPDATE sample SET ncalls = ncalls + 3, memtot = memtot + 30, memlive = memlive + 30 WHERE stack = 13;
              UPDATE frame SET id = id + 100, offset = offset + 4096;
              UPDATE stack_run SET frames = (SELECT json_group_array(value + 100) FROM json_each(frames));
              UPDATE stack_run SET id = id + 1000, parent = CASE parent WHEN 0 THEN 0 ELSE parent + 1000 END;
              UPDATE sample SET stack = stack + 1000;" || fail "cannot derive b.db"

assert_eq "$("$MPQ" diff a.db b.db --format csv)" \
"a,b,delta,ratio,where
30,60,30,2.000,foo(int) < main
0,7,7,,app+0x1999 < main
7,0,-7,0.000,app+0x999 < main
5100,5100,0,1.000,parse(std::string const&) < main
2000,2000,0,1.000,std::vector<int>::push_back(int const&) < main
1000,1000,0,1.000,helper < load < main
200,200,0,1.000,parse(std::string const&) < parse(std::string const&) < main" "diff of stacks by memtot"
assert_eq "$("$MPQ" diff a.db b.db --by ncalls --functions -n 1)" \
"a.db ncalls  b.db ncalls  delta  ratio  function
         42           45      3  1.071  (total: 6 functions, 3 unchanged and 2 more not shown)
          3            6      3  2.000  foo" "diff --functions: 3 more allocations in foo(int) (text: without parameters)"
assert_eq "$("$MPQ" diff a.db b.db -n 4)" \
"a.db memtot  b.db memtot  delta  ratio  where
   8.14 KiB     8.17 KiB   30 B  1.004  (total: 7 stacks, 4 unchanged not shown)
       30 B         60 B   30 B  2.000  foo < main
        0 B          7 B    7 B      -  app+0x1999 < main
        7 B          0 B   -7 B  0.000  app+0x999 < main" \
  "diff text: the files and the counter head the columns, the totals first, unchanged rows left out"
assert_eq "$("$MPQ" diff a.db b.db -n 5 --all)" \
"a.db memtot  b.db memtot  delta  ratio  where
   8.14 KiB     8.17 KiB   30 B  1.004  (total: 7 stacks, 2 more not shown)
       30 B         60 B   30 B  2.000  foo < main
        0 B          7 B    7 B      -  app+0x1999 < main
        7 B          0 B   -7 B  0.000  app+0x999 < main
   4.98 KiB     4.98 KiB    0 B  1.000  parse < main
   1.95 KiB     1.95 KiB    0 B  1.000  std::vector<…>::push_back < main" \
  "diff --all: unchanged rows too, after the changed ones (larger b first)"
assert_eq "$("$MPQ" diff a.db b.db -n 1 --bytes --signatures)" \
"a.db memtot  b.db memtot  delta  ratio  where
       8337         8367     30  1.004  (total: 7 stacks, 4 unchanged and 2 more not shown)
         30           60     30  2.000  foo(int) < main" "diff --bytes --signatures"
assert_eq "$("$MPQ" diff a.db b.db --by ncalls --functions --inclusive -n 1 --format csv | tail -1)" \
  "42,45,3,1.071,main" "diff --functions --inclusive"
assert_eq "$("$MPQ" diff a.db b.db --fold --by ncalls)" \
"main;app+0x1999 0 1
main;app+0x999 1 0
main;foo(int) 3 6
main;load;helper 10 10
main;parse(std::string const&) 6 6
main;parse(std::string const&);parse(std::string const&) 2 2
main;std::vector<int>::push_back(int const&) 20 20" "diff --fold: difffolded lines"
json=$("$MPQ" diff a.db b.db --format json -n 2)
assert_eq "$(json_get "$json" '[(r["a"], r["b"], r["delta"], r["ratio"]) for r in j]')" "[(30, 60, 30, 2.0), (0, 7, 7, None)]" "diff --format json"
assert_eq "$("$MPQ" diff a.db a.db --format csv | cut -d, -f3 | sort -u | tr '\n' ' ')" "0 delta " "a profile against itself: no change"
cp a.db same.db
assert_eq "$("$MPQ" diff a.db same.db --by ncalls)" \
"a.db ncalls  same.db ncalls  delta  ratio  where
         42              42      0  1.000  (total: 6 stacks, 6 unchanged not shown)" \
  "text, a profile against a copy: the totals row only, every row unchanged"

# in a terminal (80 and 200 columns): the totals row cut to the width at
# 80; names too long, equal or of several files a side: a and b, and a
# first line saying which files they are
mkdir -p before after
cp a.db before/app.db
cp b.db after/app.db
cp a.db a-profile-name-too-long-1.db
tty() { COLUMNS=$1 PAGER=cat script -qc "$2" /dev/null | tr -d '\r'; }
assert_eq "$(tty 80 "$MPQ diff a.db b.db -n 2")" \
"a.db memtot  b.db memtot  delta  ratio  where
   8.14 KiB     8.17 KiB   30 B  1.004  (total: 7 stacks, 4 unchanged and 1 mor…
       30 B         60 B   30 B  2.000  foo < main
        0 B          7 B    7 B      -  app+0x1999 < main" "diff at 80 columns"
assert_eq "$(tty 200 "$MPQ diff a.db b.db -n 2")" \
"a.db memtot  b.db memtot  delta  ratio  where
   8.14 KiB     8.17 KiB   30 B  1.004  (total: 7 stacks, 4 unchanged and 1 more not shown)
       30 B         60 B   30 B  2.000  foo < main
        0 B          7 B    7 B      -  app+0x1999 < main" "diff at 200 columns"
for cols in 80 200; do
    assert_eq "$(tty $cols "$MPQ diff before/app.db after/app.db --by ncalls")" \
"a: before/app.db, b: after/app.db
a ncalls  b ncalls  delta  ratio  where
      42        45      3  1.071  (total: 7 stacks, 4 unchanged not shown)
       3         6      3  2.000  foo < main
       0         1      1      -  app+0x1999 < main
       1         0     -1  0.000  app+0x999 < main" "diff of two files of one name ($cols columns): a, b and a legend"
    assert_eq "$(tty $cols "$MPQ diff a-profile-name-too-long-1.db b.db --by ncalls -n 1" | head -2)" \
"a: a-profile-name-too-long-1.db, b: b.db
a ncalls  b ncalls  delta  ratio  where" "diff with a long file name ($cols columns): a, b and a legend"
done
# 11-character names: in the heads at 200 columns (names of at most 20
# characters), a and b with a legend at 80 (at most an eighth of the
# width: 10), where the rows need the room
cp a.db base-v1.db; cp b.db base-v22.db
assert_eq "$(tty 80 "$MPQ diff base-v1.db base-v22.db --by ncalls -n 1" | head -2)" \
"a: base-v1.db, b: base-v22.db
a ncalls  b ncalls  delta  ratio  where" "diff with 11-character names at 80 columns: a, b and a legend"
assert_eq "$(tty 200 "$MPQ diff base-v1.db base-v22.db --by ncalls -n 1" | head -1)" \
"base-v1.db ncalls  base-v22.db ncalls  delta  ratio  where" "diff with 11-character names at 200 columns: named"
assert_eq "$("$MPQ" diff --by ncalls -n 1 a.db b.db -- b.db | head -2)" "a: a.db (and 1 more), b: b.db
a ncalls  b ncalls  delta  ratio  where" "several files a side: a, b and a legend"
expect_fail 2 '^mpquery: diff: needs two profiles A and B \(see mpquery diff --help\)$' "$MPQ" diff a.db
expect_fail 2 '^mpquery: nope.db: No such file or directory$' "$MPQ" diff a.db nope.db

# --filter / --exclude on both profiles; what they left out of each is said
"$MPQ" diff a.db b.db --exclude foo --format csv >out.csv 2>err.txt
assert_eq "$(cat out.csv)" \
"a,b,delta,ratio,where
0,7,7,,app+0x1999 < main
7,0,-7,0.000,app+0x999 < main
5100,5100,0,1.000,parse(std::string const&) < main
2000,2000,0,1.000,std::vector<int>::push_back(int const&) < main
1000,1000,0,1.000,helper < load < main
200,200,0,1.000,parse(std::string const&) < parse(std::string const&) < main" "diff --exclude foo"
assert_eq "$(cat err.txt)" "ignored 1 stacks (3 calls, 30 bytes) in a, 1 stacks (6 calls, 60 bytes) in b with 1 filters" \
  "csv: what was left out of a and b on stderr (b has 3 more calls in foo)"
assert_eq "$("$MPQ" diff a.db b.db --by ncalls --filter foo --filter '^app')" \
"a.db ncalls  b.db ncalls  delta  ratio  where
          4            7      3  1.750  (total: 3 stacks)
          3            6      3  2.000  foo < main
          0            1      1      -  app+0x1999 < main
          1            0     -1  0.000  app+0x999 < main
ignored 4 stacks (38 calls, 8.11 KiB) in a, 4 stacks (38 calls, 8.11 KiB) in b with 2 filters" \
  "diff --filter twice: A, B, C, F left out of both (10+6+20+2 calls, 1000+5100+2000+200 bytes, in units)"
assert_eq "$("$MPQ" diff a.db b.db --by ncalls --filter foo --filter '^app' --bytes | tail -1)" \
  "ignored 4 stacks (38 calls, 8300 bytes) in a, 4 stacks (38 calls, 8300 bytes) in b with 2 filters" \
  "diff --bytes: what the filters left out in bytes"
json=$("$MPQ" diff a.db b.db --by ncalls --filter foo --filter '^app' --format json)
assert_eq "$(json_get "$json" 'j["ignored"], [(r["a"], r["b"]) for r in j["rows"]]')" \
  "({'a': {'stacks': 4, 'calls': 38, 'bytes': 8300}, 'b': {'stacks': 4, 'calls': 38, 'bytes': 8300}, 'filters': 2}, [(3, 6), (0, 1), (1, 0)])" \
  "diff json with filters: {ignored: {a, b, filters}, rows}"
"$MPQ" diff a.db b.db --fold --by ncalls --exclude '^parse' >out.txt 2>err.txt
assert_eq "$(cat out.txt)" \
"main;app+0x1999 0 1
main;app+0x999 1 0
main;foo(int) 3 6
main;load;helper 10 10
main;std::vector<int>::push_back(int const&) 20 20" "diff --fold --exclude: stdout only folded lines"
assert_eq "$(cat err.txt)" "ignored 2 stacks (8 calls, 5300 bytes) in a, 2 stacks (8 calls, 5300 bytes) in b with 1 filters" \
  "diff --fold: the 'ignored' line on stderr"
assert_eq "$("$MPQ" diff a.db b.db --functions --by ncalls --exclude '^parse' -n 1 --format csv 2>/dev/null)" \
"a,b,delta,ratio,function
3,6,3,2.000,foo(int)" "diff --functions --exclude"

# Each side selects its own part: two runs of one file, two snapshots of one
# run (tests/progs/peak_mix.c, recorded twice into one file)
for i in 1 2; do MP_QUIET=1 profile two.db $B/tests/peak_mix || fail "peak_mix failed"; done
assert_eq "$(q two.db "SELECT count(*) FROM run")" 2 "two runs in one file"
assert_eq "$("$MPQ" diff two.db two.db --a-run 1 --b-run 2 --format csv | cut -d, -f1-3 | sort | uniq -c | awk '{ print $1, $2 }')" \
    "1 1000000,1000000,0
1 3000000,3000000,0
2 4000000,4000000,0
1 a,b,delta" "--a-run 1 --b-run 2: the same program twice, nothing changed"
assert_eq "$("$MPQ" diff two.db two.db --a-snapshot label:before --b-snapshot label:after --by memlive --format csv)" "a,b,delta,ratio,where
3000000,0,-3000000,0.000,keep_a < main
0,2000000,2000000,,keep_b < main
0,1000000,1000000,,big_d < main" "--a-snapshot label:before --b-snapshot label:after: what grew and shrank between them"
assert_eq "$("$MPQ" diff two.db two.db --a-snapshot peak --by memlive --format csv | cut -d, -f1-3 | tail -n +2 | sort)" "1000000,0,-1000000
3000000,0,-3000000
4000000,0,-4000000" "--a-snapshot peak against the exit (the default of side b)"
assert_eq "$("$MPQ" diff two.db two.db --run 1 --b-run 2 --a-snapshot label:before --by ncalls --format csv | head -n 2)" \
    "a,b,delta,ratio,where
0,2000,2000,,keep_b < main" "--run applies to both sides, --b-run overrides it for B"
assert_eq "$("$MPQ" diff two.db two.db --a-run 1 --b-run 2 --by ncalls | head -2)" "a: two.db --a-run 1, b: two.db --b-run 2
a ncalls  b ncalls  delta  ratio  where" \
  "text: the legend says each side's selection"
expect_fail 2 "^mpquery: two.db: no run 7 in this profile" "$MPQ" diff two.db two.db --a-run 7
expect_fail 2 "^mpquery: diff: bad value 'x' for --snapshot" "$MPQ" diff two.db two.db --b-snapshot x

# A selection option after a side's file is that side's: A.db --run 1
# B.db --run 2 (before A.db or after B.db alone: both sides'). mix.db: run
# 1 is peak_mix, run 2 peak_mix threads (4 threads, 1000 worker_hold
# calls each; big_d once in both).
for arg in "" threads; do MP_QUIET=1 profile mix.db $B/tests/peak_mix $arg || fail "peak_mix $arg failed"; done
assert_eq "$(q mix.db "SELECT count(*) FROM run")" 2 "mix.db: two runs"
mine='keep_|spike_c|big_d|worker_hold'
assert_eq "$("$MPQ" diff mix.db --run 1 mix.db --run 2 --by ncalls --format csv | grep -E "$mine")" \
"0,4000,4000,,worker_hold < worker < start_thread < __clone3
3000,0,-3000,0.000,keep_a < main
2000,0,-2000,0.000,keep_b < main
1000,0,-1000,0.000,spike_c < main
1,1,0,1.000,big_d < main" "A.db --run 1 B.db --run 2: run 1 against run 2"
# the same against fold of each run (every stack, libc's too): a path's
# ncalls in run 1 and in run 2
"$MPQ" fold mix.db --run 1 --by ncalls > run1.txt
"$MPQ" fold mix.db --run 2 --by ncalls > run2.txt
joined=$(awk 'FNR == NR { n = $NF; sub(/ [0-9]+$/, ""); a[$0] = n; seen[$0] = 1; next }
              { n = $NF; sub(/ [0-9]+$/, ""); b[$0] = n; seen[$0] = 1 }
              END { for (p in seen) print p, (p in a ? a[p] : 0), (p in b ? b[p] : 0) }' run1.txt run2.txt | sort)
assert_eq "$("$MPQ" diff mix.db --run 1 mix.db --run 2 --by ncalls --fold | sort)" "$joined" \
  "A.db --run 1 B.db --run 2 --fold: fold --run 1 and fold --run 2 side by side"
assert_eq "$("$MPQ" diff mix.db --run 1 mix.db --by ncalls --fold | sort)" "$joined" \
  "A.db --run 1 B.db: B is its default, the latest run (2)"
assert_eq "$("$MPQ" diff mix.db --run 2 mix.db --run 1 --by ncalls --fold | awk '{ print $NF, $(NF-1) }' | sort)" \
  "$(printf '%s\n' "$joined" | awk '{ print $(NF-1), $NF }' | sort)" "the other way round: the columns swap"
for placed in "--run 1 mix.db mix.db" "mix.db mix.db --run 1"; do
    assert_eq "$("$MPQ" diff $placed --by ncalls --format csv | cut -d, -f3 | sort -u | tr '\n' ' ')" "0 delta " \
      "diff $placed: both sides run 1, nothing changed"
done
assert_eq "$("$MPQ" diff mix.db --run 1 mix.db --b-run 1 --by ncalls --format csv | cut -d, -f3 | sort -u | tr '\n' ' ')" \
  "0 delta " "A.db --run 1 B.db --b-run 1: both run 1"
assert_eq "$("$MPQ" diff mix.db --run 1 mix.db --run 2 --by ncalls | head -1)" "a: mix.db --run 1, b: mix.db --run 2" \
  "text: the legend says each side's selection as given"
assert_eq "$("$MPQ" diff two.db --snapshot label:before two.db --snapshot label:after --by memlive --format csv)" \
  "$("$MPQ" diff two.db two.db --a-snapshot label:before --b-snapshot label:after --by memlive --format csv)" \
  "A.db --snapshot X B.db --snapshot Y: as --a-snapshot X --b-snapshot Y"
assert_eq "$("$MPQ" diff two.db --snapshot label:before two.db --snapshot label:after --by memlive --format csv | tail -n +2 | sort)" \
"0,1000000,1000000,,big_d < main
0,2000000,2000000,,keep_b < main
3000000,0,-3000000,0.000,keep_a < main" "the snapshots' rows: keep_a's 3000 x 1000 B gone, keep_b's half and big_d there"
expect_fail 2 "^mpquery: mix.db: no run 7 in this profile" "$MPQ" diff mix.db --run 7 mix.db --run 2
