# The recorder built with its invariants checked (make debug: MP_DEBUG,
# MP_ASSERT in prof/) runs the recorder's tests: threads, fork, dlclose,
# signals, sampling, the memory cap, the language runtimes. A broken
# invariant aborts the profiled program with "mallocprof: bug: FILE:LINE",
# which fails the test it runs in.
. "$(dirname "$0")/lib.sh"
make -s -C "$ROOT" debug >make.log 2>&1 || { cat make.log; fail "make debug failed"; }
DBG=$B/debug/libmallocprof.so
[ -f "$DBG" ] || fail "make debug did not build $DBG"
failed=()
for t in recorder_functions cxx_alloc exceptions threads_cross_free lone_handover intern_race fork_exec \
         dlopen_dlclose dlclose_reuse signals signal_handler_allocs fatal_signals own_activity \
         sampling thresholds memory_cap thread_getattr process_tree interval_kill runtime_cxx runtime_rust; do
    if MP_TEST_LIB=$DBG bash "$ROOT/tests/$t.sh" >"$t.log" 2>&1 && ! grep -q "mallocprof: bug:" "$t.log"; then
        echo "  ok: $t with the MP_DEBUG recorder"
    else
        failed+=("$t"); echo "FAIL with the MP_DEBUG recorder: $t"; grep -m 3 "bug:\|FAIL" "$t.log"
    fi
done
[ ${#failed[@]} -eq 0 ] || fail "with the MP_DEBUG recorder: ${failed[*]}"
# the build is the checking one, and the usual one is not
assert_eq "$(grep -c 'does not hold' "$DBG")" 1 "the MP_DEBUG recorder has the checks"
assert_eq "$(grep -c 'does not hold' "$LIB")" 0 "the usual recorder has none"
