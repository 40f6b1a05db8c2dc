#!/bin/bash
# C++ runtime (g++, libstdc++): exceptions thrown and caught on 4 std::threads
# (tests/progs/runtimes/cxx_threads.cc): output and exit status as native,
# counters exact per function and per thread, one info line.
source "$(dirname "$0")/../lib/runtime.sh"
need c++ g++ /usr/bin/g++
/usr/bin/g++ -std=gnu++17 -O2 -g -pthread -o cxx_threads "$PROGS/cxx_threads.cc" || fail "g++ failed"
native_and_profiled 1 ./cxx_threads
assert_eq "$(cat profiled.rc)" 5 "exit status 5"
assert_eq "$(by_function a.db 'make_label*')" "make_label[abi:cxx11](int, int)|1000|43000|1000|0" "make_label: strings freed by the unwinding"
assert_eq "$(by_function a.db '__cxa_allocate_exception')" "__cxa_allocate_exception|1000|136000|1000|0" "exception objects, freed by the catch"
assert_eq "$(by_function a.db 'keep_record*')" "keep_record(int, int, unsigned long)|1000|24000|500|12000" "keep_record: half deleted by main"
assert_eq "$(q a.db "SELECT SUM(s.ncalls), SUM(s.memtot), SUM(s.nfree) FROM last_sample s
                     WHERE s.stack IN (SELECT stack FROM stack_frames WHERE function GLOB 'make_label*')
                     GROUP BY s.thread ORDER BY 1")" "100|4100|100
200|8400|200
300|12900|300
400|17600|400" "make_label per thread: 100 * (k + 1) strings of 41 + k bytes"
assert_eq "$(q a.db "SELECT count(*) FROM thread")" 5 "5 threads (main + 4)"
