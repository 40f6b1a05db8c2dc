#!/bin/bash
# `make bench`, a fleet streaming to one ClickHouse node (issue 45 item 3):
# FLEET_PROCS processes (default 1000) each writing a snapshot every 10 s
# for FLEET_MINUTES minutes of data (default 10; 60 is the issue's hour,
# 360,000 snapshots), written by build/bench/fleetgen (the recorder's
# format, a few hundred changed rows a snapshot, stacks from one shared
# pool) into a directory that the agent (mpquery push --follow) follows,
# against a private clickhouse-server (tests/lib/clickhouse.sh). Time is
# compressed: the files get FLEET_BATCH snapshots each (default 30: five
# minutes of the fleet) while the agent is stopped (SIGSTOP), then the
# agent is let go and timed until the store holds them all. It prints
#   ingest   snapshots/s and rows/s while catching up (the fleet makes
#            PROCS / 10 snapshots/s: 100 for 1,000 processes), and the
#            agent's CPU
#   steady   then one more snapshot in every file, as the fleet goes on
#            after the data's span: each file is read whole for one
#            snapshot (the agent's cost at the span's end, in real time)
#   query    "what grew in the last hour": diff --server --a-since 2h
#            --a-until 1h --b-since 1h as of the data's "now" (the ages as
#            epoch seconds: the feeding takes minutes; the data end 30
#            minutes before it, so each side holds half of them),
#            fleet-wide and --group exe, the median of 3 runs of the real
#            CLI (answered from the growth rollups), and once from
#            mp_sample's rows (--where 1: the general queries), checking
#            that both answer the same
#   disk     the store's bytes on disk (system.parts) per snapshot
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MPQ=$ROOT/build/mpquery GEN=$ROOT/build/bench/fleetgen
PROCS=${FLEET_PROCS:-1000} MINUTES=${FLEET_MINUTES:-10} BATCH=${FLEET_BATCH:-30}
die() { echo "bench fleet: $*" >&2; exit 1; }
[ -x "$MPQ" ] && [ -x "$GEN" ] || die "build first (make build/mpquery build/bench/fleetgen)"
for v in "$PROCS" "$MINUTES" "$BATCH"; do [[ $v =~ ^[1-9][0-9]*$ ]] || die "'$v' is not a positive number"; done
command -v clickhouse-server >/dev/null || { echo "bench fleet: clickhouse-server is not installed: skipped"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/mpfleet.XXXXXX") || die "cannot create a temporary directory"
at_exit() { [ -n "${AG:-}" ] && kill -KILL "$AG" 2>/dev/null; [ "${1:-0}" = 0 ] || tail -3 "$T/agent.err" 2>/dev/null; rm -rf "$T"; exit "${1:-0}"; }
trap 'at_exit $?' EXIT
fail() { die "$@"; }
# on copies: a rebuild meanwhile does not change what is measured
cp "$MPQ" "$T/mpquery" && cp "$GEN" "$T/fleetgen" || die "cannot copy the build"
MPQ=$T/mpquery GEN=$T/fleetgen
. "$ROOT/tests/lib/clickhouse.sh"
cd "$T" || die "cannot enter $T"
ch_start >ch.log || die "clickhouse-server did not start"
mkdir prof st
SNAPS=$((MINUTES * 6))
NOW=$(date +%s)                          # the data's "now": they end SNAPS * 5 s before it
START=$(( NOW - 3600 - SNAPS * 10 / 2 ))
now() { date +%s.%N; }
stored() { chc "SELECT count() FROM mp_snapshot"; }
cpu() { awk '{ print $14 + $15 }' "/proc/$AG/stat"; }
# until the agent is idle (no CPU for 0.5 s): stopped then, it holds no
# profile's read lock, which fleetgen's commit would wait for
idle() {
    local c1 c2=-1
    while c1=$(cpu) && sleep 0.5 && c2=$(cpu) && [ "$c1" != "$c2" ]; do :; done
    [ "$c2" != -1 ] || die "the agent died: $(tail -3 agent.err)"
}

TMPDIR=$T "$MPQ" push --follow prof --server "$CH_URL" --state st -q 2>agent.err &
AG=$!
echo "bench fleet: $PROCS processes x $SNAPS snapshots ($MINUTES minutes at one per 10 s), fed $BATCH snapshots a file at a time"
busy=0 gen=0 done_snaps=0 c0=$(cpu)
for ((from = 1; from <= SNAPS; from += BATCH)); do
    upto=$((from + BATCH - 1)); [ $upto -gt $SNAPS ] && upto=$SNAPS
    idle
    kill -STOP "$AG"
    a=$(now)
    "$GEN" prof "$PROCS" "$from" "$upto" "$START" || die "fleetgen failed"
    b=$(now)
    kill -CONT "$AG"
    done_snaps=$((PROCS * upto))
    while [ "$(stored)" -lt "$done_snaps" ]; do
        kill -0 "$AG" 2>/dev/null || die "the agent died: $(tail -3 agent.err)"
        sleep 0.2
    done
    c=$(now)
    gen=$(awk -v g="$gen" -v a="$a" -v b="$b" 'BEGIN { print g + b - a }')
    busy=$(awk -v s="$busy" -v b="$b" -v c="$c" 'BEGIN { print s + c - b }')
    echo "bench fleet:   snapshots $from-$upto: written in $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b - a }') s, stored in $(awk -v b="$b" -v c="$c" 'BEGIN { printf "%.1f", c - b }') s"
done
c1=$(cpu)
rows=$(chc "SELECT (SELECT count() FROM mp_sample) + (SELECT count() FROM mp_totals) + (SELECT count() FROM mp_snapshot)")
[ "$(chc "SELECT count() FROM (SELECT run, process, seq FROM mp_snapshot GROUP BY run, process, seq HAVING count() > 1)")" = 0 ] ||
    die "snapshots stored twice"
awk -v n="$done_snaps" -v r="$rows" -v s="$busy" -v cpu=$((c1 - c0)) -v need=$((PROCS / 10)) -v hz="$(getconf CLK_TCK)" 'BEGIN {
    printf "bench fleet: ingest: %d snapshots (%d rows) stored in %.1f s: %.0f snapshots/s, %.0f rows/s (the fleet makes %d/s); agent CPU %.1f s\n",
           n, r, s, n / s, r / s, need, cpu / hz }'
