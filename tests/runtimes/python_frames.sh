#!/bin/bash
# Python frames and pymalloc (issue 29, prof/capture/python.c), without
# PYTHONMALLOC: on Debian's python3.11 (static, stripped) the job of the
# issue (tests/progs/runtimes/py_job.py) shows its functions and lines in
# place of the evaluation loop, its small objects, 4 threads each in its own
# function, json's C encoder between Python frames; MP_PYTHON=0 gives the
# native stacks of before; the pyenv builds present (3.11.7 with a shared
# libpython, 3.12.1, 3.13.0) show the same job.
source "$(dirname "$0")/../lib/runtime.sh"
need python3 python3 /usr/bin/python3
unset PYTHONMALLOC
J=$PROGS/py_job.py

# incl DB FUNCTION: its inclusive ncalls and memtot (top --functions; the
# columns found by name: mapping columns come with the program's mappings)
incl() {
    "$MPQ" top "$1" --functions --inclusive --format csv -n 0 |
        awk -F, -v f="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                           $NF == f { print $c["inclusive.ncalls"] "|" $c["inclusive.memtot"] }'
}

# job DB PYTHON: the job's exact numbers, whatever the interpreter
job() {
    local db=$1 py=$2 n b
    # each bytearray(100000) is 2 allocations (its object from pymalloc,
    # its 100,001-byte buffer from malloc), so big_buffers makes more than
    # 100 calls; its blocks of 100,000 bytes and more are exactly the 100 buffers
    assert_eq "$(q "$db" "SELECT SUM(ncalls), SUM(memtot) FROM stack_totals
                          WHERE path LIKE '%;run_job;big_buffers;%' AND memtot >= 100000 * ncalls")" "100|10000100" \
        "$py: big_buffers: exactly 100 blocks of 100,001 bytes"
    IFS='|' read -r n b <<<"$(incl "$db" big_buffers)"
    [ "${n:-0}" -ge 100 ] && [ "${b:-0}" -ge 10000000 ] || fail "$py: top --functions: big_buffers $n calls, $b bytes"
    echo "  ok: $py: top --functions: big_buffers $n calls (>= 100), $b bytes (>= 10,000,000)"
    IFS='|' read -r n b <<<"$(incl "$db" small_objects)"
    [ "${n:-0}" -ge 20000 ] || fail "$py: top --functions: small_objects $n calls, expected >= 20,000 (pymalloc's lists)"
    echo "  ok: $py: top --functions: small_objects $n calls (>= 20,000, pymalloc's blocks)"
    # Python first (mpquery/view_python.c): nothing under big_buffers but
    # with --native, the interpreter's frames
    assert_match "$("$MPQ" fold "$db" | grep -c '^<module>;run_job;big_buffers ')" '^1$' "$py: fold: <module>;run_job;big_buffers"
    assert_match "$("$MPQ" fold "$db" --native | grep -c ';run_job;big_buffers;')" '^[1-9]' "$py: fold --native: run_job;big_buffers;…"
    # pymalloc's arenas are heap in the ledger (not the program's mappings, not unexplained)
    assert_eq "$(q "$db" "SELECT count(*) FROM ledger u JOIN ledger r ON r.snapshot = u.snapshot AND r.line = 'rss'
                          WHERE u.line = 'unexplained' AND abs(u.bytes) * 20 > r.bytes")|$(q "$db" "SELECT count(*) FROM ledger")" \
        "0|10" "$py: the ledger leaves less than 5 % of the RSS unexplained"
    local line
    line=$("$MPQ" top "$db" --lines --bytes --filter big_buffers -n 1 --depth 0 | sed -n 3p)
    assert_match "$line" ' big_buffers \(py_job\.py:6\) < run_job \(py_job\.py:19\) < <module> \(py_job\.py:24\)$' \
        "$py: top --lines: the bytearray's line, its callers' calls, Python frames only"
    local id
    id=$(echo "$line" | awk '{ print $4 }' | cut -d+ -f1)   # (N+M: stacks merged)
    assert_match "$("$MPQ" show "$db" "$id")" "big_buffers  $J:6"$'\n' "$py: show: the .py file, line 6, no address"
}

