# The stacks at the peak (heaptrack's "peak memory consumers"): the
# snapshot of reason 'peak' that the first snapshot after a new peak
# writes, selected with --snapshot peak in every command, and the view
# peak_sample. tests/progs/peak_mix.c: one thread's peak of 8000000 bytes
# (keep_a 3000000, keep_b 4000000, big_d 1000000), reached by one block
# larger than the capture step, so exact; spike_c's own peak (4000000)
# comes later, below the process's. Its rows are deltas against the
# previous snapshot that is not a peak ("before"): keep_a has no row of
# its own there. With four threads, the peak (5000000) comes after they
# ended, published, and main frees their blocks.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"
P=$B/tests/peak_mix
MP_QUIET=1 profile p.db $P || fail "the program failed"
assert_eq "$(q p.db "SELECT seq, reason, label FROM snapshot ORDER BY seq" | tr '\n' ' ')" \
    "1|peak| 2|api|before 3|peak| 4|api|after 5|exit| " "a peak snapshot before each snapshot that follows a new peak"
assert_eq "$(q p.db "SELECT ncalls, memtot, nfree, memlive, maxlive FROM totals WHERE snapshot = 3 AND thread = 0")" \
    "5001|8000000|0|8000000|8000000" "the totals at the peak: the process's peak exactly"
assert_eq "$(q p.db "SELECT count(*) FROM sample WHERE snapshot = 3")" 2 "the peak's rows: keep_b and big_d (keep_a as at 'before')"
m1=$(q p.db "SELECT memlive FROM totals WHERE snapshot = 1 AND thread = 0")
python3 -c "import sys; m = $m1; sys.exit(not (3000000 * (1 - 1 / 128) - 1000 <= m <= 3000000))" \
    || fail "the first peak (during keep_a) is not within 1/128 of 3000000: $m1"
echo "  ok: the first peak, during keep_a, within 1/128: $m1"

top_peak=$("$MPQ" top p.db --snapshot peak --format csv | cut -d, -f1-7,10)
assert_eq "$top_peak" "ncalls,memtot,nfree,nlive,memlive,maxlive,ntemp,where
2000,4000000,0,2000,4000000,4000000,0,keep_b < main
3000,3000000,0,3000,3000000,3000000,0,keep_a < main
1,1000000,0,1,1000000,1000000,0,big_d < main" "top --snapshot peak: what was live at the peak"
assert_eq "$("$MPQ" top p.db --format csv --by maxlive | cut -d, -f1-7,10)" "ncalls,memtot,nfree,nlive,memlive,maxlive,ntemp,where
2000,4000000,2000,0,0,4000000,0,keep_b < main
1000,4000000,1000,0,0,4000000,0,spike_c < main
3000,3000000,3000,0,0,3000000,0,keep_a < main
1,1000000,1,0,0,1000000,0,big_d < main" "top at exit: each stack's own peak (their sum, 12000000, is not the process's)"
assert_eq "$("$MPQ" top p.db --snapshot 2 --format csv | cut -d, -f1-5,10)" "ncalls,memtot,nfree,nlive,memlive,where
3000,3000000,0,3000,3000000,keep_a < main" "--snapshot 2 ('before'): the chain without the peak snapshot 1"
assert_eq "$("$MPQ" top p.db --snapshot 4 --format csv | cut -d, -f1-5,10)" "ncalls,memtot,nfree,nlive,memlive,where
2000,4000000,1000,1000,2000000,keep_b < main
3000,3000000,3000,0,0,keep_a < main
1,1000000,0,1,1000000,big_d < main" "--snapshot 4 ('after'): the peak's rows left out of the chain"
assert_eq "$("$MPQ" top p.db --snapshot 3 --format csv | cut -d, -f5 | tail -n +2 | paste -sd+ | bc)" 8000000 \
    "--snapshot 3 names the peak snapshot by its number"
assert_eq "$(q p.db "SELECT SUM(memlive), SUM(nfree) FROM peak_sample")|$(q p.db "SELECT SUM(memlive), SUM(nfree) FROM last_sample")" \
    "8000000|0|0|6001" "views: peak_sample at the peak, last_sample at exit"
assert_eq "$("$MPQ" fold p.db --snapshot peak --by memlive)" "main;big_d 1000000
main;keep_a 3000000
main;keep_b 4000000" "fold --snapshot peak"
assert_eq "$("$MPQ" leaks p.db --snapshot peak --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"])')" \
    "{'blocks': 5001, 'bytes': 8000000, 'stacks': 3, 'rows': 3, 'ignored_stacks': 0, 'ignored_blocks': 0, 'ignored_bytes': 0, 'filters': 0, 'suppressed_stacks': 0, 'suppressed_blocks': 0, 'suppressed_bytes': 0}" \
    "leaks --snapshot peak: the blocks live at the peak"
assert_eq "$("$MPQ" hist p.db --snapshot peak --format csv)" "lo,hi,ncalls,memtot,nlive,memlive
512,1024,3000,3000000,3000,3000000
1024,2048,2000,4000000,2000,4000000
524288,1048576,1,1000000,1,1000000" "hist --snapshot peak: the size classes at the peak"
assert_eq "$("$MPQ" diff p.db p.db --snapshot peak --format csv | tail -n +2 | cut -d, -f1-3 | sort)" "1000000,1000000,0
3000000,3000000,0
4000000,4000000,0" "diff --snapshot peak: both sides at their peak"
assert_match "$("$MPQ" info p.db --bytes)" "3 +\+[0-9.]+s +peak +5001 +8000000 +8000000 +8000000" "info lists the peak snapshot"

MP_QUIET=1 profile t.db $P threads || fail "the program failed (threads)"
assert_eq "$(q t.db "SELECT ncalls, memtot, nfree, memlive, maxlive FROM totals t JOIN peak_snapshot ps ON ps.id = t.snapshot
                     WHERE t.thread = 0")" "4005|5001408|0|5001408|5001408" \
    "threads: the totals at the peak (glibc's 4 thread vectors of 352 bytes live too: prof/base/ns.c)"
assert_eq "$("$MPQ" top t.db --snapshot peak --functions --by memlive --format csv | cut -d, -f1,5,15 | head -n 3)" \
    "self.ncalls,self.memlive,function
4000,4000000,worker_hold
1,1000000,big_d" "threads: the workers' blocks (freed later by main) live at the peak"
assert_eq "$(q t.db "SELECT SUM(nfree) FROM last_sample s JOIN stack_path p ON p.stack = s.stack WHERE p.leaf = 'worker_hold'")" 4000 \
    "threads: freed by main at exit"
