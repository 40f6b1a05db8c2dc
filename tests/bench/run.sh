#!/bin/bash
# `make bench`: mallocprof's overhead against the same programs run natively
# and under heaptrack, printed as ONE table of ratios (wall time, max RSS).
#
# Workloads (sources next to this script, built into build/bench/):
#   churn, churn2  C++ map/vector/string churn, 1 and 2 threads (same work each)
#   deep           allocations 200 frames down (MP_DEPTH=256 so stacks are whole)
#   python         PYTHONMALLOC=malloc /usr/bin/python3 json_churn.py
#   sqlite3        the sqlite3 CLI on generated SQL (200k rows, indexes, queries)
#   clang          clang++-14 -std=c++17 -O2 -c tests/progs/runtimes/templates.cc
#                  (template-heavy; if clang++-14 is installed)
#   libreoffice    soffice --headless --convert-to pdf of a generated 640 KB
#                  HTML page (if soffice is installed), each run with its own
#                  new HOME (the LibreOffice profile), so runs are alike
#   manystacks     1,048,576 distinct stacks: flush time, DB size, mpquery speed
#   livemem        2 M live 32-byte blocks: profiler bytes per live allocation
#   threadsN       churn with N = 1, 2, 4, 8 threads (80 rounds shared out):
#                  thread scaling (mt_churn)
# BENCH_ONLY=churn,clang,... runs only those workloads (threads: the thread
# scaling; manystacks, livemem: the memory lines).
# Configurations, run round-robin (one run of each, BENCH_RUNS times), median:
#   native, floor (floor.c: the cheapest counting interposer, a reference),
#   full (every block), fp (MP_UNWIND=fp on -fno-omit-frame-pointer builds),
#   sampled (MP_SAMPLE=524288), stats (MP_ENABLED=0: totals only), tags
#   (MP_STACKS=tags: tag paths, no unwinding), heaptrack (if installed);
#   clang and libreoffice, whose runs are long, skip floor, fp and tags.
# The targets column lists each row's targets (issue 31), a "!" on each
# one missed.
# The cheap modes' ratios are also given without their exit snapshot (the
# flush's own time, printed by the recorder), a cost per process, not per
# allocation: mostly symbolizing.
# The debug-info cache (MP_DEBUGINFO_CACHE, prof/README.md) is the bench's
# own ($T/cache), filled before the first timed run by one `mpquery record`
# of churn, as a user's first record fills theirs: with libc6-dbg installed,
# libc's debug file is then mapped from its uncompressed copy rather than
# inflated by each run (65 ms a process).
# Timing and peak RSS come from timeit.c (fork/exec, wait4's ru_maxrss).
# Everything is written to a temporary directory, removed at exit.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=$ROOT/build
BB=$B/bench
LIB=$B/libmallocprof.so
MPQ=$B/mpquery
RUNS=${BENCH_RUNS:-5}
PYTHON=/usr/bin/python3
SAMPLE=524288
BENCH_START=$(date +%s.%N)
NOTES=()

die() { echo "bench: $*" >&2; exit 1; }
elapsed() { awk -v s="$BENCH_START" -v n="$(date +%s.%N)" 'BEGIN { printf "%.0f", n - s }'; }
# only: whether BENCH_ONLY (a comma-separated list) names the workload
only() { [ -z "${BENCH_ONLY:-}" ] || [[ ,$BENCH_ONLY, == *,$1,* ]]; }

[ -f "$LIB" ] || die "$LIB is missing: run 'make build/libmallocprof.so' first"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS=$RUNS: expected a positive number"
for tool in gcc g++ sqlite3 awk; do
    command -v $tool >/dev/null || die "$tool is not installed"
done
HAVE_HEAPTRACK=0
command -v heaptrack >/dev/null && HAVE_HEAPTRACK=1

