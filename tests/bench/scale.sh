#!/bin/bash
# `make bench`, many profiles: how mpquery scales from 10 to 1,000 runs of a
# real workload, in a ClickHouse store (mpquery push, top --server) and in
# one SQLite file (mpquery merge, top). The workload is the sqlite3 CLI on
# generated SQL (an "input" per run: 2,000-3,800 rows, indexes, queries),
# each run profiled into its own profile.db, as a campaign of jobs would be.
# For each step N (SCALE_STEPS, default "10 100 1000"): push the runs not
# yet in the store and time it (runs/s, rows/s: push's own report); merge
# all N files into one (time, size); time `top --functions` over all N runs
# in both stores (the median of 3). ClickHouse is Debian's
# clickhouse-server, started privately on 127.0.0.1 (tests/lib/clickhouse.sh);
# without it the ClickHouse columns say so.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=$ROOT/build
LIB=$B/libmallocprof.so
MPQ=$B/mpquery
STEPS=${SCALE_STEPS:-"10 100 1000"}
die() { echo "bench scale: $*" >&2; exit 1; }
[ -f "$LIB" ] && [ -x "$MPQ" ] || die "build first (make)"
command -v sqlite3 >/dev/null || die "sqlite3 is not installed"
for n in $STEPS; do [[ $n =~ ^[1-9][0-9]*$ ]] || die "SCALE_STEPS: '$n' is not a positive number"; done
MAX=$(printf '%s\n' $STEPS | sort -n | tail -1)

T=$(mktemp -d "${TMPDIR:-/tmp}/mpscale.XXXXXX") || die "cannot create a temporary directory"
# at_exit: what lib.sh's tests do at their end (clickhouse.sh's ch_start
# sets its EXIT trap to stop the server, then call it)
at_exit() { rm -rf "$T"; exit "${1:-0}"; }
trap 'at_exit $?' EXIT
fail() { die "$@"; }
# on copies: a rebuild meanwhile does not change what is measured
cp "$LIB" "$T/libmallocprof.so" && cp "$MPQ" "$T/mpquery" || die "cannot copy the build"
LIB=$T/libmallocprof.so MPQ=$T/mpquery
HAVE_CH=0
# shellcheck source=../clickhouse.sh
. "$ROOT/tests/lib/clickhouse.sh"
if command -v clickhouse-server >/dev/null && command -v clickhouse-client >/dev/null; then
    ch_start >"$T/ch.log" || die "clickhouse-server did not start: $(tail -1 "$T/ch.log")"
    HAVE_CH=1
else
    echo "bench scale: clickhouse-server is not installed (make test installs it): ClickHouse columns left out"
fi

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# median of 3 timings of a command (stdout discarded)
time3() {
    local i a b ts=()
    for i in 1 2 3; do a=$(now); "$@" >/dev/null 2>"$T/time.err" || { echo fail; return; }; b=$(now); ts+=("$(secs "$a" "$b")"); done
    printf '%s\n' "${ts[@]}" | sort -n | sed -n 2p
}

# ------------------------------------------------------------------ the runs
echo "bench scale: profiling $MAX runs of sqlite3 (each its own file) ..."
mkdir -p "$T/runs"
a=$(now)
for ((i = 1; i <= MAX; i++)); do
    awk -v rows=$((2000 + (i % 10) * 200)) -v seed="$i" 'BEGIN {
        print "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, price REAL);"
        print "BEGIN;"
        for (k = 1; k <= rows; k++)
            printf "INSERT INTO item VALUES(%d, '\''item-%07d'\'', %d, %.2f);\n", k, (k * 7919 + seed) % rows, k % 50, (k * 37) % 1000 / 10.0
        print "COMMIT;"
        print "CREATE INDEX item_name ON item(name);"
        print "SELECT grp, count(*), round(avg(price), 2) FROM item GROUP BY grp ORDER BY 3 DESC LIMIT 3;"
        print "UPDATE item SET price = price * 1.1 WHERE grp < 20;"
        print "SELECT count(*), round(sum(price), 2) FROM item;"
    }' > "$T/in.sql"
    MP_OUT=$T/runs/run$(printf %04d "$i").db MP_QUIET=1 LD_PRELOAD=$LIB sqlite3 :memory: < "$T/in.sql" >/dev/null ||
        die "run $i failed"
done
b=$(now)
RECORD=$(secs "$a" "$b")
echo "bench scale: $MAX runs recorded in $RECORD s"

# ------------------------------------------------------------------ the steps
printf '\n%s\n' "many profiles: $MAX runs of sqlite3 (2,000-3,800 rows each), top --functions over all runs"
printf '%6s | %8s %9s %11s %9s | %8s %9s %9s\n' runs "push s" "runs/s" "rows/s" "top s" "merge s" "MB" "top s"
printf '%6s | %40s | %28s\n' "" "ClickHouse (push, top --server)" "SQLite (merge, top)"
done_runs=0
for n in $STEPS; do
    files=("$T"/runs/run*.db)
    files=("${files[@]:0:n}")
    push_s=- rps=- rowps=- ch_top=-
    if [ $HAVE_CH = 1 ]; then
        new=("${files[@]:done_runs}")
        a=$(now)
        "$MPQ" push "$CH_URL" "${new[@]}" -q 2>"$T/push.log" || die "push failed: $(tail -1 "$T/push.log")"
        b=$(now)
        push_s=$(secs "$a" "$b")
        rps=$(awk -v n=${#new[@]} -v s="$push_s" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')
        rowps=$(sed -n 's/.*(\([0-9,]*\) rows\/s.*/\1/p' "$T/push.log" | tail -1)
        ch_top=$(time3 "$MPQ" top --server "$CH_URL" --functions -n 20 --no-pager)
        done_runs=$n
    fi
    a=$(now)
    "$MPQ" merge -o "$T/merged.db" "${files[@]}" 2>"$T/merge.log" || die "merge failed: $(tail -1 "$T/merge.log")"
    b=$(now)
    merge_s=$(secs "$a" "$b")
    mb=$(du -m "$T/merged.db" | cut -f1)
    sq_top=$(time3 "$MPQ" top "$T/merged.db" --run all --functions -n 20 --no-pager)
    printf '%6s | %8s %9s %11s %9s | %8s %9s %9s\n' "$n" "$push_s" "$rps" "${rowps:--}" "$ch_top" "$merge_s" "$mb" "$sq_top"
done
if [ $HAVE_CH = 1 ]; then
    "$MPQ" top --server "$CH_URL" --functions -n 5 --no-pager > "$T/ch.top" 2>&1
    "$MPQ" top "$T/merged.db" --run all --functions -n 5 --no-pager > "$T/sq.top" 2>&1
    if cmp -s "$T/ch.top" "$T/sq.top"; then echo "(the two stores' top --functions are identical)"
    else echo "bench scale: the two stores' answers differ:"; diff "$T/ch.top" "$T/sq.top" | head; fi
fi