# as the fleet runs after the hour: one more snapshot in every file, each
# file read whole again for it
idle
kill -STOP "$AG"
"$GEN" prof "$PROCS" $((SNAPS + 1)) $((SNAPS + 1)) "$START" || die "fleetgen failed"
b=$(now)
kill -CONT "$AG"
while [ "$(stored)" -lt $((done_snaps + PROCS)) ]; do kill -0 "$AG" 2>/dev/null || die "the agent died"; sleep 0.1; done
c=$(now)
awk -v n="$PROCS" -v s="$SNAPS" -v b="$b" -v c="$c" 'BEGIN {
    printf "bench fleet: steady: one new snapshot in each of the %d files (each holding %d): stored in %.1f s, %.0f snapshots/s\n", n, s, c - b, n / (c - b) }'
done_snaps=$((done_snaps + PROCS))
kill -TERM "$AG"; wait "$AG"; AG=

# median of 3 timings of a command (its output kept in $T/out)
time3() {
    local i a b ts=()
    for i in 1 2 3; do
        a=$(now); "$@" >out 2>err || die "$*: $(tail -1 err)"; b=$(now)
        ts+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b - a }')")
    done
    printf '%s\n' "${ts[@]}" | sort -n | sed -n 2p
}
grew=(diff --server "$CH_URL" --a-since $((NOW - 7200)) --a-until $((NOW - 3600)) --b-since $((NOW - 3600)) -n 10)
for group in "" exe; do
    s=$(time3 "$MPQ" "${grew[@]}" ${group:+--group $group})
    [ "$(wc -l <out)" -gt 3 ] || die "diff answered nothing: $(cat out err)"
    mv out fast.out
    a=$(now); "$MPQ" "${grew[@]}" ${group:+--group $group} --where 1 >out 2>err || die "diff --where 1: $(tail -1 err)"; b=$(now)
    cmp -s fast.out out || die "the rollups and mp_sample answer differently: $(diff fast.out out | head -5)"
    echo "bench fleet: query: what grew in the last hour${group:+ per $group}: $s s (median of 3; from mp_sample's rows: $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b - a }') s, the same answer)"
done
bytes=$(chc "SELECT sum(bytes_on_disk) FROM system.parts WHERE active AND database = 'default'")
awk -v b="$bytes" -v n="$done_snaps" 'BEGIN { printf "bench fleet: disk: %.1f MiB for %d snapshots: %.0f bytes per snapshot\n", b / 1048576, n, b / n }'
ch_stop