T=$(mktemp -d "${TMPDIR:-/tmp}/mpbench.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/res" "$T/log" "$T/db" "$T/ht" "$T/out" "$BB" || die "cannot create directories"
# The bench runs on copies: a rebuild meanwhile does not change what it measures.
cp "$LIB" "$T/libmallocprof.so" || die "cannot copy $LIB"
LIB=$T/libmallocprof.so
if [ -x "$MPQ" ]; then cp "$MPQ" "$T/mpquery" || die "cannot copy $MPQ"; MPQ=$T/mpquery; fi

# ------------------------------------------------------------------ build
# compile OUT COMPILER SRC FLAGS...: rebuilds OUT when SRC or this script is newer.
compile() {
    local out=$1 cc=$2 src=$3; shift 3
    if [ ! -x "$out" ] || [ "$src" -nt "$out" ] || [ "${BASH_SOURCE[0]}" -nt "$out" ]; then
        "$cc" -O2 -g -Wall -Wextra -Werror "$@" -o "$out" "$src" || die "cannot build $out"
    fi
}
compile "$BB/timeit" gcc "$HERE/timeit.c"
compile "$BB/churn" g++ "$HERE/churn.cc" -pthread
compile "$BB/churn-fp" g++ "$HERE/churn.cc" -pthread -fno-omit-frame-pointer
compile "$BB/deep" gcc "$HERE/deep.c"
compile "$BB/deep-fp" gcc "$HERE/deep.c" -fno-omit-frame-pointer
compile "$BB/manystacks" gcc "$HERE/manystacks.c"
compile "$BB/livemem" gcc "$HERE/livemem.c"
compile "$BB/libfloor.so" gcc "$HERE/floor.c" -shared -fPIC -ldl

# The SQL workload: 200k INSERTs in one transaction, two indexes, queries.
awk -v rows=200000 -v queries=1 -f "$HERE/rows_sql.awk" > "$T/bench.sql" || die "cannot generate the SQL workload"

# The LibreOffice workload's page: 6,000 paragraphs with a small table each.
awk 'BEGIN {
    print "<html><body>"
    for (i = 0; i < 6000; i++)
        printf "<p>Paragraph %d with <b>bold</b> and <i>italic</i> text</p><table><tr><td>%d</td><td>x</td></tr></table>\n", i, i
    print "</body></html>"
}' > "$T/doc.html" || die "cannot generate the HTML page"
CLANG=/usr/bin/clang++-14 SOFFICE=/usr/bin/soffice

WORKLOADS=(churn churn2 deep)
if [ -x "$PYTHON" ]; then WORKLOADS+=(python); else NOTES+=("python: $PYTHON not found, skipped"); fi
WORKLOADS+=(sqlite3)
if [ -x "$CLANG" ]; then WORKLOADS+=(clang); else NOTES+=("clang: $CLANG not found (apt-get install clang-14), skipped"); fi
# LibreOffice makes its user profile at its first start: once here (a
# small page, natively); each run then starts from a copy of it.
if [ -x "$SOFFICE" ] && only libreoffice; then
    echo '<html><body><p>x</p></body></html>' > "$T/first.html"
    HOME=$T/lohome.first "$SOFFICE" --headless --convert-to pdf --outdir "$T/out" "$T/first.html" >/dev/null 2>&1 ||
        die "soffice failed on a small page"
fi
if [ -x "$SOFFICE" ]; then WORKLOADS+=(libreoffice)
else NOTES+=("libreoffice: $SOFFICE not found (apt-get install libreoffice-writer-nogui), skipped"); fi
if [ -n "${BENCH_ONLY:-}" ]; then
    for w in ${BENCH_ONLY//,/ }; do
        case " ${WORKLOADS[*]} threads manystacks livemem " in *" $w "*) ;; *) die "BENCH_ONLY: no workload '$w'" ;; esac
    done
    kept=()
    for w in "${WORKLOADS[@]}"; do only "$w" && kept+=("$w"); done
    WORKLOADS=("${kept[@]}")
