#!/bin/bash
# run: waits
# mpquery record --pid: a running process recorded for a while and let go.
# A server-like program (not preloaded) answering requests at a steady
# rate, attached for 2 s and detached 20 times in a row: it keeps
# answering, its output and exit status are those of a run never attached
# to, each profile has the request and session stacks with calls in
# proportion (one session per 50 requests), no live bytes below 0. Four
# threads allocating in a loop, attached in the middle: exit status and
# output unchanged, the invariants hold, the blocks of before counted as
# unknown frees. Refused, in one line, the process untouched: a static
# program, a stopped one, a traced one, another user's; bad options.
source "$(dirname "$0")/../lib/lib.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }
SERVER=$B/tests/attach_server
THREADS=$B/tests/attach_threads

# the process's whole totals at the latest snapshot: "ncalls|nfree|memlive|nfree_unknown"
totals() {
    q "$1" "SELECT t.ncalls, t.nfree, t.memlive, t.nfree_unknown FROM totals t
            WHERE t.thread = 0 AND t.snapshot = (SELECT MAX(id) FROM snapshot)"
}

echo "== a server attached 20 times"
cat > feed.py <<'PY'
import os, sys, time
i = 0
while not os.path.exists(sys.argv[1]):
    i += 1
    sys.stdout.write("%d\n" % i); sys.stdout.flush()
    time.sleep(0.002)
PY
($PY3 feed.py stop | $SERVER > served.txt; echo $? > served.rc) &
feeder=$!
on_exit "touch $T/stop; rm -f $T/go $T/req"     # fifos: the profile check at the end opens every file
sleep 0.5
pid=$(test_pgrep -f "^$SERVER\$") || fail "the server did not start"
before=0
for i in $(seq 1 ${ATTACHES:-20}); do
    $MPQ record -q --pid $pid --duration 2 -o s$i.db || fail "attach $i failed"
    lines=$(wc -l < served.txt)
    [ "$lines" -gt "$before" ] || fail "the server stopped answering after attach $i ($lines lines)"
    before=$lines
    req=$(by_function s$i.db request)
    ses=$(by_function s$i.db session)
    IFS='|' read -r _ rcalls _ rfree rlive <<< "$req"
    IFS='|' read -r _ scalls _ _ slive <<< "$ses"
    [ -n "$rcalls" ] && [ -n "$scalls" ] || fail "profile $i lacks the request or session stack: [$req] [$ses]"
    # 2 s at one request per 2 ms at most; the session stack: a realloc and a malloc per 50 requests
    [ "$rcalls" -ge 50 ] && [ "$rcalls" -le 1600 ] || fail "profile $i: $rcalls requests in 2 s"
    expect=$((2 * rcalls / 50))
    [ $((scalls - expect)) -ge -4 ] && [ $((scalls - expect)) -le 4 ] || fail "profile $i: $scalls session calls for $rcalls requests"
    [ "$rfree" = "$rcalls" ] && [ "$rlive" = 0 ] || fail "profile $i: requests freed $rfree of $rcalls, $rlive bytes live"
    IFS='|' read -r _ _ live _ <<< "$(totals s$i.db)"
    [ "$live" -ge 0 ] && [ "$slive" -ge 0 ] || fail "profile $i: live bytes below 0 ($live, $slive)"
    assert_eq "$(q s$i.db "SELECT ended FROM process")" "detach" "profile $i ended by the detach"
done
echo "  ok: 20 sessions, each with the request and session stacks in proportion"
touch stop
wait $feeder
n=$(tail -2 served.txt | head -1 | cut -d' ' -f1)
seq 1 "$n" | $SERVER > plain.txt
plain_rc=$?
cmp -s plain.txt served.txt || fail "the served output differs from a run never attached to"
assert_eq "$(cat served.rc)" "$plain_rc" "the server's exit status"
echo "  ok: $n requests answered as without the attaches"

echo "== four threads attached in the middle of their allocations"
mkfifo go
($THREADS < go > threads.txt; echo $? > threads.rc) &
exec 7> go
sleep 0.3
pid=$(test_pgrep -f "^$THREADS\$") || fail "the threads program did not start"
$MPQ record -q --pid $pid --duration 1 -o t.db || fail "attach to the threads failed"
exec 7>&-
wait
assert_eq "$(cat threads.rc)" 5 "the threads program's exit status"
assert_eq "$(cat threads.txt)" "thread 0: ran
thread 1: ran
thread 2: ran
thread 3: ran" "the threads program's output"
check_profile t.db
IFS='|' read -r calls frees live unknown <<< "$(totals t.db)"
# each thread holds its ring of 64 blocks at the detach: 256 live, less
# one per thread at most (a free recorded, then the malloc replacing it
# made after the thread's calls went back to libc's, before the snapshot)
nlive=$(q t.db "SELECT SUM(ncalls - nfree) FROM last_sample")
[ "$nlive" -ge 252 ] && [ "$nlive" -le 256 ] || fail "$nlive blocks live at the detach"
[ "$calls" -gt 1000 ] && [ "$unknown" -gt 0 ] && [ "$unknown" -le 256 ] && [ "$live" -gt 0 ] ||
    fail "threads' totals: $calls calls, $frees frees, $live live, $unknown unknown"
