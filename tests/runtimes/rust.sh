#!/bin/bash
# Rust runtime (Debian's rustc; std threads, the System allocator): 4 named
# threads allocate from alloc_block (tests/progs/runtimes/rust_threads.rs):
# output and exit status as native, counters exact per function and per
# thread name, one info line, mpquery names the Rust function.
# Before commit 69e2c97 (thread stack bounds learnt without calling
# pthread_getattr_np inside malloc) the profiled program hung.
source "$(dirname "$0")/../lib/runtime.sh"
need rust rustc /usr/bin/rustc     # not a rustup rustc that may come first in PATH
/usr/bin/rustc -C opt-level=2 -g -o rust_threads "$PROGS/rust_threads.rs" || fail "rustc failed"
native_and_profiled 1 ./rust_threads
assert_eq "$(cat profiled.rc)" 3 "exit status 3 (std::process::exit)"
# Rust's legacy symbols are stored mangled (_ZN12rust_threads11alloc_block17h<hash>E)
# when the process has no __cxa_demangle: match either form
in_alloc_block="s.stack IN (SELECT stack FROM stack_frames WHERE function GLOB '*rust_threads*alloc_block*')"
assert_eq "$(q a.db "SELECT SUM(ncalls), SUM(memtot), SUM(nfree), SUM(memlive) FROM last_sample s WHERE $in_alloc_block")" \
    "1000|48000|500|24000" "alloc_block: 1000 blocks of 48 bytes, half dropped"
assert_eq "$(q a.db "SELECT t.name, SUM(s.ncalls), SUM(s.memtot), SUM(s.nfree), SUM(s.memlive)
                     FROM last_sample s JOIN thread t ON t.id = s.thread WHERE $in_alloc_block
                     GROUP BY t.name ORDER BY t.name")" "worker0|100|4800|50|2400
worker1|200|9600|100|4800
worker2|300|14400|150|7200
worker3|400|19200|200|9600" "alloc_block per thread (named by thread::Builder): 100 * (k + 1) blocks"
assert_eq "$(q a.db "SELECT count(*) FROM thread")" 5 "5 threads (main + 4)"
# ntemp 0: each thread drops its first blocks after allocating the later ones; the
# mappings' columns (0 here) are there when the runtime mapped its signal stacks
assert_match "$("$MPQ" top a.db --functions --inclusive -n 0 --format csv)" \
    '^0(,0){6}(,0,0,0,0)?,1000,48000,500,500,24000,48000,0(,0,0,0,0)?,rust_threads::alloc_block::h[0-9a-f]{16}$' "mpquery top --functions: rust_threads::alloc_block, demangled"
