#!/bin/bash
# Python sub-interpreters (issue 41 item 15, prof/capture/python.c): an allocation
# made inside a script run by interp_run_string (_xxsubinterpreters's,
# 3.13: _interpreters's) shows the sub-interpreter's
# frames, then interp_run_string's native frames, then the calling
# interpreter's frames (run_sub < <module>), each evaluation loop replaced;
# the lines are the ones Python itself prints (sys._getframe). On main the
# caller's frames were missing, its evaluation loop left as a native frame.
# Debian's python3.11, and the pyenv builds present (3.12.1, 3.13.0). With
# --native; by default (Python first) the interpreter's frames are folded.
source "$(dirname "$0")/../lib/runtime.sh"
need python3 python3 /usr/bin/python3
unset PYTHONMALLOC
P=$PROGS/py_subinterp.py

# check NAME PYTHON
check() {
    local name=$1 py=$2
    echo "# $name"
    run_native "n$name" "$py" -I "$P"
    run_profiled "p$name" "$T/$name.db" "$py" -I "$P"
    same_as_native "n$name" "p$name" "$T/$name.db" 1
    local mod sub script outer inner
    read -r mod sub script outer inner <<<"$(awk '{ print $2 }' "n$name.out" | tr '\n' ' ')"
    [ -n "$inner" ] || fail "$name: the program printed no lines: $(cat "n$name.out")"
    local line
    line=$("$MPQ" top "$name.db" --lines --bytes --filter '^inner \(' -n 1 --depth 0 --native | sed -n 3p)
    assert_match "$line" "^ +1 +777778 .* inner \(<string>:$inner\) < outer \(<string>:$outer\) < <module> \(<string>:$script\) < .*(interp_run_string|_(xxsub)?interpreters[.][^ ]*) .* < run_sub \(py_subinterp\.py:$sub\) < <module> \(py_subinterp\.py:$mod\) < " \
        "$name: the bytearray under the sub-interpreter's frames, interp_run_string (its module), then run_sub:$sub < <module>:$mod"
    assert_eq "$(printf '%s' "$line" | grep -c '_PyEval_EvalFrameDefault')" 0 "$name: every evaluation loop of that stack replaced"
    # Python first (mpquery/view_python.c): the interpreter's frames folded, interp_run_string's module kept
    line=$("$MPQ" top "$name.db" --lines --filter '^inner \(' -n 1 --depth 0 | sed -n 3p)
    assert_match "$line" " inner \(<string>:$inner\) < outer \(<string>:$outer\) < <module> \(<string>:$script\) < .*(interp_run_string|_(xxsub)?interpreters[.][^ ]*).* < run_sub \(py_subinterp\.py:$sub\) < <module> \(py_subinterp\.py:$mod\)$" \
        "$name: Python first: the sub-interpreter's frames, interp_run_string's module, run_sub < <module>"
    assert_eq "$(q "$name.db" "SELECT SUM(ncalls) || '|' || SUM(memtot) FROM stack_totals
                               WHERE path LIKE '%;<module>;run_sub;%interp%;<module>;outer;inner;%;PyByteArray_Resize'")" "1|777778" \
        "$name: stack_totals: one block of 777,778 bytes on that path"
}

check python3.11 /usr/bin/python3
for py in /root/.pyenv/versions/3.12.1/bin/python3.12 /root/.pyenv/versions/3.13.0/bin/python3.13; do
    [ -x "$py" ] || { echo "  (no $py here)"; continue; }
    check "${py##*/}" "$py"
done
