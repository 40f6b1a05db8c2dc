#!/bin/bash
# --group host|exe|pid splits a table by the processes' host, executable or
# pid (select.h's groups, the same mechanism as --per-thread's): top (a
# first column named by the kind, groups by their total, largest first),
# tree (a tree per group), diff and leaks (groups by name); with a time window too
# (each row's change over it). On the fleet fixture: api pid 10 and db pid
# 11 on web1, api pid 20 on web2, snapshots at +1, +2, +3 s.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture fleet >/dev/null

assert_eq "$("$MPQ" top fleet.db --group exe --format csv | cut -d, -f1-3,6,11)" \
"exe,ncalls,memtot,memlive,where
api,9,54000,2000,put < main
api,26,2600,1500,get < main
db,3,30,30,put < main" "top --group exe: api's two processes summed, then db"
assert_eq "$("$MPQ" top fleet.db --group host --format csv | cut -d, -f1-3)" \
"host,ncalls,memtot
web2,5,50000
web2,20,2000
web1,7,4030
web1,6,600" "top --group host: web2 (52000 bytes) before web1 (4630)"
assert_eq "$("$MPQ" top fleet.db --group pid --format csv | cut -d, -f1,3)" \
"pid,memtot
20,50000
20,2000
10,4000
10,600
11,30" "top --group pid"
assert_eq "$("$MPQ" top fleet.db --group exe --by memtot | sed -n '1,3p' | tr -s ' ')" \
"exe ncalls memtot % stack where
api 35 55.3 KiB 100.0 (total: 2 stacks in 2 rows)
api 9 52.7 KiB 95.4 3 put < main" "top text: the group's totals row and shares"
# the groups add up to the whole
assert_eq "$("$MPQ" top fleet.db --group pid --format csv | awk -F, 'NR > 1 { n += $2; m += $3 } END { print n, m }')" \
    "$("$MPQ" top fleet.db --format csv | awk -F, 'NR > 1 { n += $1; m += $2 } END { print n, m }')" \
    "the groups' rows add up to top's"

# a window: each group's change over it (+1.5..: the snapshots at +1 to +3)
assert_eq "$("$MPQ" top fleet.db --group exe --since +1.5 --format csv 2>/dev/null | cut -d, -f1-3,6)" \
"exe,ncalls,memtot,memlive
api,7,52000,0
api,15,1500,400
db,2,20,20" "top --group exe --since +1.5"
assert_eq "$("$MPQ" top fleet.db --group pid --since +1.5 --until +2.5 --format csv 2>/dev/null | cut -d, -f1,3)" \
"pid,memtot
20,50000
10,200
11,10" "top --group pid, +1.5..+2.5"
assert_eq "$("$MPQ" top fleet.db --per-thread --since +1.5 --format csv 2>/dev/null | cut -d, -f1,3)" \
"thread,memtot
api (tid 20),50000
api (tid 20),1000
worker (tid 11),2000
api (tid 10),500
db (tid 12),20" "--per-thread takes a window now too (the same rows)"

assert_eq "$("$MPQ" diff fleet.db fleet.db --a-until +1.5 --b-since +1.5 --group exe --format csv 2>/dev/null)" \
"exe,a,b,delta,ratio,where
api,2000,52000,50000,26.000,put < main
api,1100,1500,400,1.364,get < main
db,10,20,10,2.000,put < main" "diff --group exe: the first 1.5 s against the rest, per executable"
assert_eq "$("$MPQ" diff fleet.db fleet.db --a-until +1.5 --b-since +1.5 --group host 2>/dev/null | tr -s ' ')" \
"a: fleet.db --a-until +1.5, b: fleet.db --b-since +1.5
host a memtot b memtot delta ratio where
web1 2.06 KiB 2.46 KiB 410 B 1.194 (total: 2 stacks)
web1 100 B 500 B 400 B 5.000 get < main
web1 1.96 KiB 1.97 KiB 10 B 1.005 put < main
web2 1000 B 49.8 KiB 48.8 KiB 51.000 (total: 2 stacks, 1 unchanged not shown)
web2 0 B 48.8 KiB 48.8 KiB - put < main" "diff --group host, text: a totals row per group"
assert_eq "$("$MPQ" tree fleet.db --group host --format csv | cut -d, -f1,2,4)" \
"root,depth,self.ncalls
web2,0,0
web2,1,25
web1,0,0
web1,1,13" "tree --group host: a tree per host"

assert_eq "$("$MPQ" leaks fleet.db --group exe)" \
"exe  blocks     bytes  stack  where
api       2  1.95 KiB  3      put < main
api      15  1.46 KiB  2      get < main
db        3      30 B  3      put < main
20 leaked blocks (3.45 KiB) in 2 stacks (3 rows)" "leaks --group exe: each group's leaks, the summary of all (stacks counted once)"
assert_eq "$("$MPQ" leaks fleet.db --group pid --since +1.5 --format csv 2>/dev/null)" \
"pid,blocks,bytes,stack,stacks,where
10,4,400,2,1,get < main
11,2,20,3,1,put < main" "leaks --group pid --since +1.5: what each process's window left live"
expect_fail 2 "^mpquery: leaks: --callers does not combine with --group" "$MPQ" leaks fleet.db --group exe --callers
expect_fail 2 "^mpquery: top: bad value 'foo' for --group \(expected host, exe or pid\)" "$MPQ" top fleet.db --group foo
expect_fail 2 "^mpquery: top: --group does not combine with --per-thread" "$MPQ" top fleet.db --group exe --per-thread
expect_fail 2 "^mpquery: diff: --group splits tables: not with --fold or --flame" \
    "$MPQ" diff fleet.db fleet.db --group exe --fold
echo PASS
