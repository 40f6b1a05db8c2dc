# mpquery check on real programs (issue 40), for tests/runtimes/check_real.sh
# (python3, sqlite3) and check_clang.sh (clang, whose runs are long): python3 (json, pymalloc),
# sqlite3 (50,000 rows, indexes) and clang++-14 -O2 on a template file,
# in full capture and sampled (--sample 16K, written as users do).
# Identical runs are not identical (ASLR moves what hash tables hash, hash
# seeds, timing): before the floors, two clang runs failed 694 of 69,049
# stacks, python's 3 at the peak, and with --sample 64K read as 64 bytes
# most sampled ones. Here:
# - CHECK_PAIRS (default 1) pairs of runs of each program in each mode
#   pass (CHECK_PAIRS=8 measures the false-positive rate: see mpquery/README.md);
# - a regression planted by LD_PRELOAD (tests/progs/libregress.c) in the
#   same programs fails, naming only it: one function allocating 10 % more
#   bytes (2 GiB -> 2.2 GiB in 64 KiB blocks), and 1 MB more held at the
#   end (16 blocks of 64 KiB never freed);
# - the verdict is the same as text, json and junit.
# All with --max-growth 5: a gate meant to catch 10 % is set below it (at
# the default 10, a growth of exactly 10 % is allowed).
# Sourced after tests/lib/runtime.sh.
PAIRS=${CHECK_PAIRS:-1}
REGRESS=$B/tests/libregress.so
[ -f "$REGRESS" ] || fail "$REGRESS is missing (make)"

awk -v rows=50000 'BEGIN {
    print "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, price REAL, note TEXT);"
    print "BEGIN;"
    for (i = 1; i <= rows; i++)
        printf "INSERT INTO item VALUES(%d, '\''item-%07d'\'', %d, %.2f, '\''note %d'\'');\n", i, (i * 7919) % rows, i % 100, (i * 37) % 1000 / 10.0, i % 13
    print "COMMIT;"
    print "CREATE INDEX item_name ON item(name);"
    print "SELECT grp, count(*), round(avg(price), 2) FROM item GROUP BY grp ORDER BY 3 DESC LIMIT 3;"
    print "DELETE FROM item WHERE id % 3 = 0;"
    print "SELECT count(*), round(sum(price), 2) FROM item;"
}' > rows.sql || fail "cannot write rows.sql"

# prog_cmd PROG: sets cmd (PROG's command) and in (its stdin)
prog_cmd() {
    in=/dev/null
    case $1 in
    py) cmd=("$PY3" "$ROOT/tests/bench/json_churn.py" 5000 2) ;;
    sq) cmd=(sqlite3 :memory:); in=rows.sql ;;
    cl) cmd=(/usr/bin/clang++-14 -std=c++17 -O2 -c "$ROOT/tests/progs/runtimes/templates.cc" -o t.o) ;;
    esac
}
# run PROG MODE DB [VAR=VALUE...]: one recorded run of PROG (py, sq, cl),
# with the variables (the planted regression's) in its environment
run() {
    local prog=$1 mode=$2 db=$3; shift 3
    local opt=() in cmd
    [ "$mode" = sampled ] && opt=(--sample 16K)
    prog_cmd "$prog"
    timeout -k 5 300 env "$@" "$MPQ" record -q "${opt[@]}" -o "$db" -- "${cmd[@]}" <"$in" >/dev/null 2>"$db.err" ||
        fail "$prog ($mode): the recorded run failed: $(tail -3 "$db.err")"
}
planted() { local p=$1 m=$2 db=$3; shift 3; run "$p" "$m" "$db" LD_PRELOAD="$REGRESS" MP_TEST_WORK=2147483648 "$@"; }

# verdict DB BASE: check's exit code and last line as text, and the
# result, stacks compared and grown of json and of junit: one verdict
verdict() {
    local out rc j ju
    out=$("$MPQ" check "$1" --baseline "$2" --max-growth 5 2>&1); rc=$?
    echo "$out" >"$1.check"
    j=$("$MPQ" check "$1" --baseline "$2" --max-growth 5 --format json | $PY3 -c 'import json, sys; j = json.load(sys.stdin); print(j["result"], j["compared"]["stacks"], j["grown"]["stacks"])')
    "$MPQ" check "$1" --baseline "$2" --max-growth 5 --format junit -o "$1.xml" 2>/dev/null
    ju=$(grep -c '<failure' "$1.xml")
    local text_grown
    text_grown=$(echo "$out" | tail -1 | sed -n 's/^\(PASS\|FAIL\): \([0-9]*\) of \([0-9]*\) stacks.*/\2 \3/p')
    case $rc in 0) [ "$ju" = 0 ] || fail "$1: text passes, junit has $ju failures" ;;
                1) [ "$ju" -gt 0 ] || fail "$1: text fails, junit has no failure" ;; esac
    set -- $text_grown
    [ "${j#* }" = "$2 $1" ] || fail "$1: json compared/grew '${j#* }', text '$2 $1': two verdicts"
    echo "$rc"
}

# check_real PROG...: the pairs and the planted regressions of each
check_real() {
local prog mode i rc what named fp=0 pairs=0
for prog in "$@"; do
    for mode in full sampled; do
        for i in $(seq 1 $((2 * PAIRS))); do
            # the first full run of python3 and clang, as runtimes/agreement's (recorded once)
            if [ $i = 1 ] && [ $mode = full ] && [ $prog != sq ]; then
                local in cmd; prog_cmd $prog; recorded_once $prog-$mode-1.db "${cmd[@]}"
            else run $prog $mode $prog-$mode-$i.db; fi
        done
        for i in $(seq 1 $PAIRS); do
            rc=$(verdict $prog-$mode-$((2 * i)).db $prog-$mode-$((2 * i - 1)).db) || exit 1
            pairs=$((pairs + 1))
            [ "$rc" = 0 ] || { fp=$((fp + 1)); echo "# $prog $mode pair $i: $(tail -1 $prog-$mode-$((2 * i)).db.check)"; }
        done
        planted $prog $mode $prog-$mode-base.db
        planted $prog $mode $prog-$mode-work.db MP_TEST_WORK=2362232832
        planted $prog $mode $prog-$mode-hold.db MP_TEST_HOLD=$((1 << 20))
        for what in work hold; do
            rc=$(verdict $prog-$mode-$what.db $prog-$mode-base.db) || exit 1
            assert_eq "$rc" 1 "$prog, $mode: the planted regression ($what) fails the gate"
            named=$(awk 'NR > 2 && $1 == "FAIL" && $2 == "function" { print $3, $NF }' $prog-$mode-$what.db.check | sort -u | paste -sd ' ')
            case $what in
            work) assert_match "$named" "^bytes regress_work( calls regress_work)?$" "... naming regress_work only (bytes; calls as well where they pass the floor)" ;;
            hold) assert_match "$named" "leaked regress_hold" "... naming regress_hold's leaked bytes"
                  assert_eq "$(echo "$named" | tr ' ' '\n' | grep -v -e '^regress_hold$' -e '^calls$' -e '^bytes$' -e '^peak$' -e '^leaked$')" "" \
                      "... and nothing else" ;;
            esac
        done
    done
done
echo "# identical runs: $fp of $pairs pairs failed the gate"
assert_eq "$fp" 0 "pairs of identical runs of $*, full and sampled: none fails"
}