fi
CONFIGS=(native floor full fpnative fp sampled stats tags)
[ $HAVE_HEAPTRACK = 1 ] && CONFIGS+=(heaptrack)

# ------------------------------------------------------------------ running
# workload W CONFIG: sets ARGV (the program), WENV (its environment, in every
# configuration), PENV (extra MP_* settings: the workload's, then
# BENCH_ENV's, e.g. BENCH_ENV="MP_MMAP=0" or "MP_COLD=1 MP_INTERVAL=1" to
# measure a setting's cost) and STDIN. The fp configurations use the
# frame-pointer builds where there are some.
workload() {
    local fp=
    case $2 in fpnative | fp) fp=-fp ;; esac
    WENV=() PENV=() STDIN=/dev/null
    case $1 in
    churn)      ARGV=("$BB/churn$fp" 1) ;;
    churn2)     ARGV=("$BB/churn$fp" 2) ;;
    threads[1248]) ARGV=("$BB/churn" "${1#threads}" $((80 / ${1#threads}))) ;;
    deep)       ARGV=("$BB/deep$fp"); PENV=(MP_DEPTH=256) ;;
    python)     ARGV=("$PYTHON" "$HERE/json_churn.py"); WENV=(PYTHONMALLOC=malloc) ;;
    sqlite3)    ARGV=(sqlite3 :memory:); STDIN=$T/bench.sql ;;
    clang)      ARGV=("$CLANG" -std=c++17 -O2 -c "$ROOT/tests/progs/runtimes/templates.cc" -o "$T/out/templates.o") ;;
    libreoffice) rm -rf "$T/lohome" "$T/out/doc.pdf"; cp -a "$T/lohome.first" "$T/lohome"
                ARGV=("$SOFFICE" --headless --convert-to pdf --outdir "$T/out" "$T/doc.html"); WENV=(HOME="$T/lohome") ;;
    manystacks) ARGV=("$BB/manystacks") ;;
    livemem)    ARGV=("$BB/livemem") ;;
    esac
    read -ra extra <<< "${BENCH_ENV:-}"
    PENV+=("${extra[@]}")
}

