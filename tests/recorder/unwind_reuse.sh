# The cfi walker's reuse of its previous walk (unwind.c) records exactly
# the stacks of a full walk where the leaf looks the same and the outside
# differs: a shared function called from two callers with the same frame
# sizes, recursion to changing depths, longjmp, a C++ exception, a signal
# handler, a coroutine on its own stack (tests/progs/unwind_reuse.cc,
# -O2 without frame pointers and with them). MP_UNWIND_CHECK=1 walks every capture again
# in full and counts the differences.
. "$(dirname "$0")/../lib/lib.sh"
for prog in unwind_reuse unwind_reuse_fp; do
    MP_UNWIND_CHECK=1 profile $prog.db $B/tests/$prog 2>err
    check=$(grep 'MP_UNWIND_CHECK: .* walks' err)
    assert_match "$check" ' 0 mismatches$' "$prog: no capture differs from its full walk"
    reused=$(echo "$check" | sed 's/.*frames, \([0-9]*\) reused.*/\1/')
    [ "$reused" -gt 1000 ] || fail "the walks reused only $reused frames: $check"
    assert_match "$(grep 'MP_UNWIND_CHECK: .* rules' err)" ' 0 differ' "$prog: the rules read with .eh_frame_hdr's table are libdw's"
    # by scene (bytes - 24), from main on (gcc puts the code after the first
    # catch in main.cold)
    stacks() {
        q "$1" "SELECT memtot / ncalls - 24, ncalls, path FROM stack_totals WHERE memtot / ncalls BETWEEN 25 AND 30 ORDER BY 1, 3" |
            sed 's/|[^|]*;main\(\.cold\)\?;/|main;/'
    }
    assert_eq "$(stacks $prog.db)" "1|100|main;rp_caller_a;rp_common;rp_alloc
1|100|main;rp_caller_b;rp_common;rp_alloc
2|10|main;rp_rec;rp_rec;rp_alloc
2|20|main;rp_rec;rp_rec;rp_rec;rp_rec;rp_alloc
2|20|main;rp_rec;rp_rec;rp_rec;rp_rec;rp_rec;rp_rec;rp_rec;rp_alloc
2|50|main;rp_throw_mid;rp_throw;std::runtime_error::runtime_error(char const*);std::string::_Rep::_S_create(unsigned long, unsigned long, std::allocator<char> const&);operator new(unsigned long)
3|50|main;rp_jump1;rp_jump2;rp_jump3;rp_alloc
3|50|main;rp_land1;rp_land2;rp_land3;rp_alloc
4|50|main;rp_after_throw;rp_after_throw2;rp_alloc
4|50|main;rp_throw_mid;rp_throw;rp_alloc
5|20|main;rp_after_signal;rp_alloc
5|20|main;rp_raise;raise;__pthread_kill_implementation;/lib/x86_64-linux-gnu/libc.so.6+0x3c050;rp_handler;rp_alloc
6|20|/lib/x86_64-linux-gnu/libc.so.6+0x519c0;rp_co_body;rp_alloc
6|20|main;rp_after_co;rp_alloc" "$prog: each scene's stacks and counts"
    # and the same stacks as libunwind's
    MP_UNWIND=libunwind profile lu_$prog.db $B/tests/$prog 2>/dev/null
    assert_eq "$(stacks $prog.db)" "$(stacks lu_$prog.db)" "$prog: the stacks libunwind records"
done
