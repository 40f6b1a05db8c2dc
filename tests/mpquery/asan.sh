#!/bin/bash
# Builds mpquery with AddressSanitizer + UBSan (make asan) for the suite:
# tests/run.sh, when its list has this test, runs every tests/mpquery/*.sh
# and tests/rules/*.sh (but mpquery/scale: the same code at 1 M stacks,
# minutes under ASan) once, with MPQUERY=build/asan/mpquery and leak
# detection on, each test's line marked (ASan): any report changes exit
# codes or stderr, so the tests fail. `bash tests/run.sh mpquery/asan` runs
# them all that way.
source "$(dirname "$0")/../lib/lib.sh"
make -s -C "$ROOT" asan >make.log 2>&1 || { cat make.log; fail "make asan failed"; }
[ -x "$B/asan/mpquery" ] || fail "make asan did not build build/asan/mpquery"
# mpquery record preloads the library next to it (counts_agree records)
ln -sf ../libmallocprof.so "$B/asan/libmallocprof.so"
# the build is instrumented: a heap overflow is caught and named
nm "$B/asan/mpquery" | grep -q ' __asan_init' || fail "build/asan/mpquery has no AddressSanitizer"
nm "$B/asan/mpquery" | grep -q ' __ubsan_handle_' || fail "build/asan/mpquery has no UBSan"
echo "  ok: build/asan/mpquery built with ASan and UBSan"
