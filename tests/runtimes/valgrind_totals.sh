# The totals of every mode against valgrind's (Debian's valgrind, memcheck's
# "total heap usage: N allocs, F frees, B bytes allocated") on the
# single-threaded test programs: calls, bytes and frees are exact whether
# every block is tracked or only sampled ones (MP_SAMPLE), or none
# (MP_STACKS=none, tags). (Under valgrind glibc's threads allocate
# differently, so multi-threaded programs are compared in recorder/modes_cheap.sh
# against full capture instead.)
source "$(dirname "$0")/../lib/runtime.sh"
need valgrind valgrind /usr/bin/valgrind
for prog in alloc_functions cheap_modes sampling; do
    P=$B/tests/$prog
    vg=$(valgrind "$P" 2>&1 >/dev/null | sed -n 's/.*total heap usage: \([0-9,]*\) allocs, \([0-9,]*\) frees, \([0-9,]*\) bytes allocated.*/\1|\3|\2/p' | tr -d ,)
    [ -n "$vg" ] || fail "$prog: no 'total heap usage' line from valgrind"
    for mode in "MP_SAMPLE=0" "MP_SAMPLE=64K" "MP_STACKS=none" "MP_STACKS=tags MP_SAMPLE=512K"; do
        rm -f v.db
        env $mode LD_PRELOAD=$LIB MP_OUT=v.db "$P" >/dev/null 2>&1    # (alloc_functions exits with 7)
        assert_eq "$(q v.db 'SELECT ncalls, memtot, nfree FROM process_totals')" "$vg" "$prog, $mode: calls, bytes, frees as valgrind's"
    done
done
