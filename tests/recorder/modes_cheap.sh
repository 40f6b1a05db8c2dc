# The cheap modes (MP_STACKS=none, MP_ENABLED=0, MP_SAMPLE, MP_STACKS=tags)
# track only the blocks that get a stack and are sampled: calls, bytes and
# frees stay exact; live and peak bytes are the allocator's block sizes
# (tests/progs/cheap_modes.c computes each from glibc's rule). Full capture
# keeps requested bytes. With MP_STACKS=tags every allocation counts for its
# tag path exactly, without unwinding; sampling there only chooses the blocks
# whose frees are followed.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/cheap_modes
totals() { q "$1" 'SELECT ncalls, memtot, nfree, memlive, maxlive, nfree_unknown FROM process_totals'; }
profile full.db $P 2>/dev/null || fail "full: the program failed"
assert_eq "$(totals full.db)" "13520|3435752|12419|1155576|3148576|0" "full capture: requested bytes live and at the peak"
# temporary blocks (heaptrack's definition: freed by their thread before it
# allocated or freed anything else): every pair and calloc, each realloc
# step (the old block goes before the new one is counted) and grow's final
# free; not peak's last block (the others were freed before it)
ntemp() { q "$1" "SELECT sp.leaf, SUM(s.ntemp) FROM last_sample s JOIN stack_path sp USING (stack)
                  GROUP BY sp.leaf HAVING SUM(s.ntemp) > 0 ORDER BY sp.leaf"; }
assert_eq "$(ntemp full.db | tr '\n' ' ')" "grow|9 pairs|10000 tagged_work|300 zeroed|10 " "full capture: ntemp per function"
# the size histogram: [16,32) pairs and grow's 16; [32,64) outer and 32;
# [64,128) keep, inner and 64 (live: keep's 1000 and inner's 100); [512,1024)
# peak, zeroed and 512; one each of grow's 128..4096; big
hist() { q "$1" "SELECT lo, ncalls, memtot, nlive, memlive FROM hist JOIN last_snapshot ls ON ls.id = hist.snapshot" | tr '\n' ' '; }
assert_eq "$(hist full.db)" "16|10001|240016|0|0 32|301|15032|0|0 64|1201|114064|1100|107000 128|1|128|0|0 256|1|256|0|0 512|2011|2010512|0|0 1024|1|1024|0|0 2048|1|2048|0|0 4096|1|4096|0|0 1048576|1|1048576|1|1048576 " \
    "full capture: the size histogram"
for mode in "MP_STACKS=none" "MP_ENABLED=0" "MP_SAMPLE=64K" "MP_STACKS=tags" "MP_STACKS=tags MP_SAMPLE=4K"; do
    rm -f c.db
    env $mode LD_PRELOAD=$LIB MP_OUT=c.db $P 2>/dev/null || fail "$mode: the program failed"
    assert_eq "$(totals c.db)" "13520|3435752|12419|1163856|3156656|0" "$mode: exact calls, bytes, frees; allocator bytes live and at the peak"
    assert_eq "$(hist c.db | cut -d' ' -f3,10)" "64|1201|114064|1100|111200 1048576|1|1048576|1|1052656" \
        "$mode: the histogram's live blocks in the allocator's bytes"
    case $mode in
    MP_STACKS=none | MP_ENABLED=0)
        assert_eq "$(q c.db 'SELECT count(*) FROM sample')|$(q c.db 'SELECT ncalls_nostack, memtot_nostack FROM process_totals')" \
            "0|13520|3435752" "$mode: no stacks, everything counted without one" ;;
    MP_STACKS=tags)
        # no sampling: every tagged block tracked, exact on both sides
        assert_eq "$(q c.db "SELECT sp.path, s.ncalls, s.memtot, s.nfree, s.memlive, s.maxlive FROM last_sample s
                              JOIN stack_path sp USING (stack) ORDER BY sp.path")" \
            "outer|300|15000|300|0|50
outer;inner|200|14000|100|7000|14000" "$mode: the tag paths, exact"
        assert_eq "$(q c.db 'SELECT ncalls_nostack, memtot_nostack FROM process_totals')" "13020|3406752" \
            "$mode: untagged allocations counted without a stack"
        assert_eq "$(q c.db "SELECT sp.path, s.ntemp FROM last_sample s JOIN stack_path sp USING (stack) ORDER BY sp.path" | tr '\n' ' ')" \
            "outer|300 outer;inner|0 " "$mode: temporary blocks per tag path" ;;
    "MP_STACKS=tags MP_SAMPLE=4K")
        # calls and bytes per tag path exact; live bytes estimated from the sampled blocks
        assert_eq "$(q c.db "SELECT sp.path, s.ncalls, s.memtot FROM last_sample s JOIN stack_path sp USING (stack) ORDER BY sp.path")" \
            "outer|300|15000
outer;inner|200|14000" "$mode: calls and bytes per tag path exact"
        assert_eq "$(q c.db "SELECT s.memlive FROM last_sample s JOIN stack_path sp USING (stack) WHERE sp.path = 'outer'")" 0 \
            "$mode: a tag path whose blocks were all freed has no live bytes" ;;
    esac
done
# four threads, each frees what another allocates: the process's numbers
# stay exact (a thread's count the frees it made)
LD_PRELOAD=$LIB MP_OUT=x.db MP_STACKS=none $B/tests/threads_cross_free >/dev/null 2>&1 || fail "threads_cross_free failed"
LD_PRELOAD=$LIB MP_OUT=y.db $B/tests/threads_cross_free >/dev/null 2>&1 || fail "threads_cross_free failed"
assert_eq "$(q x.db 'SELECT ncalls, memtot, nfree FROM process_totals')" "$(q y.db 'SELECT ncalls, memtot, nfree FROM process_totals')" \
    "MP_STACKS=none, four threads: calls, bytes and frees as with full capture"
# live: the 12 leaked 64-byte blocks (72 bytes each) and glibc's 4 thread
# vectors (calloc of 352 bytes, 360 each: 16 bytes for each module with
# thread-local storage, libc, libmallocprof.so, and in the profiler's
# namespace libc, libunwind, libdw and libelf; prof/base/ns.c)
assert_eq "$(q x.db 'SELECT memlive FROM process_totals')" 2304 "MP_STACKS=none, four threads: live bytes"
# mpquery info says which bytes the live figures are
assert_match "$("$MPQ" info full.db)" "live bytes: requested sizes" "info: full capture counts requested bytes"
assert_match "$("$MPQ" info c.db)" "live bytes: the allocator's block sizes" "info: a cheap mode counts the allocator's"
assert_match "$("$MPQ" info --format json c.db)" '"live_bytes": "allocator"' "info --format json: live_bytes"
