#!/bin/bash
# `make bench`, mpquery push --follow: the agent against a private
# clickhouse-server (tests/lib/clickhouse.sh), programs recording interval
# snapshots (tests/progs/live_steps.c) into the followed directory:
#   latency    a snapshot every 0.5 s for 10 s: from the snapshot's time in
#              the file to its row in mp_snapshot (the store polled every
#              20 ms over HTTP), median and largest
#   idle       the agent's CPU over 30 s with nothing written (ticks)
#   steady     20 programs at once, a snapshot every 0.5 s each: snapshots/s
#              stored, the agent's CPU, the delay after the last one ended
#   catch-up   the server killed while 5 programs write a snapshot every
#              0.05 s for 6 s, then started again: snapshots and rows stored
#              per second from its first ping
# Each ends checking that no (run, process, seq) is stored twice.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=$ROOT/build LIB=$ROOT/build/libmallocprof.so MPQ=$ROOT/build/mpquery P=$ROOT/build/tests/live_steps
die() { echo "bench follow: $*" >&2; exit 1; }
[ -f "$LIB" ] && [ -x "$MPQ" ] && [ -x "$P" ] || die "build first (make)"
command -v clickhouse-server >/dev/null || { echo "bench follow: clickhouse-server is not installed: skipped"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mpfollow.XXXXXX") || die "cannot create a temporary directory"
at_exit() { [ -n "${AG:-}" ] && kill -KILL "$AG" 2>/dev/null; rm -rf "$T"; exit "${1:-0}"; }
trap 'at_exit $?' EXIT
fail() { die "$@"; }
. "$ROOT/tests/lib/clickhouse.sh"
cd "$T" || die "cannot enter $T"
ch_start >ch.log || die "clickhouse-server did not start"
mkdir prof st
TMPDIR=$T "$MPQ" push --follow prof --server "$CH_URL" --state st -q 2>agent.err &
AG=$!
record() {  # record INTERVAL STEPS MS: one program into prof/, in the background
    LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=prof/%e-%p.db MP_INTERVAL=$1 "$P" "$2" "$3" >/dev/null 2>&1 &
}
in_files() { local f n=0; for f in prof/*.db; do n=$((n + $(sqlite3 "$f" "SELECT count(*) FROM $1"))); done; echo $n; }
stored() { chc "SELECT count() FROM mp_snapshot"; }
cpu() { awk '{ print $14 + $15 }' "/proc/$AG/stat"; }
now() { date +%s.%N; }
twice() { chc "SELECT count() FROM (SELECT run, process, seq FROM mp_snapshot GROUP BY run, process, seq HAVING count() > 1)"; }

# ------------------------------------------------------------------ latency
python3 - "$CH_HTTP_PORT" >seen.txt <<'PY' &
import sys, time, urllib.request
seen, end = {}, time.time() + 13
while time.time() < end:
    try:
        for s in urllib.request.urlopen("http://127.0.0.1:%s/?query=SELECT+seq+FROM+mp_snapshot" % sys.argv[1],
                                        timeout=2).read().split():
            seen.setdefault(s.decode(), time.time())
    except Exception:
        pass
    time.sleep(0.02)
for s, t in seen.items(): print(s, t)
PY
POLL=$!
sleep 1
record 0.5 20 500; wait $!
wait $POLL
sqlite3 -separator ' ' prof/*.db "SELECT seq, time FROM snapshot" >taken.txt
python3 - <<'PY'
seen = dict(l.split() for l in open('seen.txt'))
lat = sorted(float(seen[s]) - float(t) for s, t in (l.split() for l in open('taken.txt')) if s in seen)
print("bench follow: latency: %d snapshots, from snapshot to stored: median %.2f s, largest %.2f s"
      % (len(lat), lat[len(lat) // 2], lat[-1]))
PY

# ------------------------------------------------------------------ idle
c0=$(cpu); sleep 30; c1=$(cpu)
echo "bench follow: idle: $((c1 - c0)) ticks of CPU in 30 s (1/$(getconf CLK_TCK) s each)"

# ------------------------------------------------------------------ steady
rm -f prof/*.db
n0=$(stored) c0=$(cpu) a=$(now) pids=()
for i in $(seq 1 20); do record 0.5 40 500; pids+=($!); done
wait "${pids[@]}"
b=$(now) want=$((n0 + $(in_files snapshot)))
while [ "$(stored)" != "$want" ]; do sleep 0.05; done
c=$(now) c1=$(cpu)
awk -v n=$((want - n0)) -v a="$a" -v b="$b" -v c="$c" -v cpu=$((c1 - c0)) 'BEGIN {
    printf "bench follow: steady: 20 programs, %d snapshots in %.1f s (%.0f/s), all stored %.2f s after the last ended; agent CPU %.2f s (%.1f%% of a core)\n",
           n, b - a, n / (b - a), c - b, cpu / 100, cpu / (c - a) }'

# ------------------------------------------------------------------ catch-up
rm -f prof/*.db
sleep 6     # the agent forgets the removed files at its next scan
n0=$(stored)
ch_kill
pids=()
for i in 1 2 3 4 5; do record 0.05 60 100; pids+=($!); done
wait "${pids[@]}"
want=$((n0 + $(in_files snapshot))) rows=$(( $(in_files sample) + $(in_files totals) + $(in_files hist) + $(in_files stack_hist) ))
ch_restart
up=$(now)
until grep -q 'answers again' agent.err; do sleep 0.02; done
a=$(now)
while [ "$(stored)" != "$want" ]; do sleep 0.05; done
b=$(now)
awk -v n=$((want - n0)) -v r="$rows" -v up="$up" -v a="$a" -v b="$b" 'BEGIN {
    printf "bench follow: catch-up: the agent back %.1f s after the server (its backoff), then %d snapshots (%d rows) stored in %.2f s (%.0f snapshots/s)\n",
           a - up, n, r, b - a, n / (b - a) }'
[ "$(twice)" = 0 ] || die "snapshots stored twice"
echo "bench follow: no snapshot stored twice"
kill -TERM "$AG"; wait "$AG"; AG=
ch_stop
