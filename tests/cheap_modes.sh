# The cheap modes (MP_STACKS=none, MP_ENABLED=0, MP_SAMPLE, MP_STACKS=tags)
# track only the blocks that get a stack and are sampled: calls, bytes and
# frees stay exact; live and peak bytes are the allocator's block sizes
# (tests/progs/cheap_modes.c computes each from glibc's rule). Full capture
# keeps requested bytes. With MP_STACKS=tags every allocation counts for its
# tag path exactly, without unwinding; sampling there only chooses the blocks
# whose frees are followed.
. "$(dirname "$0")/lib.sh"
P=$B/tests/cheap_modes
totals() { q "$1" 'SELECT ncalls, memtot, nfree, memlive, maxlive, nfree_unknown FROM process_totals'; }
profile full.db $P 2>/dev/null || fail "full: the program failed"
assert_eq "$(totals full.db)" "13520|3435752|12419|1155576|3148576|0" "full capture: requested bytes live and at the peak"
for mode in "MP_STACKS=none" "MP_ENABLED=0" "MP_SAMPLE=64K" "MP_STACKS=tags" "MP_STACKS=tags MP_SAMPLE=4K"; do
    rm -f c.db
    env $mode LD_PRELOAD=$LIB MP_OUT=c.db $P 2>/dev/null || fail "$mode: the program failed"
    assert_eq "$(totals c.db)" "13520|3435752|12419|1163856|3156656|0" "$mode: exact calls, bytes, frees; allocator bytes live and at the peak"
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
            "$mode: untagged allocations counted without a stack" ;;
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
# vectors (calloc of 336 bytes, 344 each)
assert_eq "$(q x.db 'SELECT memlive FROM process_totals')" 2240 "MP_STACKS=none, four threads: live bytes"
# mpquery info says which bytes the live figures are
assert_match "$("$MPQ" info full.db)" "live bytes: requested sizes" "info: full capture counts requested bytes"
assert_match "$("$MPQ" info c.db)" "live bytes: the allocator's block sizes" "info: a cheap mode counts the allocator's"
assert_match "$("$MPQ" info --format json c.db)" '"live_bytes": "allocator"' "info --format json: live_bytes"
