# The recorder built with its invariants checked (make debug: MP_DEBUG,
# MP_ASSERT in prof/) runs the recorder's tests: threads, fork, dlclose,
# signals, sampling, the memory cap, the language runtimes. A broken
# invariant aborts the profiled program with "mallocprof: bug: FILE:LINE",
# which fails the test it runs in.
. "$(dirname "$0")/../lib/lib.sh"
make -s -C "$ROOT" debug >make.log 2>&1 || { cat make.log; fail "make debug failed"; }
DBG=$B/debug/libmallocprof.so
[ -f "$DBG" ] || fail "make debug did not build $DBG"
failed=()
for t in recorder/alloc_functions recorder/alloc_cxx recorder/alloc_exceptions recorder/thread_cross_free recorder/thread_handover recorder/cold_handover recorder/stack_intern_race \
         recorder/process_fork_exec recorder/dlopen_plugin recorder/dlopen_reuse recorder/signal_storm recorder/signal_handler_allocs recorder/signal_fatal recorder/own_activity \
         recorder/sampling recorder/modes_threshold recorder/modes_cheap recorder/modes_usable recorder/memory_cap recorder/thread_getattr recorder/process_tree recorder/flush_interval_kill recorder/flush_ahead recorder/mmap_kinds recorder/mmap_processes recorder/mmap_table \
         runtimes/cxx runtimes/rust; do
    log=${t/\//_}.log
    if MP_TEST_LIB=$DBG bash "$ROOT/tests/$t.sh" >"$log" 2>&1 && ! grep -q "mallocprof: bug:" "$log"; then
        echo "  ok: $t with the MP_DEBUG recorder"
    else
        failed+=("$t"); echo "FAIL with the MP_DEBUG recorder: $t"; grep -m 3 "bug:\|FAIL" "$log"
    fi
done
[ ${#failed[@]} -eq 0 ] || fail "with the MP_DEBUG recorder: ${failed[*]}"
# the build is the checking one, and the usual one is not
assert_eq "$(grep -c 'does not hold' "$DBG")" 1 "the MP_DEBUG recorder has the checks"
assert_eq "$(grep -c 'does not hold' "$LIB")" 0 "the usual recorder has none"
