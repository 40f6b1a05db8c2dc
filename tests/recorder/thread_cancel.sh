# A deferred cancel pending on a thread that allocates (issue 25, item 3):
# malloc is not a cancellation point, but the recorder's file opens inside
# it (the first unwind of new code reads the loader's list and ELF files)
# were: the thread died inside malloc holding the loader's lock and the
# next dlopen or malloc hung (every run of the old recorder, even SIGTERM:
# its snapshot waited on the same lock). tests/progs/cancel_pending.c:
# the worker's plugin_run (42 blocks of 77 bytes, 40 freed) must return
# and the cancel land at pthread_testcancel; with each unwinder.
. "$(dirname "$0")/../lib/lib.sh"
for unwind in cfi libunwind fp; do
    rm -f c.db
    timeout -s KILL 30 env LD_PRELOAD=$LIB MP_OUT=c.db MP_QUIET=1 MP_UNWIND=$unwind \
        "$B/tests/cancel_pending" "$B/tests/libplugin.so" >out 2>err; rc=$?
    assert_eq "$rc" 0 "MP_UNWIND=$unwind: the program ends by itself (137: killed, hung)"
    assert_eq "$(cat out)" "canceled 1" "MP_UNWIND=$unwind: the worker's call returned, the cancel came at pthread_testcancel"
    assert_eq "$(cat err)" "" "MP_UNWIND=$unwind: nothing on stderr"
    assert_eq "$(by_function c.db 'plugin_static_alloc' | grep '^plugin_static_alloc|')" "plugin_static_alloc|42|3234|40|154" \
        "MP_UNWIND=$unwind: the cancelled thread's blocks"
    assert_eq "$(by_function c.db 'after_cancel' | grep '^after_cancel|')" "after_cancel|1000|32000|0|32000" \
        "MP_UNWIND=$unwind: main's blocks after the cancel"
done
echo ok
