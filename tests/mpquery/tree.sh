#!/bin/bash
# mpquery tree: the tree of tag scopes with self and total per node, on
# tests/progs/tags_threads.c (exact allocations per scope: A{B{C}} in the
# main thread, W in four threads worker-1..4, some outside any tag), in
# text, csv, json and dot (rendered by Graphviz's dot); --per-thread,
# --group-threads, --snapshot peak, -n, --depth, --functions, filters,
# rules on tag names, and the errors.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
[ -x "$B/tests/tags_threads" ] || fail "$B/tests/tags_threads is not built (make)"
MP_QUIET=1 profile a.db "$B/tests/tags_threads" || fail "tags_threads failed"
# ids: (pid N) and (tid N) vary from run to run
no_ids() { sed -E 's/\((pid|tid) [0-9]+\)/(\1 ID)/g'; }
tree() { "$MPQ" tree a.db --bytes "$@" | no_ids; }

# Per scope (self, memtot): A 4000, B 6000 + the 1 MiB scratch block (freed),
# C 8000, W 10000 * (1+2+3+4), outside any tag 500.
assert_eq "$("$MPQ" tree a.db | no_ids)" \
"self.memtot  self%  total.memtot  total%  tag
        0 B    0.0      1.11 MiB   100.0  tags_threads (pid ID)
   3.91 KiB    0.3      1.02 MiB    91.4    A
   1.01 MiB   90.4      1.01 MiB    91.0      B
   7.81 KiB    0.7      7.81 KiB     0.7        C
   97.7 KiB    8.6      97.7 KiB     8.6    W
      500 B    0.0         500 B     0.0    (no tag)" "text: the scopes, sorted by memtot, sizes in units"
assert_eq "$(tree)" \
"self.memtot  self%  total.memtot  total%  tag
          0    0.0       1167076   100.0  tags_threads (pid ID)
       4000    0.3       1066576    91.4    A
    1054576   90.4       1062576    91.0      B
       8000    0.7          8000     0.7        C
     100000    8.6        100000     8.6    W
        500    0.0           500     0.0    (no tag)" "text --bytes: the scopes in bytes"
assert_eq "$(tree --by memlive | tail -n +3)" \
"      100000   84.4         100000    84.4    W
        4000    3.4          18000    15.2    A
        6000    5.1          14000    11.8      B
        8000    6.8           8000     6.8        C
         500    0.4            500     0.4    (no tag)" "--by memlive: W first, the scratch block freed"

# csv: every counter, self and total, a row a node
assert_eq "$(tree --format csv)" \
"root,depth,path,self.ncalls,self.memtot,self.nfree,self.nlive,self.memlive,self.maxlive,self.ntemp,total.ncalls,total.memtot,total.nfree,total.nlive,total.memlive,total.maxlive,total.ntemp
tags_threads (pid ID),0,,0,0,0,0,0,0,0,25,1167076,1,24,118500,1167076,1
tags_threads (pid ID),1,A,4,4000,0,4,4000,4000,0,10,1066576,1,9,18000,1066576,1
tags_threads (pid ID),2,A;B,4,1054576,1,3,6000,1054576,1,6,1062576,1,5,14000,1062576,1
tags_threads (pid ID),3,A;B;C,2,8000,0,2,8000,8000,0,2,8000,0,2,8000,8000,0
tags_threads (pid ID),1,W,10,100000,0,10,100000,100000,0,10,100000,0,10,100000,100000,0
tags_threads (pid ID),1,(no tag),5,500,0,5,500,500,0,5,500,0,5,500,500,0" "csv"

# json: nested; every node's total is its self plus its children's totals
json=$("$MPQ" tree a.db --format json) || fail "tree --format json failed"
# walk JSON: per node of every root "PATH SELF.MEMTOT/TOTAL.NCALLS", after
# checking that the node's total is its self plus its children's totals
walk() {
    python3 -c '
import json, sys
def walk(n, path):
    for k in n["total"]:
        assert n["total"][k] == n["self"][k] + sum(c["total"][k] for c in n["children"]), (path, k)
    out = ["%s %d/%d" % (path, n["self"]["memtot"], n["total"]["ncalls"])]
    for c in n["children"]:
        out += walk(c, path + "/" + c["name"])
    return out
j = json.load(sys.stdin)
print(len(j), " ".join(" ".join(walk(r, "")) for r in j))' <<<"$1" || fail "walk: invalid JSON or a total that does not add up"
}
assert_eq "$(walk "$json")" \
  "1  0/25 /A 4000/10 /A/B 1054576/6 /A/B/C 8000/2 /W 100000/10 /(no tag) 500/5" \
  "json: one root, self memtot / total ncalls per node, totals add up"
assert_eq "$(json_get "$json" 'sorted(j[0]["self"].keys()) == sorted(["ncalls", "memtot", "nfree", "nlive", "memlive", "maxlive", "ntemp"])')" \
  True "json: every counter"

