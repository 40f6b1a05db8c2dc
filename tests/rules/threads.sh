#!/bin/bash
# `thread replace REGEX => TEXT` rewrites thread names (and nothing else):
# --thread, --group-threads and --per-thread see the names as rewritten, so
# filters/threads.rules (worker-12 → worker-N) merges a pool. Frame rules
# never touch thread names, and rules see tags as '[tag] NAME'. On
# tests/progs/tags_threads.c: threads worker-1..4 with 1..4 blocks of
# 10000 bytes in tag W; the main thread's tags A{B{C}}.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
[ -x "$B/tests/tags_threads" ] || fail "$B/tests/tags_threads is not built (make)"
MP_QUIET=1 profile a.db "$B/tests/tags_threads" || fail "tags_threads failed"
no_ids() { sed -E 's/\((pid|tid) [0-9]+\)/(\1 ID)/g'; }

# the example file: the four workers are all worker-N
assert_eq "$("$MPQ" tree a.db --rules threads --per-thread --thread 'worker-N' --format csv | cut -d, -f1-5 | no_ids)" \
"root,depth,path,self.ncalls,self.memtot
worker-N (tid ID),0,,0,0
worker-N (tid ID),1,W,4,40000
worker-N (tid ID),0,,0,0
worker-N (tid ID),1,W,3,30000
worker-N (tid ID),0,,0,0
worker-N (tid ID),1,W,2,20000
worker-N (tid ID),0,,0,0
worker-N (tid ID),1,W,1,10000" "threads.rules: --per-thread names the workers worker-N"
assert_eq "$("$MPQ" tree a.db --rules threads --group-threads 'worker-N' --format csv | cut -d, -f1-5 | no_ids)" \
"root,depth,path,self.ncalls,self.memtot
tags_threads (tid ID),0,,0,0
tags_threads (tid ID),1,A,4,4000
tags_threads (tid ID),2,A;B,4,1054576
tags_threads (tid ID),3,A;B;C,2,8000
tags_threads (tid ID),1,(no tag),5,500
worker-N,0,,0,0
worker-N,1,W,10,100000" "threads.rules + --group-threads worker-N: one group of the four workers"
assert_eq "$("$MPQ" top a.db --rules threads --thread 'worker-N' --format csv | cut -d, -f1,2)" "ncalls,memtot
10,100000" "threads.rules + --thread worker-N"
expect_fail 2 "^mpquery: a.db: no thread whose name matches 'worker-1' in the selected processes" \
    "$MPQ" top a.db --rules threads --thread 'worker-1'
# diff with a side option (--a-...): both sides see the names after the rules
# (before, the sides' selections were copied before the rules were loaded)
assert_eq "$("$MPQ" diff a.db a.db --rules threads --thread 'worker-N' --a-snapshot last --format csv)" \
"a,b,delta,ratio,where
100000,100000,0,1.000,in_work < worker < start_thread < __clone3 < [tag] W" \
    "diff --a-snapshot + threads.rules + --thread worker-N: the workers' 100000 bytes on each side"

# rules in order, back-references; frame rules leave thread names alone and
# thread rules frame names
printf '%s\n' 'thread replace ^worker-([0-9])$ => pool/\1' 'thread replace ^pool/[12]$ => low' \
    'replace ^worker$ => the_worker' 'thread replace ^in_work$ => nothing' > t.rules
assert_eq "$("$MPQ" top a.db --rules ./t.rules --group-threads low --group-threads 'pool/.*' --format csv \
    --thread 'low|pool/.*' | cut -d, -f1-3,11)" \
"thread,ncalls,memtot,where
pool/.*,7,70000,in_work < the_worker < start_thread < __clone3 < [tag] W
low,3,30000,in_work < the_worker < start_thread < __clone3 < [tag] W" "thread rules in order; frame rules apart"
assert_eq "$("$MPQ" top a.db --rules ./t.rules --thread 'worker-.*' 2>&1)" \
  "mpquery: a.db: no thread whose name matches 'worker-.*' in the selected processes (see mpquery info)" \
  "the recorded names are gone after the rules"

# tags: rules see '[tag] NAME' (prune: the scopes inside merge into it)
printf '%s\n' 'prune ^\[tag\] B$' > prune.rules
assert_eq "$("$MPQ" tree a.db --rules ./prune.rules --thread tags_threads --format csv | cut -d, -f3-5)" \
"path,self.ncalls,self.memtot
,0,0
A,4,4000
A;B,6,1062576
(no tag),5,500" "prune on a tag: its inner scopes merge into it"

# errors: one line, FILE:LINE
printf 'thread drop ^x$\n' > bad1.rules
expect_fail 2 '^mpquery: ./bad1.rules:1: a thread rule can only replace \(thread replace REGEX => TEXT\): .drop.$' \
    "$MPQ" top a.db --rules ./bad1.rules
printf '# ok\nthread\n' > bad2.rules
expect_fail 2 "^mpquery: ./bad2.rules:2: a thread rule can only replace" "$MPQ" top a.db --rules ./bad2.rules
printf 'thread replace (x => y\n' > bad3.rules
expect_fail 2 "^mpquery: ./bad3.rules:1: bad regex" "$MPQ" top a.db --rules ./bad3.rules
printf 'thread replace x\n' > bad4.rules
expect_fail 2 "^mpquery: ./bad4.rules:1: replace needs 'REGEX => TEXT'" "$MPQ" top a.db --rules ./bad4.rules