# run W CONFIG [DB]: one timed run; appends "WALL RSS_KB WALL_WITHOUT_FLUSH"
# to res/W.CONFIG, and for full runs "FLUSH_S STACKS DB_BYTES" to res/W.flush.
run() {
    local w=$1 c=$2 db=${3:-$T/db/$1.$2.db} prof=()
    local log=$T/log/$w.$c out=$T/out/$w.$c
    workload "$w" "$c"
    case $c in
    full)    prof=(LD_PRELOAD="$LIB" MP_OUT="$db" "${PENV[@]}") ;;
    fp)      prof=(LD_PRELOAD="$LIB" MP_OUT="$db" MP_UNWIND=fp "${PENV[@]}") ;;
    sampled) prof=(LD_PRELOAD="$LIB" MP_OUT="$db" MP_SAMPLE="$SAMPLE" "${PENV[@]}") ;;
    stats)   prof=(LD_PRELOAD="$LIB" MP_OUT="$db" MP_ENABLED=0 "${PENV[@]}") ;;
    tags)    prof=(LD_PRELOAD="$LIB" MP_OUT="$db" MP_STACKS=tags "${PENV[@]}") ;;
    floor)   prof=(LD_PRELOAD="$BB/libfloor.so") ;;
    esac
    rm -f "$db" "$T/ht/$w".*
    if [ "$c" = heaptrack ]; then
        "$BB/timeit" "$T/res/last" env "${WENV[@]}" heaptrack -o "$T/ht/$w" "${ARGV[@]}" \
            <"$STDIN" >"$out" 2>"$log"
    else
        "$BB/timeit" "$T/res/last" env "${WENV[@]}" "${prof[@]}" "${ARGV[@]}" \
            <"$STDIN" >"$out" 2>"$log"
    fi
    local status=$?
    [ -n "${BENCH_VERBOSE:-}" ] && echo "bench: $w $c: $(cat "$T/res/last")" >&2
    if [ $status != 0 ]; then
        # A broken workload stops the bench; a failing profiler configuration
        # is reported in the table and not run again.
        [ "$c" = native ] && { tail -n 5 "$log" >&2; die "$w failed natively (status $status): ${ARGV[*]}"; }
        local how="exit status $status"
        [ "$status" -gt 128 ] && how="killed by signal $((status - 128))"
        echo "$w ($c): $how; stderr: $(grep -v '^mallocprof: info' "$log" | tail -n 1)" >>"$T/failures"
        touch "$T/res/$w.$c.failed"
        return 1
    fi
    local wall rss
    read -r wall rss _ <"$T/res/last"
    # The program must print what it prints natively (heaptrack adds its own lines).
    if [ "$c" = native ]; then
        [ -f "$T/out/$w.ref" ] || cp "$out" "$T/out/$w.ref"
    elif [ "$c" != heaptrack ] && [ "$c" != fpnative ] && ! cmp -s "$out" "$T/out/$w.ref"; then
        echo "$w ($c): output differs from the native run" >>"$T/mismatch"
    fi
    grep -E '^mallocprof: (warning|error)' "$log" | head -n 1 | sed "s/^/$w ($c): /" >>"$T/warnings"
    if [ ${#prof[@]} = 0 ] || [ "$c" = floor ]; then
        echo "$wall $rss $wall" >>"$T/res/$w.$c"
        return 0
    fi
    # "mallocprof: info: wrote PATH: N stacks, R rows, exit snapshot, ..., T s (C s of CPU)"
    # (a run of several processes: the one of the most stacks)
    local line flush stacks cpu
    line=$(grep 'mallocprof: info: wrote .* exit snapshot' "$log" | sed -E 's/.*: ([0-9]+) stacks,.*/\1 &/' |
           sort -n -k1,1 | tail -n 1 | cut -d' ' -f2-)
    [ -n "$line" ] || die "$w ($c): no 'wrote ... exit snapshot' line on stderr"
    flush=$(sed -E 's/.*, ([0-9.]+) s \(([0-9.]+) s of CPU\)$/\1/' <<<"$line")
    cpu=$(sed -E 's/.*, ([0-9.]+) s \(([0-9.]+) s of CPU\)$/\2/' <<<"$line")
    stacks=$(sed -E 's/.*: ([0-9]+) stacks,.*/\1/' <<<"$line")
    [ "$c" = full ] && echo "$flush $stacks $(stat -c %s "$db") $cpu" >>"$T/res/$w.flush"
    echo "$wall $rss $(awk -v w="$wall" -v f="$flush" 'BEGIN { printf "%.4f", w - f }')" >>"$T/res/$w.$c"
    return 0
}

# median FILE COLUMN: the median of one column of a results file.
median() {
    cut -d' ' -f"$2" "$1" | sort -g | awk '{ v[NR] = $1 }
        END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
              else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio W CONFIG BASE COLUMN: median(W.CONFIG) / median(W.BASE).
ratio() {
    [ -f "$T/res/$1.$2.failed" ] && { echo FAIL; return; }
    [ -s "$T/res/$1.$2" ] || { echo nan; return; }
    awk -v a="$(median "$T/res/$1.$2" "$4")" -v b="$(median "$T/res/$1.$3" "$4")" \
        'BEGIN { if (b > 0) printf "%.3f", a / b; else print "nan" }'
}

# The fp configurations compare the frame-pointer build with itself natively;
# python and sqlite3 have no such build (MP_UNWIND=fp falls back to libunwind).
configs_of() {
    case $1 in
    python | sqlite3) printf '%s\n' "${CONFIGS[@]}" | grep -vx fpnative ;;
    clang | libreoffice) printf '%s\n' "${CONFIGS[@]}" | grep -vxE 'floor|fpnative|fp|tags' ;;
    *) printf '%s\n' "${CONFIGS[@]}" ;;
    esac
}
fp_base() { case $1 in python | sqlite3) echo native ;; *) echo fpnative ;; esac; }

