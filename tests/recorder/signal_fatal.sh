# A process killed by a fatal signal left at its default action writes a
# last snapshot (reason signal, label the signal's name) and dies the same
# way: same wait status (signal, core dump flag), same output. The
# program's own handlers run as before, also installed after start, and
# sigaction reports SIG_DFL where the recorder stands in for it.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/fatal
ulimit -c unlimited
# status CMD...: "signal N core|nocore" or "exit N", from perl's wait status
status() { perl -e 'system(@ARGV); my $s = $?; print $s & 127 ? "signal " . ($s & 127) . ($s & 128 ? " core" : " nocore") : "exit " . ($s >> 8)' "$@"; }
for how in segv bus fpe ill abort term int hup; do
    mkdir -p native_$how prof_$how
    native=$(cd native_$how && status $P $how 2>/dev/null)
    prof=$(cd prof_$how && status env LD_PRELOAD=$LIB MP_OUT=$T/$how.db $P $how 2>err_$how)
    assert_eq "$prof" "$native" "$how: wait status"
    sig=$(echo "$how" | tr a-z A-Z); [ $sig = ABORT ] && sig=ABRT
    assert_eq "$(q $how.db "SELECT reason || ' ' || label FROM snapshot WHERE reason != 'peak'")" "signal SIG$sig" "$how: one snapshot, reason and label"
    assert_eq "$(by_function $how.db fatal_alloc)" "fatal_alloc|100|6400|0|6400" "$how: what was allocated by then"
    assert_match "$(cat prof_$how/err_$how)" "wrote $T/$how.db: .* signal snapshot" "$how: the status line"
done
# kill from outside: the same for a program sleeping (SIGTERM, SIGHUP, SIGSEGV sent by kill)
for sig in TERM HUP SEGV; do   # (a background job of a script ignores SIGINT)
    rm -f out; LD_PRELOAD=$LIB MP_OUT=k$sig.db $P sleep >out 2>/dev/null & pid=$!
    while [ "$(cat out 2>/dev/null)" != ready ]; do sleep 0.05; done
    kill -$sig $pid; wait $pid; rc=$?
    assert_eq "$rc" $((128 + $(kill -l $sig))) "kill -$sig: exit status"
    assert_eq "$(q k$sig.db "SELECT label FROM snapshot WHERE reason != 'peak'")" "SIG$sig" "kill -$sig: snapshot"
done
# the program's own handler, installed after start, runs as before
assert_eq "$($P own; echo "rc=$?")" "before: SIG_DFL
handled
rc=3" "own handler (native)"
assert_eq "$(LD_PRELOAD=$LIB MP_OUT=own.db $P own 2>/dev/null; echo "rc=$?")" "before: SIG_DFL
handled
rc=3" "own handler: sigaction said SIG_DFL, the handler ran, exit status 3"
assert_eq "$(q own.db "SELECT group_concat(reason) FROM snapshot WHERE reason != 'peak'")" "exit" "own handler: its _exit wrote the exit snapshot"
# a handler that restores SIG_DFL and re-raises: the recorder's last snapshot, then the same death
prof=$(status env LD_PRELOAD=$LIB MP_OUT=re.db $P reraise 2>/dev/null)
assert_eq "$prof" "$(status $P reraise 2>/dev/null)" "re-raise: wait status"
assert_eq "$(q re.db "SELECT label FROM snapshot WHERE reason != 'peak'")" "SIGSEGV" "re-raise: snapshot after the program's handler"
# a crash inside the allocator (glibc's double-free check aborts inside free): no hang, no snapshot
prof=$(status timeout 60 env LD_PRELOAD=$LIB MP_OUT=corrupt.db $P corrupt 2>err)
assert_eq "$prof" "$(status timeout 60 $P corrupt 2>/dev/null)" "heap corruption: dies by SIGABRT, as without the recorder"
assert_match "$(cat err)" "SIGABRT inside the allocator or the profiler; no snapshot written" "heap corruption: said so"
# SIGTERM while the program allocates: often inside malloc, where it waits for the way out
for i in $(seq 20); do
    rm -f out; LD_PRELOAD=$LIB MP_OUT=storm.db $P storm >out 2>/dev/null & pid=$!
    while [ "$(cat out 2>/dev/null)" != ready ]; do sleep 0.01; done
    sleep 0.0$((i % 10))
    kill -TERM $pid; wait $pid; rc=$?
    [ $rc = 143 ] || fail "storm $i: exit status $rc"
done
assert_eq "$(q storm.db "SELECT count(*), count(DISTINCT label) FROM snapshot WHERE reason = 'signal'")" "20|1" "20 storms killed by SIGTERM, 20 snapshots"
# live at the end: the 100 kept, stdout's buffer, and the block of 32 bytes in flight or not
assert_eq "$(q storm.db "SELECT count(*) FROM totals t JOIN snapshot s ON s.id = t.snapshot WHERE t.thread = 0 AND s.reason = 'signal'
    AND t.nfree_unknown = 0 AND t.ncalls - t.nfree IN (101, 102) AND t.memlive = 6400 + 4096 + 32 * (t.ncalls - t.nfree - 101)")" 20 "each: exact totals (the kept blocks, stdout's buffer, the one in flight)"
# a flush that cannot finish (another process holds the database's write lock): MP_FATAL_TIMEOUT bounds it
# (the holder reads a fifo: the lock is let go when it is closed, not
# after a sleep that the test waited for, 6 s of it, when it was a pipe)
q lock.db "CREATE TABLE x(a)"
mkfifo hold.in
on_exit "exec 8>&-; rm -f $T/hold.in"     # a fifo: the profile check at the end opens every file
sqlite3 lock.db < hold.in & holder=$!
exec 8> hold.in
echo "BEGIN EXCLUSIVE;" >&8
sleep 0.5
start=$(date +%s)
prof=$(status env LD_PRELOAD=$LIB MP_OUT=$T/lock.db MP_FATAL_TIMEOUT=1 $P segv 2>/dev/null)
took=$(( $(date +%s) - start ))
exec 8>&-; wait $holder 2>/dev/null; rm -f hold.in
assert_eq "$prof" "signal 11 core" "locked database: still dies by SIGSEGV"
[ $took -le 4 ] || fail "locked database: took $took s with MP_FATAL_TIMEOUT=1"
echo "  ok: locked database: died after $took s"
