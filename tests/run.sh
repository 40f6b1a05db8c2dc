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
for t in $list; do
    log=build/testlogs/$t.log
    mkdir -p "$(dirname "$log")"
    start=$(date +%s.%N)
    # a test's time limit; mpquery/asan runs some 40 tests again under ASan
    limit=300
    [ "$t" = mpquery/asan ] && limit=900
    if [ -f "tests/$t.sh" ] && timeout $limit bash "tests/$t.sh" >"$log" 2>&1; then
        pass=$((pass + 1)); status=ok
    else
        [ -f "tests/$t.sh" ] || echo "no test tests/$t.sh (names: FOLDER/NAME, NAME or FOLDER)" >"$log"
        fail=$((fail + 1)); failed+=("$t"); status=FAIL
    fi
    printf '%-4s %-32s %6.2fs\n' "$status" "$t" "$(echo "$(date +%s.%N) - $start" | bc)"
    grep -e '^#' -e '^SKIP:' "$log" | sed 's/^/     /'
    if [ $status = FAIL ]; then tail -n 25 "$log" | sed 's/^/     | /'; fi
done
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
