#!/bin/bash
# Python runtime (Debian's /usr/bin/python3, not one earlier in PATH):
# ctypes, large bytes objects, 4 threads building dicts and JSON
# (tests/progs/runtimes/python_work.py): output and exit status as native,
# the ctypes blocks and the bytes objects counted exactly, one info line.
source "$(dirname "$0")/runtime_lib.sh"
need python3 python3 /usr/bin/python3
P=$PROGS/python_work.py
run_native native /usr/bin/python3 -I "$P"
run_profiled profiled "$T/a.db" /usr/bin/python3 -I "$P"
same_as_native native profiled "$T/a.db" 1
assert_eq "$(cat profiled.rc)" 10 "exit status 10"
has_allocations a.db 1000   # pymalloc serves the small objects
assert_eq "$(by_function a.db 'ffi_call*')" "ffi_call|200|819900|50|618675" \
    "ctypes: 200 mallocs of 4000..4199 bytes through libffi, 50 freed"
# bytes(n) is one PyObject_Malloc of n + 33 bytes, malloc's above 512 bytes;
# the only blocks of 100000 bytes or more called from the module's code
assert_eq "$(q a.db "SELECT ncalls, memtot, nfree, memlive FROM stack_totals WHERE memtot >= 100000 * ncalls
                     AND path LIKE '%;PyEval_EvalCode;_PyEval_EvalFrameDefault;_PyObject_MakeTpCall;%'")" \
    "300|30054750|300|0" "bytes: 300 objects of 100033..100332 bytes, freed"
assert_eq "$(q a.db "SELECT count(*) FROM thread")" 5 "5 threads (main + 4)"