echo "# Debian's python3.11"
native_and_profiled 1 /usr/bin/python3 -I "$J"
job a.db python3.11
assert_eq "$(q a.db "SELECT count(*) FROM frame_info WHERE function = '_PyEval_EvalFrameDefault'
                     AND frame IN (SELECT frame FROM stack)")" 0 "no evaluation loop frame left (each one replaced)"

echo "# MP_PYTHON=0: native frames only, pymalloc unseen"
run_profiled off "$T/off.db" MP_PYTHON=0 /usr/bin/python3 -I "$J"
same_as_native native off "$T/off.db" 1
assert_eq "$(incl off.db big_buffers)" "" "MP_PYTHON=0: no Python frame"
assert_match "$("$MPQ" fold off.db | grep -c ';_PyEval_EvalFrameDefault;')" '^[1-9]' "MP_PYTHON=0: the evaluation loop's frames"
n=$(q off.db "SELECT SUM(ncalls) FROM process_totals")
m=$(q a.db "SELECT SUM(ncalls) FROM process_totals")
[ $((m)) -gt $((n * 5)) ] || fail "pymalloc's blocks: $m allocations with it, $n without"
echo "  ok: pymalloc's blocks counted: $m allocations, $n with MP_PYTHON=0"

echo "# 4 threads, each in its own function"
run_native nt /usr/bin/python3 -I "$PROGS/py_threads.py"
run_profiled pt "$T/t.db" /usr/bin/python3 -I "$PROGS/py_threads.py"
same_as_native nt pt "$T/t.db" 1
# each worker's buffers of 50,000 bytes and more, from one pass of the
# stack_totals view (1.8 s of CPU a pass here: once, not once a worker)
big=$(q t.db "SELECT w.name, SUM(s.ncalls) FROM (SELECT 'alpha' AS name UNION ALL SELECT 'beta' UNION ALL SELECT 'gamma'
                UNION ALL SELECT 'delta') w LEFT JOIN stack_totals s ON s.path LIKE '%;worker_' || w.name || ';%'
                AND s.memtot >= 50000 * s.ncalls GROUP BY w.name")
tids=
for w in alpha beta gamma delta; do
    l=$(( $(grep -n "^def worker_$w" "$PROGS/py_threads.py" | cut -d: -f1) + 1 ))
    rows=$("$MPQ" top t.db --per-thread --filter "^worker_$w( \(|\$)" --lines --bytes -n 0 --depth 0 | sed 1,2d | grep -v '^ignored')
    tid=$(printf '%s\n' "$rows" | grep -o '(tid [0-9]*)' | sort -u)
    assert_eq "$(printf '%s\n' "$tid" | wc -l)" 1 "worker_$w: in one thread, $tid"
    tids="$tids$tid"$'\n'
    assert_match "$(printf '%s\n' "$rows" | head -n 1)" \
        " worker_$w\.<locals>\.<listcomp> \(py_threads\.py:$l\) < worker_$w \(py_threads\.py:$l\) < .*Thread\.run \(threading\.py:[0-9]+\)" \
        "worker_$w: its own function and line, under Thread.run"
    assert_eq "$(printf '%s\n' "$big" | sed -n "s/^$w|//p")" 10 \
        "worker_$w: its 10 buffers of 50,000 bytes"
done
assert_eq "$(printf '%s' "$tids" | sort -u | wc -l)" 4 "4 threads, one for each function"

echo "# json's C encoder between Python frames"
run_native nc /usr/bin/python3 -I "$PROGS/py_cext.py"
run_profiled pc "$T/c.db" /usr/bin/python3 -I "$PROGS/py_cext.py"
same_as_native nc pc "$T/c.db" 1
assert_match "$("$MPQ" fold c.db | grep -cE ';encode_points;dumps;JSONEncoder.encode;JSONEncoder.iterencode;[^ ]*_json[^ ]*;plain( |;)')" '^[1-9]' \
    "fold: Python (encode_points) < C (_json) < Python (plain, called back)"
assert_match "$("$MPQ" fold c.db | grep -c ';find_words;findall;')" '^[1-9]' "fold: re.findall under find_words"