# --per-thread: a tree per thread; --group-threads merges the workers
assert_eq "$(tree --per-thread)" \
"self.memtot  self%  total.memtot  total%  tag
          0    0.0       1067076    91.4  tags_threads (tid ID)
       4000    0.3       1066576    91.4    A
    1054576   90.4       1062576    91.0      B
       8000    0.7          8000     0.7        C
        500    0.0           500     0.0    (no tag)
          0    0.0         40000     3.4  worker-4 (tid ID)
      40000    3.4         40000     3.4    W
          0    0.0         30000     2.6  worker-3 (tid ID)
      30000    2.6         30000     2.6    W
          0    0.0         20000     1.7  worker-2 (tid ID)
      20000    1.7         20000     1.7    W
          0    0.0         10000     0.9  worker-1 (tid ID)
      10000    0.9         10000     0.9    W" "--per-thread"
json=$("$MPQ" tree a.db --group-threads 'worker-.*' --format json) || fail "--group-threads failed"
assert_eq "$(json_get "$json" '[(r["name"], r["total"]["ncalls"], r["total"]["memtot"], [c["name"] for c in r["children"]]) for r in j][1]')" \
  "('worker-.*', 10, 100000, ['W'])" "--group-threads 'worker-.*': one root for the four workers"
assert_eq "$(json_get "$json" 'len(j)')" 2 "--group-threads: the main thread stays alone"
assert_eq "$(tree --thread 'worker-.*' --format csv | tail -n +2 | cut -d, -f2-5)" "0,,0,0
1,W,10,100000" "--thread 'worker-.*': the workers' allocations"
assert_eq "$(tree --thread 'worker-[13]' --format csv | tail -n 1 | cut -d, -f2-5)" "1,W,4,40000" \
  "--thread 'worker-[13]': worker-1 and worker-3"

# the peak: the scratch block live, C not yet allocated
assert_eq "$(tree --snapshot peak --by memlive --format csv | cut -d, -f2,3,8,15)" \
"depth,path,self.memlive,total.memlive
0,,0,1159076
1,A,4000,1058576
2,A;B,1054576,1054576
1,W,100000,100000
1,(no tag),500,500" "--snapshot peak"

# -n and --depth: the children left out are one node
assert_eq "$(tree -n 1 --depth 1 | tail -n +2)" \
"          0    0.0       1167076   100.0  tags_threads (pid ID)
       4000    0.3       1066576    91.4    A
     100500    8.6        100500     8.6    (2 more)" "-n 1 --depth 1"
assert_eq "$(tree --depth 2 | tail -n +3 | cut -c43- | tr "\n" "|")" "  A|    B|  W|  (no tag)|" "--depth 2: C left out"

# --functions: the call tree (default rules: start-up frames dropped)
assert_eq "$(tree --functions --thread tags_threads --format csv | cut -d, -f2,3,5,12)" \
"depth,path,self.memtot,total.memtot
0,,0,1067076
1,[tag] A,0,1066576
2,[tag] A;[tag] B,0,1062576
3,[tag] A;[tag] B;main,0,1054576
4,[tag] A;[tag] B;main;scratch,1048576,1048576
4,[tag] A;[tag] B;main;in_b,6000,6000
3,[tag] A;[tag] B;[tag] C,0,8000
4,[tag] A;[tag] B;[tag] C;main,0,8000
5,[tag] A;[tag] B;[tag] C;main;in_c,8000,8000
2,[tag] A;main,0,4000
3,[tag] A;main;in_a,4000,4000
1,main,0,500
2,main;no_tag,500,500" "--functions --thread tags_threads"

# filters: what they leave out is said
assert_eq "$(tree --exclude '^scratch$' | grep -E '  B$|^ignored')" \
"       6000    5.1         14000    11.8      B
ignored 1 stacks (1 calls, 1048576 bytes) with 1 filters" "--exclude scratch"

# rules see tags as '[tag] NAME': replace renames, drop merges into the parent
printf '%s\n' 'replace ^\[tag\] ([AB])$ => [tag] scope-\1' 'drop ^\[tag\] C$' > tags.rules
assert_eq "$(tree --rules ./tags.rules --format csv | cut -d, -f2,3,5,12)" \
"depth,path,self.memtot,total.memtot
0,,0,1167076
1,scope-A,4000,1066576
2,scope-A;scope-B,1062576,1062576
1,W,100000,100000
1,(no tag),500,500" "rules on tag names: replace, drop"

# dot: Graphviz's dot renders it; nodes named, filled by self share
if ! sh "$ROOT/tests/lib/deps.sh" graphviz >deps.log 2>&1 || ! command -v dot >/dev/null; then
    echo "SKIP: graphviz cannot be installed ($(tail -n 1 deps.log)): the dot output is not rendered"
