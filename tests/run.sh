#!/bin/bash
# Runs the tests, one script per behaviour (exit 0 = pass), found by folder:
# tests/{recorder,mpquery,rules,runtimes,unit,package}/*.sh, and ends with one
# line "N passed, M failed". Names (arguments, or TESTS="name1 name2") pick a
# subset: FOLDER/NAME, NAME (in every folder that has it) or FOLDER (a path
# tests/FOLDER/NAME.sh too).
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0 failed=()
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
# the language runtimes the runtimes/* tests profile (Debian packages)
case " $(echo $list) " in *" runtimes/"*) sh tests/lib/runtime_deps.sh ;; esac
# run_one TEST: runs it with its time limit into its log; prints "ok"/"FAIL"
# and the seconds it took.
run_one() {
    local t=$1 log=build/testlogs/$1.log start limit=300 status=FAIL
    mkdir -p "$(dirname "$log")"
    start=$(date +%s.%N)
    # mpquery/asan runs some 40 tests again under ASan
    [ "$t" = mpquery/asan ] && limit=1800
    if [ -f "tests/$t.sh" ]; then
        timeout $limit bash "tests/$t.sh" >"$log" 2>&1 && status=ok
    else
        echo "no test tests/$t.sh (names: FOLDER/NAME, NAME or FOLDER)" >"$log"
    fi
    echo "$status $(echo "$(date +%s.%N) - $start" | bc)"
}
# report TEST "STATUS SECONDS": one line, the log's notes, a failure's tail.
report() {
    local t=$1 status=${2%% *} secs=${2#* } log=build/testlogs/$1.log
    if [ "$status" = ok ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); failed+=("$t")
    fi
    printf '%-4s %-32s %6.2fs\n' "$status" "$t" "$secs"
    grep -e '^#' -e '^SKIP:' "$log" | sed 's/^/     /'
    if [ "$status" = FAIL ]; then tail -n 25 "$log" | sed 's/^/     | /'; fi
}
# With two cores or more, the longest test (mpquery/asan: mpquery's tests
# again under ASan, about a third of the suite's time, one core's work) runs
# beside the others rather than after them; its line comes last.
aside=
if [ "$(nproc)" -ge 2 ] && printf '%s\n' $list | grep -qx mpquery/asan && [ "$(echo $list | wc -w)" -gt 1 ]; then
    aside=mpquery/asan
    mkdir -p build/testlogs
    ASAN_LANES=1 run_one $aside >build/testlogs/aside.status &
    aside_pid=$!
fi
for t in $list; do
    [ "$t" = "$aside" ] && continue
    report "$t" "$(run_one "$t")"
done
if [ -n "$aside" ]; then
    wait $aside_pid
    report $aside "$(cat build/testlogs/aside.status)"
fi
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
