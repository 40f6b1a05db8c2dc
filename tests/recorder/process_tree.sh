#!/bin/bash
# A 50-process tree made by fork, fork + exec and posix_spawn (see
# tests/progs/proc_tree.c), whose 33 leaves exit at the same moment: every
# process in the database with exact counts, the rows linked into the tree
# by ppid, no lock error, an intact file, and mpquery reads it.
source "$(dirname "$0")/../lib/lib.sh"
N=50
start=$(date +%s.%N)
timeout 60 env LD_PRELOAD=$LIB MP_OUT=a.db $B/tests/proc_tree >> tree.txt 2>err; rc=$?
echo "# $N processes under the profiler: $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s"
assert_eq "$rc" 0 "the tree ran and every process exited 0"
assert_eq "$(grep -c ' node$' tree.txt) $(cut -d' ' -f1 tree.txt | sort -u | wc -l)" "$N $N" "$N processes (distinct pids) ran"
pre=$(grep -c ' pre-exec$' tree.txt)
assert_eq "$pre" 17 "17 of them forked an image that then exec'd"
assert_eq "$(grep -v '^mallocprof: info: wrote .*/a.db: ' err)" "" "stderr has only the recorder's info lines (no 'database is locked')"

# one process row per image: the N processes at exit, the pre-exec images
assert_eq "$(q a.db "SELECT count(*), count(DISTINCT pid), count(DISTINCT run) FROM process")" "$((N + pre))|$N|1" \
    "$((N + pre)) process rows (one per image), $N pids, one run"
assert_eq "$(q a.db "SELECT ls.reason, count(*) FROM process p JOIN last_snapshot ls ON ls.process = p.id
                     GROUP BY ls.reason ORDER BY ls.reason")" "exec|$pre
exit|$N" "last snapshot: exit for the $N processes, exec for the pre-exec images"

# the 33 leaves (nodes 17..49) exit together: after every process started
leaves=$(awk '$3 == "node" && $2 >= 17 { print $1 }' tree.txt | paste -sd,)
assert_eq "$(q a.db "SELECT count(*), MIN(ls.time) >= (SELECT MAX(start_time) FROM process)
                     FROM process p JOIN last_snapshot ls ON ls.process = p.id
                     WHERE p.pid IN ($leaves) AND ls.reason = 'exit'")" "33|1" \
    "33 leaves wrote their exit snapshots after the last process started"
echo "# the leaves' exit snapshots within $(q a.db "SELECT printf('%.3f', MAX(ls.time) - MIN(ls.time))
     FROM process p JOIN last_snapshot ls ON ls.process = p.id WHERE p.pid IN ($leaves) AND ls.reason = 'exit'") s"

# counts of tree_alloc per row, as the program says: node I makes 100 + I
# blocks of 64 bytes and frees half; a pre-exec image 10, frees 5
actual=$(q a.db "SELECT p.pid, ls.reason, SUM(s.ncalls), SUM(s.memtot), SUM(s.nfree)
                 FROM process p JOIN last_snapshot ls ON ls.process = p.id
                 LEFT JOIN last_sample s ON s.process = p.id
                      AND s.stack IN (SELECT stack FROM stack_path WHERE leaf = 'tree_alloc')
                 GROUP BY p.id ORDER BY p.pid, ls.reason")
expected=$(awk '$3 == "node" { n = 100 + $2; print $1 "|exit|" n "|" 64 * n "|" int(n / 2) }
                $3 == "pre-exec" { print $1 "|exec|10|640|5" }' tree.txt | sort -t'|' -k1,1n -k2,2)
[ "$actual" == "$expected" ] || fail "tree_alloc per row: expected
$expected
got
$actual"
echo "  ok: every row's tree_alloc ncalls, memtot and nfree ($(echo "$actual" | wc -l) rows)"

# ppid links: node I's parent is node (I - 1) / 3
links=$(q a.db "SELECT DISTINCT pid, ppid FROM process" | tr '|' ' ' \
    | awk 'NR == FNR { if ($3 == "node") idx[$1] = $2; next }
           { i = idx[$1]; if (i == 0) print "root"; else if (($2 in idx) && idx[$2] == int((i - 1) / 3)) print "ok"; else print "bad " $1 " " $2 }' \
          tree.txt - | sort | uniq -c | sed 's/^ *//')
assert_eq "$links" "$((N - 1)) ok
1 root" "every ppid but the root's is the pid of its parent node"
assert_eq "$(q a.db "SELECT count(*) FROM process c WHERE NOT EXISTS (SELECT 1 FROM process p WHERE p.pid = c.ppid)")" 1 \
    "one root: every other row's ppid is another row's pid"
assert_eq "$(q a.db 'PRAGMA integrity_check')" ok "integrity_check"

# mpquery info: the process tree lists every image, nested by ppid (node
# 49 is 4 levels below the root: 8 more spaces), and the exact total
info=$("$MPQ" info a.db --bytes) || fail "info failed"
rows=$(printf '%s\n' "$info" | awk '/^processes: / { f = 1; next } f && /^$/ { exit } f' | tail -n +2)
assert_eq "$(printf '%s\n' "$rows" | wc -l) $(printf '%s\n' "$rows" | awk '{ print $1 }' | sort -u | wc -l)" \
    "$((N + pre)) $N" "info: $((N + pre)) rows, $N pids"
pid49=$(awk '$2 == 49 && $3 == "node" { print $1 }' tree.txt)
assert_match "$rows" "^ +$pid49 .*[0-9] {10}proc_tree node 49 " "info: node 49 nested 4 levels deep"
ptree=$(printf '%s\n' "$info" | awk '/^process tree/ { f = 1 } f && /^$/ { exit } f')
assert_eq "$(printf '%s\n' "$ptree" | head -1), $(printf '%s\n' "$ptree" | tail -n +2 | wc -l) lines" \
    "process tree: $N processes, $pre exec'd, $N lines" "info: the process tree, a line a pid"
assert_match "$ptree" "^ {10}$pid49 proc_tree → proc_tree: returned from main with status 0$" "info: node 49 (fork + exec) 4 levels deep in the tree"
total=$(( (100 + 100 + N - 1) * N / 2 + 10 * pre ))
assert_match "$info" "^  ncalls  $total allocations \(0 without a stack\)\$" "info: $total allocations in all"

# --pid: node 18 (forked, one image), node 4 (fork + exec: both images)
top_of() {  # top_of NODE: its top rows as CSV without the stack id column
    local pid=$(awk -v n=$1 '$2 == n && $3 == "node" { print $1 }' tree.txt)
    "$MPQ" top a.db --pid "$pid" --by ncalls --format csv | cut -d, -f1-7,9-
}
# ntemp 0: tree_alloc frees its first blocks after allocating the last one
assert_eq "$(top_of 18)" "ncalls,memtot,nfree,nlive,memlive,maxlive,ntemp,stacks,where
118,7552,59,59,3776,7552,0,1,tree_alloc < node_run < start_child < node_run < main" "top --pid: node 18 (forked)"
assert_eq "$(top_of 4)" "ncalls,memtot,nfree,nlive,memlive,maxlive,ntemp,stacks,where
104,6656,52,52,3328,6656,0,1,tree_alloc < node_run < main
10,640,5,5,320,640,0,1,tree_alloc < pre_exec < start_child < node_run < main" "top --pid: node 4 (fork + exec: both images)"