else
    "$MPQ" tree a.db --format dot > tree.dot || fail "tree --format dot failed"
    dot -Tsvg tree.dot > tree.svg 2>dot.err || fail "dot -Tsvg rejected the output: $(cat dot.err)"
    [ -s dot.err ] && fail "dot warned: $(cat dot.err)"
    texts=$(sed -n 's/.*<text[^>]*>\([^<]*\)<\/text>.*/\1/p' tree.svg)
    for name in A B C W "(no tag)" "self: 1.01 MiB (90.4%), 4 calls" "total: 97.7 KiB (8.6%), 10 calls"; do
        printf '%s\n' "$texts" | grep -qxF -- "$name" || fail "the svg has no text '$name': $texts"
    done
    echo "  ok: dot -Tsvg renders the tree, with its nodes and their values"
    assert_eq "$(grep -c -- '->' tree.dot)" 5 "dot: an edge per parent -> child"
    assert_match "$(grep '"B\\n' tree.dot)" 'fillcolor=8, fontcolor=white' "dot: B (90% of self) filled dark"
    "$MPQ" tree a.db --functions --per-thread --format dot | dot -Tsvg > functions.svg 2>dot.err \
        || fail "dot -Tsvg rejected --functions --per-thread: $(cat dot.err)"
    echo "  ok: dot renders --functions --per-thread"
fi

# hostile names (tags and a thread with quotes, backslashes, a newline, ';',
# invalid UTF-8): csv quotes them, json and dot escape them
{ cat "$ROOT/schema/profile.sql"; echo "$STACK_IN"; cat <<'SQL'
INSERT INTO run VALUES (1, 'tok1', 1000.0);
INSERT INTO process(id, run, pid, ppid, exe, cmdline, host, start_time, end_time, settings)
  VALUES (1, 1, 100, 1, '/usr/bin/app', 'app', 'host1', 1000.0, 1002.5, '');
INSERT INTO thread VALUES (1, 1, 1, 100, 'ma"in' || char(10) || 'x');
INSERT INTO module VALUES (1, '/usr/bin/app', 'abcd'), (2, '[tag]', '');
INSERT INTO function VALUES (1, 'main'), (2, 'q"uote\back\slash'), (3, 'new' || char(10) || 'line;semi'),
  (4, CAST(X'41FF42' AS TEXT));
INSERT INTO frame VALUES (1, 1, 256, 0, 1, NULL, 0), (2, 2, 1, 0, 2, NULL, 0), (3, 2, 2, 0, 3, NULL, 0),
  (4, 2, 3, 0, 4, NULL, 0);
INSERT INTO stack VALUES (1, 0, 2), (2, 1, 3), (3, 2, 1), (4, 0, 4), (5, 4, 1);
INSERT INTO snapshot VALUES (1, 1, 1, 1002.5, 'exit', '', 0);
INSERT INTO sample(snapshot, stack, thread, ncalls, memtot, nfree, memlive, maxlive)
  VALUES (1, 3, 1, 2, 200, 0, 200, 200), (1, 5, 1, 1, 50, 0, 50, 50);
INSERT INTO totals VALUES (1, 0, 3, 250, 0, 250, 250, 0, 0, 0), (1, 1, 3, 250, 0, 250, 250, 0, 0, 0);
SQL
echo "$STACK_OUT"; } | sqlite3 -batch h.db || fail "cannot build h.db"
assert_eq "$("$MPQ" tree h.db --format csv | cut -d, -f2- | tail -n 3)" \
$'1,"q""uote\\back\\slash",0,0,0,0,0,0,0,2,200,0,2,200,200,0
2,"q""uote\\back\\slash;new line:semi",2,200,0,2,200,200,0,2,200,0,2,200,200,0
1,A\xffB,1,50,0,1,50,50,0,1,50,0,1,50,50,0' "hostile names: csv (';' as in fold, bytes as they are)"
json=$("$MPQ" tree h.db --per-thread --format json) || fail "tree h.db --format json failed"
assert_eq "$(json_get "$json" 'ascii([j[0]["name"], j[0]["children"][0]["children"][0]["name"], j[0]["children"][1]["name"]])')" \
  "['ma\"in\\nx (tid 100)', 'new\\nline;semi', 'A\\ufffdB']" "hostile names: json"
if command -v dot >/dev/null; then
    "$MPQ" tree h.db --per-thread --format dot | dot -Tsvg > h.svg 2>dot.err || fail "dot rejected h.db's tree: $(cat dot.err)"
    assert_match "$(cat h.svg)" 'q&quot;uote\\back\\slash' "hostile names: dot escapes them, renders"
fi

expect_fail 2 "^mpquery: tree: bad value 'svg' for --format \(expected text, csv, json or dot\)" "$MPQ" tree a.db --format svg
expect_fail 2 "^mpquery: tree: bad value 'x' for -n" "$MPQ" tree a.db -n x
expect_fail 2 "^mpquery: tree: bad value '-1' for --depth" "$MPQ" tree a.db --depth -1
expect_fail 2 "^mpquery: tree: bad regex '\[' for --group-threads" "$MPQ" tree a.db --group-threads '['
expect_fail 2 "^mpquery: a.db: no thread whose name matches 'worker' in the selected processes" \
    "$MPQ" tree a.db --thread worker
expect_fail 2 "^mpquery: tree: missing DB" "$MPQ" tree
