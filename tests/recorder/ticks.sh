# run: waits
# Memory over time without setup (table tick): the background thread
# takes the process's totals and RSS every MP_TICK seconds (default 0.01),
# keeps 100 to 200 evenly spaced points by dropping every other one and
# doubling the interval when its buffer fills, and every snapshot writes
# them with one more point of its own totals. tests/progs/tick_steps.c:
# live bytes in steps of 1000000 every 300 ms (1..4 MB), then 0; a forked
# child holds 500000 for 400 ms and leaves by _exit. The cheap modes of a
# program of one thread take their points from its allocations.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/tick_steps
MP_QUIET=1 profile s.db $P fork > out 2> err; rc=$?
assert_eq "$rc|$(cat out err)" "0|" "the program's status and output are its own"
parent=$(q s.db "SELECT id FROM process WHERE ppid NOT IN (SELECT pid FROM process)")
child=$(q s.db "SELECT id FROM process WHERE id != $parent")
n=$(q s.db "SELECT count(*) FROM tick WHERE process = $parent")
# 1.5 s at 10 ms: 150 points and the exit's, fewer when the machine is
# slow (a point that falls due during another is skipped), never more
# than 2 * 100 + 1
[ "$n" -ge 60 ] && [ "$n" -le 201 ] || fail "the parent has $n points, expected 60 to 201"
echo "  ok: the parent has $n points"
# memlive follows the steps: the plateaus in order, exact
assert_eq "$(q s.db "SELECT memlive FROM tick WHERE process = $parent ORDER BY time" | uniq | paste -sd ' ')" \
    "0 1000000 2000000 3000000 4000000 0" "the parent's memlive: 0, the four steps, 0"
assert_eq "$(q s.db "SELECT count(*) FROM tick WHERE process = $parent AND memlive = 2000000")" \
    "$(q s.db "SELECT count(*) FROM tick WHERE process = $parent AND memlive = 2000000 AND ncalls = 2 AND memtot = 2000000")" \
    "at a plateau, ncalls and memtot are the steps' too"
assert_eq "$(q s.db "SELECT t.time = s.time, t.ncalls = o.ncalls, t.memtot = o.memtot, t.memlive = o.memlive
    FROM tick t JOIN last_snapshot s ON s.process = t.process JOIN totals o ON o.snapshot = s.id AND o.thread = 0
    WHERE t.process = $parent ORDER BY t.time DESC LIMIT 1")" "1|1|1|1" "the last point is the exit snapshot's totals, at its time"
assert_eq "$(q s.db "SELECT min(rss) > 0, min(time) >= (SELECT start_time FROM process WHERE id = $parent) FROM tick
    WHERE process = $parent")" "1|1" "RSS > 0 at every point; the points from the process's start"
# the child: its own points, from its own start, its own live bytes
assert_eq "$(q s.db "SELECT count(*) >= 10, min(time) >= (SELECT start_time FROM process WHERE id = $child)
    FROM tick WHERE process = $child")" "1|1" "the fork child has its own points"
# (its first point may come before or after its allocation: the thread
# starts as the child runs)
assert_eq "$(q s.db "SELECT memlive FROM tick WHERE process = $child ORDER BY time" | uniq | paste -sd ' ' | sed 's/^0 //')" \
    "500000 0" "the child's memlive"
assert_eq "$(q s.db "SELECT ended FROM process WHERE id = $child")" "_exit 0" "the child left by _exit"

