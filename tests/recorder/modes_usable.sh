# The cheap modes' live bytes are the allocator's block sizes, read from
# glibc's chunk headers (hot.h block_usable) once the first 1024 blocks
# agreed with malloc_usable_size: every small size class, the large bins,
# aligned, calloc'd, realloc'd and mmapped blocks give exactly what
# malloc_usable_size gives (tests/progs/usable_sizes.c prints its sum over
# the blocks it leaves live), in the totals and in the histogram.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/usable_sizes
want=$($P) || fail "usable_sizes failed"
assert_eq "$want" 96056840 "the sum of malloc_usable_size (glibc 2.36)"
for mode in "MP_STACKS=none" "MP_ENABLED=0" "MP_SAMPLE=4K" "MP_STACKS=tags"; do
    rm -f u.db
    got=$(env $mode LD_PRELOAD=$LIB MP_OUT=u.db MP_QUIET=1 $P) || fail "$mode: the program failed"
    # Without stacks the recorder allocates nothing from the program's
    # heap while it runs, and the program's blocks are where they were. A
    # sampled capture may read unwind tables with libdw, whose blocks come
    # from the same heap and may move a realloc'd block of the program: the
    # counters then equal the program's own sum under the recorder.
    [ "$mode" = MP_SAMPLE=4K ] || assert_eq "$got" "$want" "$mode: the program's sum is the same under the recorder"
    assert_eq "$(q u.db 'SELECT ncalls, nfree, memlive FROM process_totals')" "1226|632|$got" \
        "$mode: calls, frees, live bytes = the sum of malloc_usable_size"
    assert_eq "$(q u.db 'SELECT SUM(nlive), SUM(memlive) FROM hist JOIN last_snapshot ls ON ls.id = hist.snapshot')" "594|$got" \
        "$mode: the histogram's live blocks and bytes"
done
