#!/bin/bash
# `make bench`, mpquery serve on a big profile (issue 43's item 5): clang++-14
# -std=c++17 -O2 -c tests/progs/runtimes/templates.cc recorded with mpquery
# record --interval 0.5 (a snapshot every half second, so that a time
# range has snapshots to read; kept in build/bench/serve-clang-i.db;
# SERVE_DB=FILE measures another, SERVE_RANGE=since=...&until=... sets its
# range), then `mpquery serve` on it: the time from its start to the first
# page (/), and each view's latency as curl sees it (wall) with the CPU
# time the server and its children spent on it (/proc/PID/stat: what a
# loaded machine does not inflate), each view asked for once, in the order
# a person goes through them (each a view change); then the same views
# over a time range (the range chosen, then each view in it); last, the
# server's resident memory. One line per view: VIEW  WALL  CPU  BYTES.
# Skipped (a line) without clang++-14.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=$ROOT/build
MPQ=$B/mpquery
die() { echo "bench serve: $*" >&2; exit 1; }
[ -x "$MPQ" ] || die "build first (make)"
command -v curl >/dev/null || die "curl is not installed"
DB=${SERVE_DB:-$B/bench/serve-clang-i.db}
RANGE=${SERVE_RANGE:-since=%2B2&until=%2B4}
if [ ! -s "$DB" ]; then
    [ -x /usr/bin/clang++-14 ] || { echo "bench serve: skipped: no clang++-14 (apt-get install clang-14)"; exit 0; }
    mkdir -p "$(dirname "$DB")"
    "$MPQ" record -q -o "$DB" --interval 0.5 -- /usr/bin/clang++-14 -std=c++17 -O2 -c "$ROOT/tests/progs/runtimes/templates.cc" \
        -o /dev/null || die "recording clang++-14 failed"
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/mpserve.XXXXXX") || die "no temporary directory"
SPID=
trap '[ -n "$SPID" ] && kill $SPID 2>/dev/null; rm -rf "$T"' EXIT
echo "bench serve: $DB: $("$MPQ" info "$DB" | grep -o 'stacks with samples in this selection: [0-9]*')"

start=$(date +%s%N)
"$MPQ" serve "$DB" >"$T/url" 2>"$T/err" &
SPID=$!
while [ ! -s "$T/url" ]; do kill -0 $SPID 2>/dev/null || die "serve failed: $(cat "$T/err")"; sleep 0.01; done
URL=$(cat "$T/url")
BASE=${URL%/\?token=*} TOK=${URL#*token=}
cpu() { awk '{ print $14 + $15 + $16 + $17 }' /proc/$SPID/stat; }    # clock ticks: self and children
TICK=$(getconf CLK_TCK)
view() {
    local a b r sep='?'
    [[ $1 == *\?* ]] && sep='&'
    a=$(cpu)
    r=$(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}' "$BASE$1${sep}token=$TOK")
    b=$(cpu)
    set -- "$1" $r
    [ "$2" = 200 ] || die "$1: HTTP $2"
    printf '  %-44s %6.0f ms wall %6.0f ms cpu %9d bytes\n' "$1" "$(echo "$3 * 1000" | bc)" \
        "$(echo "($b - $a) * 1000 / $TICK" | bc)" "$4"
}
view /
echo "  first page $(( ($(date +%s%N) - start) / 1000000 )) ms after mpquery serve started (the profile loaded by then)"
for v in /flame /tree /bottomup /callers "/callers?function=main" /peak /leaks /temporaries /hist /rss /threads \
         /timeline /source "/flame?zoom=main" "/flame?search=Sema" "/flame?reverse=1" "/tree?by=memlive" "/tree?path=main"; do
    view "$v"
done
echo "  over a time range ($RANGE):"
# not /peak (its --snapshot peak refuses a range) nor /hist (hist takes none)
for v in /timeline / /flame /tree /bottomup "/callers?function=main" /leaks /temporaries /threads \
         "/flame?reverse=1" "/tree?by=memlive"; do
    if [[ $v == *\?* ]]; then view "$v&$RANGE"; else view "$v?$RANGE"; fi
done
echo "  serve's resident memory: $(awk '/^VmRSS/ { print $2, $3 }' /proc/$SPID/status)"