export XDG_CACHE_HOME=$T/cache
if [ -x "$MPQ" ]; then
    "$MPQ" record -q -o "$T/db/warm.db" --sample "$SAMPLE" -- "$BB/churn" 1 >/dev/null ||
        die "mpquery record of churn failed"
else
    NOTES+=("debug-info cache: $MPQ not built, so not filled (each run inflates compressed debug files)")
fi
for ((i = 1; i <= RUNS; i++)); do
    for w in "${WORKLOADS[@]}"; do
        for c in $(configs_of "$w"); do
            [ -f "$T/res/$w.$c.failed" ] || run "$w" "$c"
        done
    done
    if only livemem; then run livemem native; run livemem full; fi
    echo "bench: round $i/$RUNS done ($(elapsed) s)" >&2
done

# Thread scaling: the same 80 rounds of churn shared out among 1..8 threads
# (8 oversubscribe 2 cores); each ratio is against native with as many threads.
SCALE_THREADS=(1 2 4 8)
SCALE_CONFIGS=(native full sampled stats)
only threads || SCALE_THREADS=()
for ((i = 1; i <= RUNS; i++)); do
    for n in "${SCALE_THREADS[@]}"; do
        for c in "${SCALE_CONFIGS[@]}"; do
            [ -f "$T/res/threads$n.$c.failed" ] || run "threads$n" "$c"
        done
    done
done
echo "bench: thread scaling done ($(elapsed) s)" >&2

# Calls counted by mallocprof and by heaptrack for churn (the files of the
# last round are still there).
CALLS_MP=$(sqlite3 "$T/db/churn.full.db" 'SELECT ncalls FROM process_totals' 2>/dev/null)
CALLS_HT=-
if [ $HAVE_HEAPTRACK = 1 ]; then
    CALLS_HT=$(heaptrack_print "$T/ht/churn".* 2>/dev/null |
               sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p')
fi
LIVEMEM_PM=$(sqlite3 "$T/db/livemem.full.db" 'SELECT max(profiler_memory) FROM snapshot' 2>/dev/null)

# ------------------------------------------------------------------ scale
# manystacks: native runs, then two profiled runs (two databases for diff).
if only manystacks; then
    for ((i = 1; i <= RUNS; i++)); do run manystacks native; done
    run manystacks full "$T/db/many1.db"
    run manystacks full "$T/db/many2.db"
fi
MANY_PM=$(sqlite3 "$T/db/many1.db" 'SELECT max(profiler_memory) FROM snapshot' 2>/dev/null)

# mpq NAME ARGS...: times `mpquery ARGS` (3 runs, or 1 if it takes over 10 s).
mpq() {
    local name=$1; shift
    for ((k = 1; k <= 3; k++)); do
        "$BB/timeit" "$T/res/last" timeout 120 "$MPQ" "$@" >/dev/null 2>"$T/log/mpq.$name"
        local status=$?
        if [ $status != 0 ]; then
            echo "$name failed (status $status: $(head -c 200 "$T/log/mpq.$name"))"
            return
        fi
        cut -d' ' -f1,2 "$T/res/last" >>"$T/res/mpq.$name"
        [ "$(cut -d' ' -f1 "$T/res/last" | cut -d. -f1)" -ge 10 ] && break
    done
    echo "$name $(median "$T/res/mpq.$name" 1)"
}
if [ -x "$MPQ" ] && only manystacks; then
    MPQ_TIMES=$(mpq top top "$T/db/many1.db"; mpq fold fold "$T/db/many1.db";
                mpq diff diff "$T/db/many1.db" "$T/db/many2.db")
else
    MPQ_TIMES=
fi

# ------------------------------------------------------------------ report
# cell VALUE TARGET FORMAT: "2.31" with a "!" when VALUE exceeds TARGET (if
# any); "-" when there is no value, "FAIL" when the configuration failed.
cell() {
    awk -v v="$1" -v t="${2:-}" -v fmt="${3:-%.2f}" 'BEGIN {
        if (v == "FAIL") { printf "FAIL"; exit }
        if (v == "nan" || v == "") { printf "-"; exit }
        printf fmt, v; if (t != "" && v + 0 > t + 0) printf "!" }'
}
mb() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

