#!/bin/bash
# `make bench`, the profiler's memory (issue 44's item 2): clang++-14 -O2 of
# tests/progs/runtimes/templates.cc, max RSS (wait4's ru_maxrss, timeit.c)
# alone, sampled (MP_SAMPLE=512K) and in full capture, and heaptrack's
# preload library alone in the process (its trace written to a file, as
# `heaptrack` writes it to its interpreter's pipe: what heaptrack adds
# inside the program's process). Median of BENCH_RUNS (default 3), runs
# interleaved. Targets: sampled <= 5 % of the program's RSS or 8 MB,
# whichever is larger; full <= heaptrack's in-process overhead. Then the
# profiler's share of the RSS at exit by the full run's ledger
# (`mpquery rss`'s profiler line). Skipped (a line) without clang++-14.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=$ROOT/build
LIB=$B/libmallocprof.so
CLANG=/usr/bin/clang++-14
HT_LIB=/usr/lib/heaptrack/libheaptrack_preload.so
RUNS=${BENCH_RUNS:-3}

[ -x "$CLANG" ] || { echo "bench memory: skipped: no clang++-14 (apt-get install clang-14)"; exit 0; }
[ -f "$LIB" ] || { echo "bench memory: $LIB is missing" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
gcc -O2 -o "$T/timeit" "$HERE/timeit.c" || exit 1
ARGV=("$CLANG" -std=c++17 -O2 -c "$ROOT/tests/progs/runtimes/templates.cc" -o "$T/templates.o")
CONFIGS=(alone sampled full)
[ -f "$HT_LIB" ] && CONFIGS+=(heaptrack)

# run CONFIG: one run, its max RSS (KiB) appended to $T/CONFIG
run() {
    local env=()
    case $1 in
    sampled)   env=(LD_PRELOAD="$LIB" MP_OUT="$T/sampled.db" MP_SAMPLE=512K MP_QUIET=1) ;;
    full)      env=(LD_PRELOAD="$LIB" MP_OUT="$T/full.db" MP_QUIET=1) ;;
    heaptrack) env=(LD_PRELOAD="$HT_LIB" DUMP_HEAPTRACK_OUTPUT="$T/heaptrack.raw") ;;
    esac
    rm -f "$T/$1.db" "$T/heaptrack.raw"
    "$T/timeit" "$T/last" env "${env[@]}" "${ARGV[@]}" >/dev/null 2>"$T/log" ||
        { echo "bench memory: clang failed ($1): $(head -c 300 "$T/log")" >&2; exit 1; }
    cut -d' ' -f2 "$T/last" >>"$T/$1"
}
for ((i = 1; i <= RUNS; i++)); do
    for c in "${CONFIGS[@]}"; do run "$c"; done
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
alone=$(median "$T/alone")
mb() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1000 }'; }
# over CONFIG TARGET_KB: "+D MB (P %)", with a "!" past the target
over() {
    awk -v v="$(median "$T/$1")" -v a="$alone" -v t="$2" 'BEGIN {
        printf "+%.0f MB (%.0f %%)%s", (v - a) / 1000, (v - a) * 100 / a, (t != "" && v - a > t) ? "!" : "" }'
}
sampled_target=$(awk -v a="$alone" 'BEGIN { t = a * 0.05; printf "%.0f", (t > 8000 ? t : 8000) }')
ht=-
full_target=
if [ -s "$T/heaptrack" ]; then
    full_target=$(($(median "$T/heaptrack") - alone))
    ht="$(mb "$(median "$T/heaptrack")") MB $(over heaptrack "")"
fi
share=$("$B/mpquery" rss "$T/full.db" --format csv 2>/dev/null |
        awk -F, '$3 == "profiler" && $4 == "" { p = $7 } END { if (p != "") printf "%s %%", p; else print "-" }')
echo
echo "memory, clang++-14 -O2 templates.cc, max RSS (median of $RUNS): alone $(mb "$alone") MB;" \
     "sampled $(mb "$(median "$T/sampled")") MB $(over sampled "$sampled_target") (target <= $(mb "$sampled_target") MB);" \
     "full $(mb "$(median "$T/full")") MB $(over full "$full_target") (target <= heaptrack's);" \
     "heaptrack in the process $ht; the profiler at exit (ledger, full): $share of the RSS"
