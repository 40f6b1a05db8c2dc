#!/bin/bash
# Runs the tests, one script per behaviour (exit 0 = pass), found by folder:
# tests/{recorder,mpquery,rules,runtimes,unit,package}/*.sh, and ends with one
# line "N passed, M failed". Names (arguments, or TESTS="name1 name2") pick a
# subset: FOLDER/NAME, NAME (in every folder that has it) or FOLDER (a path
# tests/FOLDER/NAME.sh too).
#
# The tests run in lanes, one per core (at most 4; TEST_LANES=N to choose):
# each has a scratch directory, servers and ports of its own. A script with
# a line "# run: alone" runs with no other test beside it (first); one
# with "# run: waits" (mostly sleeps and timeouts) in a lane of waiting
# tests beside those. Longest first, by tests/lib/times and the last run's
# build/testlogs/times; each line has the test's wall and CPU seconds.
# mpquery/asan builds mpquery with ASan/UBSan; where the list has it, the
# mpquery/ and rules/ tests (but mpquery/scale) run with that build only,
# once, each with its line marked (ASan).
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0 failed=() times=() suite_start=$(date +%s)
DIRS="recorder mpquery rules runtimes unit package"
all=$(for d in $DIRS; do ls tests/$d/*.sh; done | sed -e 's|^tests/||' -e 's/\.sh$//')
# run_resolve NAME: the tests NAME picks (itself when none: it fails below)
run_resolve() {
    local hits
    hits=$(printf '%s\n' $all | grep -x -e "$1" -e "[^/]*/$1" -e "$1/[^/]*")
    printf '%s\n' "${hits:-$1}"
}
names=${*:-${TESTS:-}}
if [ -n "$names" ]; then
    list=$(for n in $names; do n=${n#tests/}; run_resolve "${n%.sh}"; done)
else
    list=$all
fi
under_asan=
if printf '%s\n' $list | grep -qx mpquery/asan; then
    under_asan=$(printf '%s\n' $list | grep -e '^mpquery/' -e '^rules/' | grep -v -x -e mpquery/asan -e mpquery/scale)
    [ -n "$under_asan" ] && list=$(printf '%s\n' $list | grep -v -x -F "$under_asan")
    # named alone: all of them
    [ -n "$under_asan" ] || under_asan=$(printf '%s\n' $all | grep -e '^mpquery/' -e '^rules/' | grep -v -x -e mpquery/asan -e mpquery/scale)
fi
# the language runtimes the runtimes/* tests profile (Debian packages)
case " $(echo $list) " in *" runtimes/"*) sh tests/lib/runtime_deps.sh ;; esac
lanes=${TEST_LANES:-$(nproc 2>/dev/null || echo 1)}
[ "$lanes" -gt 4 ] && lanes=4
[ "$lanes" -ge 1 ] 2>/dev/null || lanes=1
# report TEST STATUS SECONDS CPU [SUFFIX]: the test's line, its log's notes
# (# and SKIP: lines), and the end of the log of a failure; counted
report() {
    local t=$1 st=$2 log=build/testlogs/$1.log
    if [ "$st" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$t"); fi
    printf '%-4s %-32s %6.2fs  cpu %6.2fs%s\n' "$st" "$t" "$3" "$4" "${5:-}"
    times+=("$3 $4 $t${5:-}")
    [ -f "$log" ] && grep -e '^#' -e '^SKIP:' "$log" | sed 's/^/     /'
    if [ "$st" = FAIL ]; then tail -n 25 "$log" 2>/dev/null | sed 's/^/     | /'; fi
}
# start JOB: runs a job ("TEST" or "asan:TEST") in the background; its
# status and seconds go to build/testlogs/TEST.status
declare -A pids=()
start() {
    local job=$1 t=${1#asan:} limit=300
    local log=build/testlogs/$t.log
    mkdir -p "$(dirname "$log")"; rm -f "build/testlogs/$t.status"
    [ "$t" = mpquery/asan ] && limit=900
    [ "$job" != "$t" ] && limit=600       # under ASan: slower
    (
        [ "$job" != "$t" ] && export MPQUERY=$PWD/build/asan/mpquery \
            ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99 \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99
        s=$(date +%s.%N) st=FAIL
        if [ -f "tests/$t.sh" ]; then
            timeout $limit bash "tests/$t.sh" >"$log" 2>&1 && st=ok
        else
            echo "no test tests/$t.sh (names: FOLDER/NAME, NAME or FOLDER)" >"$log"
        fi
        # wall seconds, and the CPU seconds of the test's processes (user
        # and system, the children times reports): a loaded machine
        # stretches the first, hardly the second
        times >"build/testlogs/$t.times"    # (no pipe: a subshell's children are its own)
        echo "$st $(echo "$(date +%s.%N) - $s" | bc) $(awk 'END { print cpu_s($1) + cpu_s($2) }
            function cpu_s(x) { split(x, a, /[ms]/); return a[1] * 60 + a[2] }' "build/testlogs/$t.times")" >"build/testlogs/$t.status"
        rm -f "build/testlogs/$t.times"
    ) &
    pids[$!]=$job
}
# finish: waits for one running job and reports it; its seconds go to
# last[JOB] (build/testlogs/times: the order of the next run)
finish() {
    local pid job st secs cpu
    wait -n -p pid "${!pids[@]}"
    job=${pids[$pid]}; unset "pids[$pid]"
    read -r st secs cpu <"build/testlogs/${job#asan:}.status" 2>/dev/null || st=FAIL
    [ "$job" = mpquery/asan ] && asan_built=$st
    last[$job]=${secs:-0}
    if [ "$job" = "${job#asan:}" ]; then report "$job" "${st:-FAIL}" "${secs:-0}" "${cpu:-0}"
    else report "${job#asan:}" "${st:-FAIL}" "${secs:-0}" "${cpu:-0}" " (ASan)"; fi
}
# The jobs, longest first by the seconds each took last (tests/lib/times,
# "SECONDS JOB" a line, as measured in a whole run on 2 cores; a run's own
# in build/testlogs/times replace them; a new test counts 60 s): the long
# ones start early, and the lanes end together. mpquery/asan first: the
# ASan jobs ("asan:TEST") start once it has built. A script with a line
# "# run: waits" (it spends most of its time waiting: sleeps, timeouts, a
# process it attaches to) runs in a lane of its own kind, up to as many
# as the others beside them: it leaves the cores to the rest.
declare -A last=()
for f in tests/lib/times build/testlogs/times; do
    [ -f $f ] && while read -r secs job; do last[$job]=$secs; done <$f
done
marked() { for t in $list; do grep -qx "# run: $1" "tests/$t.sh" 2>/dev/null && echo "$t"; done; }
alone=$(marked alone) waits=$(marked waits)
queue=()
printf '%s\n' $list | grep -qx mpquery/asan && queue+=(mpquery/asan)
queue+=($(for job in $list ${under_asan:+$(printf 'asan:%s\n' $under_asan)}; do
    [ "$job" = mpquery/asan ] || printf '%s\n' $alone | grep -qx -- "$job" || echo "${last[$job]:-60} $job"
done | sort -s -k1,1 -rn | cut -d' ' -f2))
asan_built=
for t in $alone; do start "$t"; finish; done
# waiting JOB: its script waits more than it computes ("# run: waits")
waiting() { printf '%s\n' $waits | grep -qx -- "${1#asan:}"; }
# next: the first job of the queue that can start (a lane of its kind
# free; an ASan job once mpquery/asan has built), taken out of it; none: empty
next() {
    local i job n_wait=0 n_cpu
    for job in "${pids[@]}"; do waiting "$job" && n_wait=$((n_wait + 1)); done
    n_cpu=$((${#pids[@]} - n_wait))
    next=
    for i in "${!queue[@]}"; do
        job=${queue[$i]}
        if waiting "$job"; then [ $n_wait -lt "$lanes" ] || continue
        else [ $n_cpu -lt "$lanes" ] || continue; fi
        if [ "${job#asan:}" != "$job" ] && [ "$asan_built" != ok ]; then
            [ -z "$asan_built" ] && continue
            unset "queue[$i]"; report "${job#asan:}" FAIL 0 0 " (ASan: mpquery/asan failed)"; continue
        fi
        unset "queue[$i]"; next=$job; return
    done
}
while [ ${#queue[@]} -gt 0 ]; do
    next
    if [ -n "$next" ]; then start "$next"
    elif [ ${#pids[@]} -gt 0 ]; then finish      # every lane busy, or the ASan jobs wait for the build
    fi
done
while [ ${#pids[@]} -gt 0 ]; do finish; done
for job in "${!last[@]}"; do echo "${last[$job]} $job"; done | sort -k2 >build/testlogs/times
if [ ${#times[@]} -gt 10 ]; then
    echo "the ten slowest (seconds; the CPU seconds of its processes beside), of $(printf '%s\n' "${times[@]}" | awk '{ s += $1; c += $2 } END { printf "%.0f s (%.0f s of CPU)", s, c }') of tests in $(( $(date +%s) - suite_start )) s on $lanes lanes:"
    printf '%s\n' "${times[@]}" | sort -rn | head -n 10 | awk '{ printf "  %8.2f  cpu %7.2f  %s\n", $1, $2, substr($0, index($0, $3)) }'
fi
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