echo "# sqlite3 with the GIL released, in a thread"
run_native nn /usr/bin/python3 -I "$PROGS/py_nogil.py"
run_profiled pn "$T/n.db" /usr/bin/python3 -I "$PROGS/py_nogil.py"
same_as_native nn pn "$T/n.db" 1
assert_match "$("$MPQ" top n.db --lines --filter sqlite3VdbeSorterWrite -n 1 --depth 0 | sed -n 3p)" \
    "sqlite3VdbeSorterWrite < sqlite3VdbeExec < sqlite3_step < .* < query_in_thread \(py_nogil\.py:12\) < .*Thread\.run \(threading\.py:[0-9]+\)" \
    "the sorter's blocks, made without the GIL: under query_in_thread's line 12"

echo "# a profiler active (sys.setprofile): 3.11 calls through the loop's unnamed .cold part"
run_profiled pr "$T/r.db" /usr/bin/python3 -I -c 'import sys; sys.setprofile(lambda *a: None); exec(open(sys.argv[1]).read())' "$PROGS/py_cext.py"
assert_eq "$(cat pr.rc)|$(cat pr.out)" "0|$(cat nc.out)" "traced: output as native"
# (in Debian's 3.11.2-6+deb12u6 the .cold call is python3.11+0x4342b5: 8,566 stacks)
assert_eq "$("$MPQ" fold r.db --no-default-rules --native | cut -d';' -f1 | sort -u)" "_start" \
    "traced: every stack starts at _start (no Python frame above the program's first frame)"

for py in /root/.pyenv/versions/3.11.7/bin/python3.11 /root/.pyenv/versions/3.12.1/bin/python3.12 \
          /root/.pyenv/versions/3.13.0/bin/python3.13; do
    [ -x "$py" ] || { echo "  (no $py here)"; continue; }
    v=${py##*/}
    echo "# $v"
    # -S: without site, whose .pth files (this machine's 3.11.7 has one
    # that imports half the library at start-up) made 41,296 deep stacks
    # of the job's 5,799 and 30 s of CPU in job's stack_totals query
    run_native "n$v" "$py" -I -S "$J"
    run_profiled "p$v" "$T/$v.db" "$py" -I -S "$J"
    same_as_native "n$v" "p$v" "$T/$v.db" 1
    job "$v.db" "$v"
done

echo "# another CPython version: one warning, native frames only"
/usr/bin/gcc -O2 -rdynamic -o fake310 "$PROGS/fake_cpython.c" || fail "gcc failed"
/usr/bin/gcc -O2 -rdynamic -DNO_VERSION -o fake_old "$PROGS/fake_cpython.c" || fail "gcc failed"
run_profiled f1 "$T/f1.db" ./fake310
assert_eq "$(cat f1.rc)|$(cat f1.out)" "0|fake interpreter" "CPython 3.10: runs as without the recorder"
assert_eq "$(grep mallocprof f1.err | grep -v ': info: wrote ')" \
    "mallocprof: warning: Python frames: CPython 3.10 is not supported (3.11, 3.12 and 3.13 are): native frames only" \
    "CPython 3.10: one warning"
run_profiled f2 "$T/f2.db" ./fake_old
assert_eq "$(grep mallocprof f2.err | grep -v ': info: wrote ')" \
    "mallocprof: warning: Python frames: CPython 3.10 or older is not supported (3.11, 3.12 and 3.13 are): native frames only" \
    "no Py_Version (3.10 or older): one warning"
run_profiled f3 "$T/f3.db" MP_PYTHON=0 ./fake310
assert_eq "$(grep -c warning f3.err)" 0 "MP_PYTHON=0: no warning"
/usr/bin/gcc -O2 -rdynamic -DFAULTY -o faulty "$PROGS/fake_cpython.c" || fail "gcc failed"
run_profiled f4 "$T/f4.db" ./faulty
assert_eq "$(cat f4.rc)|$(cat f4.out)" "0|fake interpreter" "frames that fault: the program runs on"
assert_eq "$(grep mallocprof f4.err | grep -v ': info: wrote ')" \
    "mallocprof: warning: Python frames: reading the interpreter's frames faulted: native frames only from now on" \
    "frames that fault: one warning"
assert_match "$("$MPQ" fold f4.db)" "main 1000" "frames that fault: the native stack"
