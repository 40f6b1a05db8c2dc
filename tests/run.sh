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
# mpquery/asan runs every mpquery/ and rules/ test (but mpquery/scale) under
# ASan/UBSan, two at a time: where the list has it, those tests run there
# only, and each gets its line here from its result.
under_asan=
if printf '%s\n' $list | grep -qx mpquery/asan; then
    under_asan=$(printf '%s\n' $list | grep -e '^mpquery/' -e '^rules/' | grep -v -x -e mpquery/asan -e mpquery/scale)
    [ -n "$under_asan" ] && list=$(printf '%s\n' $list | grep -v -x -F "$under_asan")
    # named alone: all of them
    [ -n "$under_asan" ] || under_asan=$(printf '%s\n' $all | grep -e '^mpquery/' -e '^rules/' | grep -v -x -e mpquery/asan -e mpquery/scale)
    export MP_ASAN_TESTS=$(echo $under_asan)
fi
# the language runtimes the runtimes/* tests profile (Debian packages)
case " $(echo $list) " in *" runtimes/"*) sh tests/lib/runtime_deps.sh ;; esac
# report TEST STATUS SECONDS [SUFFIX]: the test's line, its log's notes
# (# and SKIP: lines), and the end of the log of a failure; counted
report() {
    local t=$1 st=$2 log=build/testlogs/$1.log
    if [ "$st" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$t"); fi
    printf '%-4s %-32s %6.2fs%s\n' "$st" "$t" "$3" "${4:-}"
    [ -f "$log" ] && grep -e '^#' -e '^SKIP:' "$log" | sed 's/^/     /'
    if [ "$st" = FAIL ]; then tail -n 25 "$log" 2>/dev/null | sed 's/^/     | /'; fi
}
# asan_lines: the line of each test mpquery/asan ran (a missing result: a
# failure)
asan_lines() {
    local u st secs
    for u in $under_asan; do
        read -r st secs < <(awk -v t="$u" '$2 == t { print $1, $3 }' "$MP_ASAN_RESULTS" 2>/dev/null)
        [ "$st" = ok ] || st=FAIL
        report "$u" "$st" "${secs:-0}" " (ASan)"
    done
}
for t in $list; do
    log=build/testlogs/$t.log
    mkdir -p "$(dirname "$log")"
    start=$(date +%s.%N)
    # a test's time limit; mpquery/asan runs some 55 tests under ASan
    limit=300
    [ "$t" = mpquery/asan ] && limit=1500
    [ "$t" = mpquery/asan ] && export MP_ASAN_RESULTS=$PWD/build/testlogs/asan.results && rm -f "$MP_ASAN_RESULTS"
    if [ -f "tests/$t.sh" ] && timeout $limit bash "tests/$t.sh" >"$log" 2>&1; then
        status=ok
    else
        [ -f "tests/$t.sh" ] || echo "no test tests/$t.sh (names: FOLDER/NAME, NAME or FOLDER)" >"$log"
        status=FAIL
    fi
    report "$t" $status "$(echo "$(date +%s.%N) - $start" | bc)"
    [ "$t" = mpquery/asan ] && asan_lines
done
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
