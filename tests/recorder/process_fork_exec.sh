# fork + exec: one database, a row per process image, the child's
# allocations before its exec included, exit status passed through.
. "$(dirname "$0")/../lib/lib.sh"
profile a.db $B/tests/fork_exec 2>err; rc=$?
assert_eq "$rc" 5 "exit status of the parent (the child's)"
assert_eq "$(q a.db "SELECT p.cmdline LIKE '% exec', sp.leaf, s.ncalls, s.memtot, s.nfree FROM last_sample s
     JOIN stack_path sp USING(stack) JOIN process p ON p.id = s.process ORDER BY sp.leaf")" "0|child_before_exec|20|4440|0
1|exec_work|30|9990|30
0|parent_work|10|1110|10" "each process's own allocations"
assert_eq "$(q a.db "SELECT count(*), count(DISTINCT pid), count(DISTINCT run) FROM process")" "3|2|1" "3 process rows, 2 pids, 1 run"
assert_eq "$(q a.db "SELECT reason FROM snapshot s JOIN process p ON p.id = s.process WHERE p.cmdline NOT LIKE '% exec' AND s.reason != 'peak' ORDER BY s.reason")" "exec
exit" "the child flushed before exec, the parent at exit"
assert_eq "$(q a.db "SELECT count(*) FROM process c JOIN process p ON c.ppid = p.pid AND c.id != p.id")" 2 "child rows link to the parent pid"
assert_eq "$(q a.db 'PRAGMA integrity_check')" ok "integrity_check"
