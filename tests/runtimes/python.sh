#!/bin/bash
# Python runtime (Debian's /usr/bin/python3, not one earlier in PATH):
# ctypes, large bytes objects, 4 threads building dicts and JSON
# (tests/progs/runtimes/python_work.py): output and exit status as native,
# the ctypes blocks and the bytes objects counted exactly, one info line.
source "$(dirname "$0")/../lib/runtime.sh"
need python3 python3 /usr/bin/python3
P=$PROGS/python_work.py
native_and_profiled 1 /usr/bin/python3 -I "$P"
assert_eq "$(cat profiled.rc)" 10 "exit status 10"
has_allocations a.db 1000   # pymalloc serves the small objects
assert_eq "$(by_function a.db 'ffi_call*')" "ffi_call|200|819900|50|618675" \
    "ctypes: 200 mallocs of 4000..4199 bytes through libffi, 50 freed"
# bytes(n) is one PyObject_Malloc of n + 33 bytes, malloc's above 512 bytes
# (counted once: by the OBJ domain's wrapper, python.c); the only blocks of
# 100000 bytes or more called from the module's list comprehension (the
# Python frames in place of the evaluation loop's)
assert_eq "$(q a.db "SELECT ncalls, memtot, nfree, memlive FROM stack_totals WHERE memtot >= 100000 * ncalls
                     AND path LIKE '%;PyEval_EvalCode;<module>;<listcomp>;_PyObject_MakeTpCall;%'")" \
    "300|30054750|300|0" "bytes: 300 objects of 100033..100332 bytes, freed"
assert_eq "$(q a.db "SELECT count(*) FROM thread")" 5 "5 threads (main + 4)"
# filters/cpython.rules with --native (every frame, mpquery/view_python.c:
# by default the views fold the interpreter's frames themselves) on
# Debian's interpreter (python3.11, static functions
# unnamed): a stack starts where Python code runs, not at the frames of
# start-up between _PyRun_SimpleFileObject and PyEval_EvalCode
# (pyrun_file, run_mod, run_eval_code_obj: python3.11+0x... here)
raw=$("$MPQ" fold a.db --no-default-rules --native)
above=$(printf '%s\n' "$raw" | grep -o ';_PyRun_SimpleFileObject;[^;]*;[^;]*;[^;]*;PyEval_EvalCode;' | cut -d';' -f3 | sort -u)
assert_match "$above" '^python3\.[0-9]+\+0x[0-9a-f]+$' "raw stacks: one unnamed frame (pyrun_file) under _PyRun_SimpleFileObject: $above"
ruled=$("$MPQ" fold a.db --rules cpython --native)
# (run_eval_code_obj's own pymalloc blocks, made before it evaluates, do
# start there: pymalloc is seen since python.c)
assert_eq "$(printf '%s\n' "$ruled" | grep -c -e "^$above;.*;<module>;" -e '^_start;' -e '^Py_BytesMain;' -e ';_PyEval_EvalFrameDefault;')" 0 \
    "--rules cpython: no stack starts above the evaluation or the compilation, none shows the loop"
assert_eq "$(printf '%s\n' "$ruled" | awk '/;ffi_call;/ { n += $NF } END { print n }')" 819900 \
    "--rules cpython: the ctypes blocks through ffi_call, 819900 bytes"