# Targets (issue 31): full time; the cheap modes' time; full below half of
# heaptrack's ratio.
full_target() { case $1 in churn | churn2) echo 3 ;; python | sqlite3 | clang | libreoffice) echo 2 ;; esac; }
cheap_target() { case $1 in churn | churn2) echo 1.15 ;; python | sqlite3 | clang | libreoffice) echo 1.05 ;; esac; }
# over VALUE LIMIT: whether VALUE (a ratio) misses LIMIT (FAIL misses all).
over() { awk -v v="$1" -v t="$2" 'BEGIN { exit !(v == "FAIL" || (v != "nan" && v != "" && t != "" && v + 0 > t + 0)) }'; }
# target NAME MISSED: "NAME", with "!" when missed.
target() { if [ "$2" = 1 ]; then printf '%s!' "$1"; else printf '%s' "$1"; fi; }

# cheap W CONFIG: "1.31 (1.22)": the ratio, and without the exit snapshot.
cheap() {
    local r t=$(cheap_target "$1")
    r=$(ratio "$1" "$2" native 1)
    [ "$r" = FAIL ] || [ "$r" = nan ] && { cell "$r"; return; }
    printf '%s (%s)' "$(cell "$r")" "$(cell "$(ratio_nf "$1" "$2")" "$t")"
}
# ratio_nf W CONFIG: median wall without the exit snapshot / native wall.
ratio_nf() {
    awk -v a="$(median "$T/res/$1.$2" 3)" -v b="$(median "$T/res/$1.native" 1)" \
        'BEGIN { if (b > 0) printf "%.3f", a / b; else print "nan" }'
}

row_fmt='%-11s %6s %6s  %6s  %6s  %6s  %13s  %13s  %13s  %9s  %s\n'
echo
echo "mallocprof bench: median of $RUNS interleaved runs; wall time ratios to native; ! = target missed;"
echo "cheap modes: ratio (ratio without the exit snapshot, which the target applies to)"
printf "$row_fmt" workload native "" floor full fp sampled stats tags heaptrack targets
printf "$row_fmt" "" s MB "" "" "" "" "MP_ENABLED=0" "MP_STACKS=tags" "" ""
for w in "${WORKLOADS[@]}" $(only manystacks && echo manystacks) $(only livemem && echo livemem); do
    ft=$(full_target "$w") ct=$(cheap_target "$w") targets=()
    full=$(ratio "$w" full native 1)
    ht=$(ratio "$w" heaptrack native 1)
    half_ht=$(awk -v h="$ht" 'BEGIN { if (h != "nan" && h != "FAIL") print h / 2 }')
    [ -n "$ft" ] && targets+=("$(target "full<=$ft" "$(over "$full" "$ft" && echo 1)")")
    [ -n "$half_ht" ] && targets+=("$(target "full<=ht/2" "$(over "$full" "$half_ht" && echo 1)")")
    if [ -n "$ct" ]; then
        missed=
        for c in sampled stats tags; do
            r=$(ratio "$w" "$c" native 1)
            [ "$r" = FAIL ] || [ "$r" = nan ] || r=$(ratio_nf "$w" "$c")
            over "$r" "$ct" && missed=1
        done
        targets+=("$(target "cheap<=$ct" "$missed")")
    fi
    full_cell=$(cell "$full" "$ft")
    [ -n "$half_ht" ] && awk -v f="$full" -v h="$half_ht" 'BEGIN { exit !(f > h) }' &&
        [[ $full_cell != *! ]] && full_cell="$full_cell!"
    fpb=$(fp_base "$w")
    if [ -n "$ct" ]; then
        printf "$row_fmt" "$w" \
            "$(cell "$(median "$T/res/$w.native" 1)")" "$(mb "$(median "$T/res/$w.native" 2)")" \
            "$(cell "$(ratio "$w" floor native 1)")" "$full_cell" "$(cell "$(ratio "$w" fp "$fpb" 1)")" \
            "$(cheap "$w" sampled)" "$(cheap "$w" stats)" "$(cheap "$w" tags)" "$(cell "$ht")" "${targets[*]}"
    else
        printf "$row_fmt" "$w" \
            "$(cell "$(median "$T/res/$w.native" 1)")" "$(mb "$(median "$T/res/$w.native" 2)")" \
            - "$full_cell" - - - - - ""
    fi
