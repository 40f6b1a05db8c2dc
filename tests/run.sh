#!/bin/bash
# Runs every tests/*.sh (each one a behaviour, exit 0 = pass) and ends with
# one line "N passed, M failed". TESTS="name1 name2" runs a subset.
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0 failed=()
list=${TESTS:-$(ls tests/*.sh | grep -v -e '/lib.sh$' -e '/run.sh$' -e '/deps.sh$' -e '/runtime_lib.sh$' -e '/runtime_deps.sh$' -e '/clickhouse.sh$' | xargs -n1 basename | sed 's/\.sh$//')}
# the language runtimes the runtime_* tests profile (Debian packages)
case " $(echo $list) " in *" runtime_"*) sh tests/runtime_deps.sh ;; esac
for t in $list; do
    log=build/testlogs/$t.log
    mkdir -p build/testlogs
    start=$(date +%s.%N)
    # a test's time limit; mpquery_asan runs some 30 tests again under ASan
    limit=300
    [ "$t" = mpquery_asan ] && limit=900
    if timeout $limit bash "tests/$t.sh" >"$log" 2>&1; then
        pass=$((pass + 1)); status=ok
    else
        fail=$((fail + 1)); failed+=("$t"); status=FAIL
    fi
    printf '%-4s %-32s %6.2fs\n' "$status" "$t" "$(echo "$(date +%s.%N) - $start" | bc)"
    grep -e '^#' -e '^SKIP:' "$log" | sed 's/^/     /'
    if [ $status = FAIL ]; then tail -n 25 "$log" | sed 's/^/     | /'; fi
done
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
