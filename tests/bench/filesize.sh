#!/bin/bash
# `make bench`, a smaller file (issue 44, item 4): the profile of full
# capture beside heaptrack's file (zstd) for the same run of each program:
#   clang      clang++-14 -std=c++17 -O2 -c tests/progs/runtimes/templates.cc
#   python     PYTHONMALLOC=malloc python3 json_churn.py
#   sqlite3    the sqlite3 CLI on 200k rows (rows_sql.awk without the queries)
# One run of each (the sizes vary by a few per cent between runs: ASLR and
# timing change what is allocated where, never the schema). Printed per
# program: both sizes, their ratio (target <= 2, a "!" when missed), the
# stacks with samples and the stack tree's nodes, and where the profile's
# bytes go (SQLite's dbstat: the pages of each table and index).
# FILESIZE_KEEP=DIR keeps the files there.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIB=${BENCH_LIB:-$ROOT/build/libmallocprof.so}     # BENCH_LIB: another build, to compare
die() { echo "bench filesize: $*" >&2; exit 1; }
[ -f "$LIB" ] || die "$LIB is missing: run 'make' first"
command -v sqlite3 >/dev/null || die "sqlite3 is not installed"
if ! command -v heaptrack >/dev/null; then
    echo "file size: heaptrack is not installed (apt-get install heaptrack): nothing to compare with"
    exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/mpsize.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf "$T"' EXIT
mkdir "$T/ht" || die "cannot create $T/ht"

awk -v rows=200000 -v queries=0 -f "$HERE/rows_sql.awk" > "$T/rows.sql" || die "cannot generate the SQL workload"

# workload W: sets ARGV, WENV and STDIN; false when W's program is missing
workload() {
    WENV=() STDIN=/dev/null
    case $1 in
    clang)   ARGV=(/usr/bin/clang++-14 -std=c++17 -O2 -c "$ROOT/tests/progs/runtimes/templates.cc" -o "$T/t.o") ;;
    python)  ARGV=(/usr/bin/python3 "$HERE/json_churn.py"); WENV=(PYTHONMALLOC=malloc) ;;
    sqlite3) ARGV=("$(command -v sqlite3)" :memory:); STDIN=$T/rows.sql ;;
    esac
    [ -x "${ARGV[0]}" ]
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
printf '\nfile size: full capture against heaptrack (zstd), the same run of each program; target <= 2x\n'
printf '%-8s %9s %9s %6s %8s %8s  %s\n' program "mp MiB" "ht MiB" ratio stacks nodes "mallocprof's largest tables and indexes (MiB)"
for w in clang python sqlite3; do
    workload $w || { printf '%-8s %s\n' $w "skipped: ${ARGV[0]} not installed"; continue; }
    db=$T/$w.db
    env "${WENV[@]}" LD_PRELOAD="$LIB" MP_OUT="$db" "${ARGV[@]}" <"$STDIN" >/dev/null 2>"$T/$w.mp.err" ||
        die "$w failed under mallocprof: $(tail -n 1 "$T/$w.mp.err")"
    env "${WENV[@]}" heaptrack -o "$T/ht/$w" "${ARGV[@]}" <"$STDIN" >/dev/null 2>"$T/$w.ht.err" ||
        die "$w failed under heaptrack: $(tail -n 1 "$T/$w.ht.err")"
    ht=$(ls "$T/ht/$w".* 2>/dev/null | head -n 1)     # .zst (or .gz: an older heaptrack)
    [ -f "$db" ] && [ -n "$ht" ] || die "$w: a file is missing"
    mp_b=$(stat -c %s "$db") ht_b=$(stat -c %s "$ht")
    ratio=$(awk -v a="$mp_b" -v b="$ht_b" 'BEGIN { printf "%.2f", a / b; if (a > 2 * b) printf "!" }')
    counts=$(sqlite3 "$db" "SELECT (SELECT count(DISTINCT stack) FROM sample), (SELECT count(*) FROM stack)") ||
        die "$w: cannot read $db"
    parts=$(sqlite3 -separator ' ' "$db" "SELECT name, round(sum(pgsize) / 1048576.0, 2) FROM dbstat
                                         GROUP BY name ORDER BY sum(pgsize) DESC LIMIT 5" | paste -sd, | sed 's/,/, /g')
    printf '%-8s %9s %9s %6s %8s %8s  %s\n' $w "$(mib "$mp_b")" "$(mib "$ht_b")" "$ratio" \
        "${counts%|*}" "${counts#*|}" "$parts"
    [ -n "${FILESIZE_KEEP:-}" ] && mkdir -p "$FILESIZE_KEEP" && cp "$db" "$ht" "$FILESIZE_KEEP/"
done
exit 0
