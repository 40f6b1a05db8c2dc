# Limits the program sets for itself (issue 25, item 5) bind the
# recorder's work too, and must not change how the program ends:
#  - RLIMIT_FSIZE 64 KiB (tests/progs/fsize_limit.c): the profile's write
#    past it raised SIGXFSZ, which killed the program (exit 153) in the
#    middle of a transaction (a hot journal left). Now the snapshot is lost
#    with one line, the signal raised by the recorder's write is taken
#    back, and the program writes its own file and exits 0; the first
#    snapshot is written beside the file and linked to its name once
#    committed, so none that fails leaves an empty file (issue 25, item 13).
#  - ulimit -v 48000: libdw, out of memory, ended the program with
#    "libdw: Cannot allocate memory" (exit 1) or faulted in tsearch
#    (SIGSEGV). Now libdw's error() and faults inside a recoverable stretch
#    of the recorder's work give that stretch up: a lost snapshot, one line.
#    The ledger's read of /proc/self/smaps, its buffer not allocated,
#    wrote through NULL (SIGSEGV in ~1 run of 20): 12 runs here, then
#    limits from 52000 to 100000.
. "$(dirname "$0")/../lib/lib.sh"

LD_PRELOAD=$LIB MP_OUT=f.db "$B/tests/fsize_limit" >out 2>err; rc=$?
assert_eq "$rc" 0 "RLIMIT_FSIZE: the program's exit status"
assert_eq "$(cat out)" "wrote 100" "RLIMIT_FSIZE: the program's output"
assert_eq "$(stat -c %s own.txt)" 100 "RLIMIT_FSIZE: the program's own file"
assert_eq "$(cat err)" "mallocprof: error: cannot write $T/f.db: the program limits the files it writes to 65536 bytes (RLIMIT_FSIZE, ulimit -f): snapshots that do not fit are lost" \
    "RLIMIT_FSIZE: one line for the lost snapshots"
assert_eq "$(ls)" "err
out
own.txt" "RLIMIT_FSIZE: no profile (nothing fit), no empty file, no journal, no temporary file left"

native=$(ulimit -v 48000; "$B/tests/peak_phases" >/dev/null 2>&1; echo $?)
for run in $(seq 12); do
    rm -f v.db
    rc=$(ulimit -v 48000; LD_PRELOAD=$LIB MP_OUT=v.db MP_QUIET=1 "$B/tests/peak_phases" >out 2>err; echo $?)
    assert_eq "$rc" "$native" "ulimit -v 48000, run $run: the exit status is the program's own"
    assert_eq "$(grep -c -v '^mallocprof: [a-z]*: .*out of memory' err)" 0 \
        "ulimit -v 48000, run $run: nothing on stderr but the recorder's lines on out of memory: $(head -c 300 err)"
done
# the limit swept past 48000: wherever the recorder's memory runs out
# (SQLite, libdw, the profiler's heap), the program ends as it does alone.
# libdw asserts that its hash table's calloc succeeded: at ulimit -v 70000
# it once aborted the program (signals.c now gives the stretch up)
for v in $(seq 52000 4000 100000); do
    rc=$(ulimit -v $v; LD_PRELOAD=$LIB MP_OUT=w$v.db MP_QUIET=1 "$B/tests/peak_phases" >out 2>err; echo $?)
    assert_eq "$rc" "$native" "ulimit -v $v: the exit status is the program's own ($(grep -v 'out of memory' err | head -c 200))"
done
echo ok
