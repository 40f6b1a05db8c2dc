#!/bin/bash
# run: alone
# mpquery record --pid on a Python program (issue 40): what 20 sessions
# leave in it. tests/progs/runtimes/py_attach_target.py serves "requests"
# (30 a round, each on a thread of its own, as http.server's threading
# server), attached for 1 s each round with requests during and after the
# session; its twin gets the same requests, never attached (the native
# growth). Checked: the session really wraps pymalloc's MEM and OBJ
# domains (full capture), and after each detach they are Python's own
# again (main: libmallocprof.so's wrappers stay, every Python allocation
# goes through them); no profile or debug file mapped; no profiler's
# thread left. Held to issue 40's bound: what the sessions leave (the
# attached one's RssAnon growth less its twin's) at most 1 MB after the 1st
# and after the 20th detach (476 and 504 kB here: the library's and its
# namespace's written data and bss, a few live blocks of the profiler's
# heap; 1,260 kB before that heap, in glibc's arenas). Printed: both
# RssAnon figures, and the CPU time of 100 fork + waitpid in the
# target before the first attach and after the last detach (the numbers
# in mpquery/README.md, "What a detach leaves").
source "$(dirname "$0")/../lib/lib.sh"

[ "$(uname -m)" = x86_64 ] || { echo "# not x86-64: record --pid is x86-64 only"; exit 0; }
ROUNDS=20
PROG=$ROOT/tests/progs/runtimes/py_attach_target.py

# start NAME: the target on fifo NAME.in (held open on fd 7 or 8), its
# answers in NAME.out; its pid in NAME.pid
start() {
    mkfifo $1.in
    $PY3 $PROG < $1.in > $1.out 2> $1.err &
    echo $! > $1.pid
}
on_exit "kill \$(cat a.pid n.pid 2>/dev/null) 2>/dev/null; rm -f $T/a.in $T/n.in"
start a
exec 7> a.in
start n
exec 8> n.in
apid=$(cat a.pid) npid=$(cat n.pid)
# ask NAME FD COMMAND: the answer line (60 s at most)
ask() {
    local n
    n=$(wc -l < $1.out)
    echo "$3" >&$2
    for _ in $(seq 6000); do
        [ "$(wc -l < $1.out)" -gt "$n" ] && { tail -1 $1.out; return; }
        sleep 0.01
    done
    fail "$1 did not answer '$3': $(cat $1.err)"
}
anon() { awk '$1 == "RssAnon:" { print $2 }' /proc/$1/status; }
data_maps() { grep -E '\.db(-journal)?$|\.debug$|/debuginfo/|/usr/lib/debug/' /proc/$1/maps; }
both() { ask a 7 "$1" > /dev/null; ask n 8 "$1" > /dev/null; }

both "work 30"
both "work 30"
fork_before=$(ask a 7 "fork 100")
assert_eq "$(ask a 7 alloc)" "alloc python3 python3" "the domains' allocators before the first attach"
a0=$(anon $apid) n0=$(anon $npid)
for i in $(seq $ROUNDS); do
    $MPQ record -q --pid $apid --duration 1 -o p$i.db 7>&- 8>&- & rec=$!
    for _ in $(seq 250); do grep -qx mallocprof /proc/$apid/task/*/comm 2>/dev/null && break; sleep 0.02; done
    ask a 7 "work 30" > /dev/null
    [ $i = 1 ] && in_session=$(ask a 7 alloc)
    wait $rec || fail "session $i failed"
    ask n 8 "work 30" > /dev/null
    both "work 30"
    [ -z "$(data_maps $apid)" ] || fail "after detach $i the target maps: $(data_maps $apid)"
    assert_eq "$(ask a 7 alloc)" "alloc python3 python3" "the domains' allocators after detach $i"
    [ $i = 1 ] && a1=$(anon $apid) n1=$(anon $npid)
    [ $i = $ROUNDS ] || rm -f p$i.db
done
assert_eq "$in_session" "alloc libmallocprof.so libmallocprof.so" "the domains' allocators in the first session"
assert_eq "$(cat /proc/$apid/task/*/comm | grep -c mallocprof)" 0 "profiler's threads after the last detach"
assert_eq "$(q p$ROUNDS.db "SELECT ended FROM process")" detach "the last profile's end"
fork_after=$(ask a 7 "fork 100")
a20=$(anon $apid) n20=$(anon $npid)
echo "# RssAnon kB, attached: $a0 -> $a1 (1st detach) -> $a20 (20th); its twin: $n0 -> $n1 -> $n20"
left1=$(( (a1 - a0) - (n1 - n0) )) left20=$(( (a20 - a0) - (n20 - n0) ))
echo "# left by the sessions: $left1 kB after the 1st, $left20 kB after the 20th"
[ "$left1" -le 1024 ] || fail "the 1st session left $left1 kB (at most 1024)"
[ "$left20" -le 1024 ] || fail "20 sessions left $left20 kB (at most 1024)"
echo "# 100 forks' CPU s: ${fork_before#fork } before the first attach, ${fork_after#fork } after the last detach"
exec 7>&- 8>&-
wait
exit 0