assert_eq "$((calls - frees))" "$nlive" "allocations less the frees of blocks seen (nfree; nfree_unknown apart)"
echo "  ok: $calls allocations, $unknown frees of blocks allocated before"

echo "== the end of a session: SIGTERM, the process's exit"
mkfifo req
($SERVER < req > ended.txt; echo $? > ended.rc) &
exec 7> req
echo 1 >&7
sleep 0.3
pid=$(test_pgrep -f "^$SERVER\$") || fail "the server did not start"
# a session is under way once the profiler's thread runs in the process
wait_attached() {
    for _ in $(seq 400); do grep -qx mallocprof /proc/$1/task/*/comm 2>/dev/null && return 0; sleep 0.05; done
    fail "no session started in process $1"
}
$MPQ record -q --pid $pid -o term.db 2> term.err 7>&- & rec=$!     # not holding the fifo open
wait_attached $pid
for i in $(seq 2 50); do echo $i >&7; sleep 0.01; done
sleep 0.3
kill -TERM $rec
wait $rec || fail "record --pid ended by SIGTERM failed: $(cat term.err)"
assert_eq "$(q term.db "SELECT ended FROM process")" detach "SIGTERM: the session ended by a detach"
assert_eq "$(by_function term.db request | cut -d'|' -f1,2,4)" "request|49|49" "requests 2 to 50 recorded"
$MPQ record --pid $pid -o exit.db 2> exit.err 7>&- & rec=$!
wait_attached $pid
for i in $(seq 51 100); do echo $i >&7; sleep 0.01; done
exec 7>&-
wait $rec || fail "record --pid of a process that exits failed: $(cat exit.err)"
wait
assert_match "$(cat exit.err)" "^mpquery: process $pid \(attach_server\) ended \\(or ran another program\\) while recorded: its exit \\(or exec\\) wrote the profile
mpquery: wrote $T/exit.db: 1 process \(1 image\), [0-9]+ snapshots? \([01] at a peak\), [0-9.]+ s$" "the process's exit ends the session"
assert_eq "$(q exit.db "SELECT ended FROM process")" exit "the exit wrote the profile"
assert_eq "$(by_function exit.db session | cut -d'|' -f1,2)" "session|2" "the session of request 100 recorded"
assert_eq "$(cat ended.rc) $(tail -1 ended.txt)" "3 2 sessions" "the server's exit status and last line"

echo "== a sleep interrupted twice (attach, detach) ends on time"
cat > ns.c <<'C'
#include <errno.h>
#include <stdio.h>
#include <time.h>
int main(void)
{
    struct timespec a, b, req = { 2, 0 };
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = nanosleep(&req, NULL), err = rc ? errno : 0;
    clock_gettime(CLOCK_MONOTONIC, &b);
    double slept = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    printf("rc %d errno %d, %s\n", rc, err, slept >= 2 ? "2 s slept" : "woken early");
    return 0;
}
C
gcc -o ns ns.c || fail "cannot build ns"
./ns > ns.out 2> ns.err & sleeper=$!
sleep 0.2
$MPQ record -q --pid $sleeper --duration 0.2 -o ns.db || fail "attach to a sleeping process failed"
wait $sleeper
assert_eq "$? $(cat ns.out ns.err)" "0 rc 0 errno 0, 2 s slept" "the sleep resumed, its output and stderr unchanged"

echo "== a preloaded process"
cat > st.c <<'C'
#include <unistd.h>
int main(void) { for (;;) pause(); }
C
gcc -o dyn_prog st.c || fail "cannot build the sleeper"
LD_PRELOAD=$LIB MP_OUT=$T/pre.db ./dyn_prog & sleeper=$!
sleep 0.3
out=$($MPQ record --pid $sleeper --duration 1 -o x.db 2>&1); rc=$?
assert_eq "$rc $out" "1 mpquery: record: process $sleeper (dyn_prog) runs with libmallocprof.so preloaded: it is recorded already" "a preloaded process"
kill -0 $sleeper || fail "the preloaded process is gone"
kill $sleeper; wait $sleeper 2>/dev/null

echo "== refused"
run_sleeper() { "$@" & sleeper=$!; sleep 0.2; }
if gcc -static -o static_prog st.c 2>/dev/null; then
    run_sleeper ./static_prog
    expect_out=$($MPQ record --pid $sleeper --duration 1 -o x.db 2>&1); rc=$?
    assert_eq "$rc $expect_out" "2 mpquery: record: process $sleeper (static_prog) is statically linked: it has no dynamic loader to load libmallocprof.so into; not attached" "a static program"
    kill $sleeper
else
    echo "# no static libc: the static refusal is not tested"
fi
run_sleeper ./dyn_prog
kill -STOP $sleeper
sleep 0.1
out=$($MPQ record --pid $sleeper --duration 1 -o x.db 2>&1); rc=$?
assert_eq "$rc $out" "1 mpquery: record: process $sleeper (dyn_prog) is stopped (T (stopped)): resume it (kill -CONT $sleeper) and try again; not attached" "a stopped process"
assert_eq "$(sed -n 's/^State:\t\(.\).*/\1/p' /proc/$sleeper/status)" T "the stopped process left stopped"
kill -CONT $sleeper
cat > tracer.py <<'PY'
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(0x4206, int(sys.argv[1]), 0, 0) != 0: sys.exit("seize failed")
print("traced", flush=True)
time.sleep(30)
PY
$PY3 tracer.py $sleeper > traced.txt & tracer=$!
for _ in $(seq 50); do [ -s traced.txt ] && break; sleep 0.1; done
out=$($MPQ record --pid $sleeper --duration 1 -o x.db 2>&1); rc=$?
assert_eq "$rc $out" "1 mpquery: record: process $sleeper (dyn_prog) is traced by process $tracer (python3): a process has one tracer; not attached" "a traced process"
kill $tracer; wait $tracer 2>/dev/null
kill $sleeper; wait $sleeper 2>/dev/null
if [ "$(id -u)" = 0 ] && setpriv --reuid 65534 --regid 65534 --clear-groups true 2>/dev/null; then
    cp dyn_prog /tmp/mpdyn$$ && chmod 755 /tmp/mpdyn$$
    on_exit "rm -f /tmp/mpdyn$$"
    setpriv --reuid 65534 --regid 65534 --clear-groups /tmp/mpdyn$$ & sleeper=$!
    sleep 0.2
    chmod 777 "$T"
    out=$(setpriv --reuid 65533 --regid 65533 --clear-groups $MPQ record --pid $sleeper --duration 1 -o $T/x.db 2>&1); rc=$?
    assert_match "$rc $out" "^1 mpquery: record: process $sleeper \(mpdyn$$\) belongs to uid 65534, not to you \(uid 65533\): run mpquery as the process's user, or as root \(CAP_SYS_PTRACE\)(; not attached)?" "another user's process"
    [ "$(echo "$out" | wc -l)" = 1 ] || fail "more than one line: $out"
    kill -0 $sleeper || fail "the other user's process is gone"
    kill $sleeper
else
    echo "# not root: the other-user refusal is not tested"
fi
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    # a container of sorts: the build directory (the library) hidden, /tmp shared
    cp $SERVER ./srv
    # its 200 requests come once the attach is done, however long that takes
    seq 1 200 | (while [ ! -e mnt.go ]; do sleep 0.1; done; cat) |
        unshare -m --propagation private sh -c "mount -t tmpfs none $B && exec ./srv" > mnt.out &
    sleep 0.5
    pid=$(test_pgrep -x srv) || fail "the server in its own mount namespace did not start"
    [ "$(readlink /proc/$pid/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] || fail "srv is in our mount namespace"
    $MPQ record -q --pid $pid -o mnt.db & rec=$!
    for i in $(seq 1 600); do      # mapped, and the attach's ptrace over
        grep -q libmallocprof /proc/$pid/maps 2>/dev/null && grep -q '^TracerPid:[[:space:]]*0$' /proc/$pid/status && break
        sleep 0.1
    done
    touch mnt.go
    wait $rec || fail "attach in another mount namespace failed"
    wait
    copy=$(ls /tmp/libmallocprof-*-$(printf %x $(stat -c %i $LIB)).so) || fail "the library was not copied into the process's /tmp"
    rm -f "$copy"
    assert_eq "$(by_function mnt.db request | cut -d'|' -f1,2)" "request|200" "another mount namespace: the library copied into its /tmp, the profile moved out"
    assert_eq "$(ls /tmp/mallocprof-$pid-*.db 2>/dev/null)" "" "nothing left in its /tmp but the library"
else
    echo "# no unshare -m: the other mount namespace is not tested"
fi
[ ! -e x.db ] || fail "a refused attach wrote x.db"
out=$($MPQ record --pid 999999999 -o x.db 2>&1); rc=$?
assert_eq "$rc $out" "2 mpquery: record: no process 999999999" "no such process"
out=$($MPQ record --pid 12x 2>&1); rc=$?
assert_eq "$rc $out" "2 mpquery: record: bad value '12x' for --pid (a process id) (see mpquery record --help)" "a bad pid"
out=$($MPQ record --pid 1 --duration 0 2>&1); rc=$?
assert_eq "$rc $out" "2 mpquery: record: bad value '0' for --duration (seconds > 0, or 500ms, 10m, 1h) (see mpquery record --help)" "a bad duration"
out=$($MPQ record --pid 1 -- true 2>&1); rc=$?
assert_eq "$rc $out" "2 mpquery: record: --pid records a running process: no COMMAND with it ('true') (see mpquery record --help)" "--pid with a command"
out=$($MPQ record --duration 2 -- true 2>&1); rc=$?
assert_eq "$rc $out" "2 mpquery: record: --duration goes with --pid (see mpquery record --help)" "--duration alone"
exit 0