# evenly spaced, and bounded: at 2 ms the buffer fills twice or three
# times in 1.5 s; the points left are 100 to 200 (and the exit's), spaced
# by the interval doubled as often
MP_QUIET=1 MP_TICK=0.002 profile fine.db $P || fail "MP_TICK=0.002: the program failed"
python3 - fine.db <<'PY' || fail "MP_TICK=0.002: not 100 to 200 evenly spaced points"
import sqlite3, sys
t = [r[0] for r in sqlite3.connect(sys.argv[1]).execute("SELECT time FROM tick ORDER BY time")]
pts = t[:-1]                                   # the exit snapshot's point aside
assert 100 <= len(pts) <= 200, len(pts)
gaps = sorted(b - a for a, b in zip(pts, pts[1:]))
step = gaps[len(gaps) // 2]                    # the median gap: 2 ms doubled k times
k = round(__import__("math").log2(step / 0.002))
assert k >= 2 and abs(step - 0.002 * 2 ** k) < 0.002, (step, k)
assert sum(1 for g in gaps if abs(g - step) < step / 2) >= 0.7 * len(gaps), gaps
print("  ok: %d points, %.0f ms apart (2 ms doubled %d times)" % (len(pts), step * 1000, k))
PY

# MP_TICK=0: no points, no thread
MP_QUIET=1 MP_TICK=0 profile off.db $P || fail "MP_TICK=0: the program failed"
assert_eq "$(q off.db "SELECT count(*) FROM tick")|$(q off.db "SELECT settings LIKE '%MP_TICK=0 %' FROM process")" "0|1" \
    "MP_TICK=0: no points"

# exec: the image before it has its points, written by the exec's snapshot
MP_QUIET=1 profile x.db $B/tests/fork_exec; rc=$?
assert_eq "$rc" 5 "fork_exec: its exit status"
assert_eq "$(q x.db "SELECT count(DISTINCT process) FROM tick")" 3 "fork + exec: each of the 3 images has its points"
# threads: the totals of all threads
MP_QUIET=1 profile th.db $B/tests/threads_cross_free || fail "threads_cross_free failed"
assert_eq "$(q th.db "SELECT ncalls, memtot, memlive FROM tick ORDER BY time DESC LIMIT 1")" \
    "$(q th.db "SELECT ncalls, memtot, memlive FROM process_totals")" "threads: the last point has every thread's allocations"
assert_eq "$(q th.db "SELECT count(*) > 1 FROM tick")" 1 "threads: points"
# killed: the points the last MP_INTERVAL snapshot wrote (the invariants
# check that they end with its totals)
MP_QUIET=1 MP_INTERVAL=0.2 LD_PRELOAD=$LIB MP_OUT=$T/k.db $B/tests/long_runner 3000000 2>/dev/null &
pid=$!
sleep 1.2
kill -9 $pid; wait $pid 2>/dev/null
assert_eq "$(q k.db "SELECT count(*) > 10, max(time) = (SELECT max(time) FROM snapshot WHERE reason = 'interval') FROM tick")" \
    "1|1" "SIGKILL: the points up to the last interval snapshot"
# The cheap modes of a program of one thread: no profiler's thread (a
# second thread would end glibc's single-thread shortcut: issue 31), the
# points taken by the allocations. tick_steps' allocations are 300 ms
# apart: each one's point, then the exit's. In the allocator's bytes: a
# 1000000-byte block is an mmapped chunk of 1003504 usable bytes.
tasks() { ls /proc/$1/task | wc -l; }
comms() { cat /proc/$1/task/*/comm | sort | paste -sd ' '; }
for mode in MP_ENABLED=0 MP_SAMPLE=512K; do
    env $mode MP_QUIET=1 LD_PRELOAD=$LIB MP_OUT=$T/lazy.db $P fork & pid=$!
    sleep 0.6; n=$(tasks $pid); wait $pid
    assert_eq "$n" 1 "$mode: one thread, the program's"
    parent=$(q lazy.db "SELECT id FROM process WHERE ppid NOT IN (SELECT pid FROM process)")
    assert_eq "$(q lazy.db "SELECT memlive FROM tick WHERE process = $parent ORDER BY time" | uniq | paste -sd ' ' | sed 's/^0 //')" \
        "1003504 2007008 3010512 4014016 0" "$mode: the parent's points: each step's, then the exit's"
    assert_eq "$(q lazy.db "SELECT memlive FROM tick WHERE process != $parent ORDER BY time" | uniq | paste -sd ' ' | sed 's/^0 //')" \
        "503792 0" "$mode: the fork child's"
    rm -f lazy.db
done
# an MP_TICK the user gave, or the program's second thread: the profiler's thread
MP_ENABLED=0 MP_TICK=0.01 LD_PRELOAD=$LIB MP_OUT=$T/given.db $P & pid=$!
sleep 0.6; n=$(tasks $pid); wait $pid
assert_eq "$n|$(q given.db "SELECT count(*) > 60 FROM tick")" "2|1" "MP_ENABLED=0 MP_TICK=0.01: the profiler's thread, a point every 10 ms"
MP_ENABLED=0 LD_PRELOAD=$LIB MP_OUT=$T/mt.db $B/tests/ledger_mix 1 & pid=$!
sleep 0.6; c=$(comms $pid); wait $pid
assert_eq "$c" "ledger_mix ledger_mix ledger_mix ledger_mix ledger_mix mallocprof" "MP_ENABLED=0, 4 threads: the profiler's thread"
assert_eq "$(q mt.db "SELECT count(*) > 60 FROM tick")" 1 "MP_ENABLED=0, 4 threads: a point every 10 ms"

# a bad value: one line naming the variable, the default used
MP_TICK=x profile bad.db $B/tests/alloc_functions > /dev/null 2> err   # it exits 7 by design
assert_match "$(grep MP_TICK err)" "^mallocprof: warning: MP_TICK=x is not valid .*; using the default 0.01$" "MP_TICK=x: a warning"
assert_eq "$(q bad.db "SELECT count(*) > 0 FROM tick")" 1 "MP_TICK=x: the default's points"
# the profiler's thread does not make a program fail where it must be of
# one thread: unshare(CLONE_NEWUSER) (stopped for the call, started after)
if unshare -U true 2>/dev/null; then
    assert_eq "$(MP_QUIET=1 profile u.db unshare -U sh -c 'echo in a user namespace' 2>&1; echo "rc=$?")" \
        "in a user namespace
rc=0" "unshare -U under the profiler"
    assert_eq "$(q u.db "SELECT count(*) > 1 FROM tick t JOIN process p ON p.id = t.process WHERE p.exe LIKE '%/unshare'")" 1 \
        "unshare: its points before and after the call"
else
    echo "  skip: unshare -U is not allowed here"
fi
