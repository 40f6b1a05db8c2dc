# Small stacks (issue 25, item 4): a worker with a 64 KiB stack calling
# exit(4) died of SIGSEGV with no snapshot (the exit snapshot ran SQLite
# and libdw on its stack), 16 and 32 KiB stacks crashed at their first
# allocation from new code (a 8 KiB capture buffer on the stack, libdw
# computing an unwind rule), and `ulimit -s 128` crashed any program at
# exit. Snapshots and unwind rules now run on stacks of the recorder's own
# (prof/base/ownstack.c) and the capture buffers live in the thread's record:
# the hot path takes about 0.7 KiB of the program's stack.
# tests/progs/small_stacks.c PLUGIN KB EXIT, each unwinder.
. "$(dirname "$0")/../lib/lib.sh"
for unwind in cfi libunwind fp; do
    for case in 16:0 16:1 64:1; do
        kb=${case%:*} ex=${case#*:}
        {
            rm -f s.db
            what="MP_UNWIND=$unwind, a $kb KiB stack, $([ $ex = 1 ] && echo 'exit(4) there' || echo 'joined')"
            LD_PRELOAD=$LIB MP_OUT=s.db MP_QUIET=1 MP_UNWIND=$unwind "$B/tests/small_stacks" "$B/tests/libplugin.so" $kb $ex >out 2>err
            assert_eq "$?" $((ex ? 4 : 0)) "$what: the exit status"
            assert_eq "$(cat out err)" "" "$what: nothing printed"
            assert_eq "$(by_function s.db small_worker | grep '^small_worker|')" "small_worker|100|2400|0|2400" "$what: the worker's blocks"
            assert_eq "$(by_function s.db plugin_static_alloc | grep '^plugin_static_alloc|')" "plugin_static_alloc|42|3234|40|154" \
                "$what: the plugin's blocks (new code)"
            check_profile s.db
        }
    done
done
rm -f p.db
rc=$(ulimit -s 128; LD_PRELOAD=$LIB MP_OUT=p.db MP_QUIET=1 "$B/tests/peak_phases" >out 2>err; echo $?)
assert_eq "$rc" 0 "ulimit -s 128: the exit status"
assert_eq "$(q p.db "SELECT group_concat(reason) FROM (SELECT reason FROM snapshot ORDER BY seq)")" "peak,exit" "ulimit -s 128: its snapshots"
echo ok
