# 400 forks while another thread allocates in a loop: no hang, and every
# child (leaving through _exit, which skips destructors) has its row with
# exact counts.
. "$(dirname "$0")/../lib/lib.sh"
N=400
start=$(date +%s.%N)
timeout 240 env LD_PRELOAD=$LIB MP_OUT=a.db $B/tests/fork_storm $N 2>err; rc=$?
assert_eq "$rc" 0 "no hang, every child exited 0"
echo "# $N forks under the profiler: $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s"
assert_eq "$(q a.db "SELECT count(*) FROM process_totals p JOIN process USING(pid) WHERE ncalls = 5 AND memtot = 250 AND memlive = 250")" $N "every child's row, exact"
assert_eq "$(q a.db "SELECT count(*) FROM process")" $((N + 1)) "one row per process"
assert_eq "$(q a.db "SELECT count(DISTINCT run) FROM process")" 1 "one run"
assert_eq "$(q a.db 'PRAGMA integrity_check')" ok "integrity_check"