done

# Memory and the flush of full capture.
echo
# The exit flush's target (issue 31): clang's <= 0.3 s.
row2='%-11s %8s %8s %8s %9s  %7s %9s %8s %7s\n'
printf "$row2" workload "native" "full" "sampled" heaptrack flush "flush CPU" stacks db
printf "$row2" "" "RSS MB" "RSS" "RSS" "RSS" s s "" MB
for w in "${WORKLOADS[@]}" $(only manystacks && echo manystacks) $(only livemem && echo livemem); do
    flush=- fcpu=- stacks=- db=-
    if [ -s "$T/res/$w.flush" ]; then
        flush=$(cell "$(median "$T/res/$w.flush" 1)" "$(case $w in manystacks) echo 5 ;; clang) echo 0.3 ;; esac)")
        fcpu=$(cell "$(median "$T/res/$w.flush" 4)" "$([ "$w" = clang ] && echo 0.3)" %.3f)
        stacks=$(tail -n 1 "$T/res/$w.flush" | cut -d' ' -f2)
        db=$(awk -v b="$(tail -n 1 "$T/res/$w.flush" | cut -d' ' -f3)" 'BEGIN { printf "%.1f", b / 1048576 }')
    fi
    printf "$row2" "$w" "$(mb "$(median "$T/res/$w.native" 2)")" \
        "$(cell "$(ratio "$w" full native 2)" "" %.1f)" "$(cell "$(ratio "$w" sampled native 2)" "" %.1f)" \
        "$(cell "$(ratio "$w" heaptrack native 2)" "" %.1f)" "$flush" "$fcpu" "$stacks" "$db"
done

# Thread scaling (mt_churn): full capture at 2, 4, 8 threads no more than
# 0.1 above its ratio at 1 thread; the cheap modes within 1.15 of native.
if [ ${#SCALE_THREADS[@]} -gt 0 ]; then
    echo
    echo "thread scaling (mt_churn): churn, 80 rounds shared by N threads; ratio to native with N threads"
    printf '%-8s %8s %7s %8s %7s  %s\n' threads "native s" full sampled stats targets
    one=$(ratio threads1 full native 1)
    full_limit=$(awk -v o="$one" 'BEGIN { if (o != "nan" && o != "FAIL") printf "%.3f", o + 0.1 }')
    for n in "${SCALE_THREADS[@]}"; do
        row=() targets=() missed=
        r=$(ratio "threads$n" full native 1)
        lim=; [ "$n" != 1 ] && lim=$full_limit
        row+=("$(cell "$r" "$lim")")
        [ "$n" != 1 ] && targets+=("$(target "full<=1thread+0.1" "$(over "$r" "$full_limit" && echo 1)")")
        for c in sampled stats; do
            r=$(ratio "threads$n" "$c" native 1)
            row+=("$(cell "$r" 1.15)")
            over "$r" 1.15 && missed=1
        done
        targets+=("$(target "cheap<=1.15" "$missed")")
        printf '%-8s %8s %7s %8s %7s  %s\n' "$n" "$(cell "$(median "$T/res/threads$n.native" 1)")" "${row[@]}" "${targets[*]}"
    done
fi

# Memory: profiler bytes per live allocation and per distinct stack.
per() { awk -v p="$1" -v n="$2" -v c="$3" 'BEGIN { if (p == "nan" || n == "nan") print "nan"; else printf "%.0f", (p - n) * 1024 / c }'; }
if only livemem && only manystacks; then
LIVE_B=$(per "$(median "$T/res/livemem.full" 2)" "$(median "$T/res/livemem.native" 2)" 2000000)
STACK_B=$(per "$(median "$T/res/manystacks.full" 2)" "$(median "$T/res/manystacks.native" 2)" 1048576)
echo
printf 'memory: %s B per live allocation (target <= 24; profiler_memory %s B/alloc), %s B per stack (target <= 286; profiler_memory %s B/stack)\n' \
    "$(cell "$LIVE_B" 24 %s)" "$(awk -v m="$LIVEMEM_PM" 'BEGIN { printf "%.1f", m / 2000000 }')" \
    "$(cell "$STACK_B" 286 %s)" "$(awk -v m="$MANY_PM" 'BEGIN { printf "%.0f", m / 1048576 }')"
fi
if only manystacks; then
printf 'manystacks: flush %s s (two runs, CPU %s s; target <= 5 s), db %s MB' \
    "$(cut -d' ' -f1 "$T/res/manystacks.flush" | paste -sd/)" "$(cut -d' ' -f4 "$T/res/manystacks.flush" | paste -sd/)" \
    "$(awk -v b="$(tail -n 1 "$T/res/manystacks.flush" | cut -d' ' -f3)" 'BEGIN { printf "%.0f", b / 1048576 }')"
fi
if ! only manystacks; then
    :
elif [ -x "$MPQ" ]; then
    printf '; mpquery'
    while read -r name secs rest; do
        case $secs in
        failed) printf ' %s %s %s' "$name" "$secs" "$rest" ;;
        *) case $name in top | fold) t=2 ;; diff) t=4 ;; esac
           printf ' %s %s s (<= %s)' "$name" "$(cell "$secs" "$t")" "$t" ;;
        esac
    done <<<"$MPQ_TIMES"
    echo
else
    echo "; mpquery not built ($MPQ): top/fold/diff not timed"
fi
only churn && echo "churn allocation calls: mallocprof $CALLS_MP, heaptrack $CALLS_HT"
echo "notes: fp = MP_UNWIND=fp on -fno-omit-frame-pointer builds vs the same build natively (python, sqlite3: libunwind fallback);" \
     "sampled = MP_SAMPLE=$SAMPLE; flush/stacks/db from the full runs"
if [ $HAVE_HEAPTRACK = 1 ]; then
    echo "       heaptrack = wall of the whole 'heaptrack -o FILE' command (record + interpret + compress, no analysis);" \
         "its RSS = its largest process (the program or heaptrack_interpret)"
else
    echo "       heaptrack not installed: its columns are empty"
fi
[ -s "$T/failures" ] && { echo "FAILED RUNS:"; cat "$T/failures"; }
[ -s "$T/mismatch" ] && { echo "OUTPUT MISMATCH:"; sort -u "$T/mismatch"; }
[ -s "$T/warnings" ] && { echo "recorder warnings:"; sort -u "$T/warnings" | head -n 5; }
[ ${#NOTES[@]} -gt 0 ] && printf '%s\n' "${NOTES[@]}"
[ -n "${BENCH_ENV:-}" ] && echo "every profiled run with BENCH_ENV: $BENCH_ENV"
echo "bench: $(elapsed) s in all (BENCH_RUNS=$RUNS, load average $(cut -d' ' -f1-3 /proc/loadavg))"
[ ! -s "$T/failures" ] && [ ! -s "$T/mismatch" ]
