#!/bin/bash
# mpquery check: the memory gate. tests/progs/check_prog.c has a known
# pattern (work_a 1000 x 100 bytes, work_b 2000 x 1000, hold_c 100 x 4096
# live at once: the peak with keep_d's 10 x 64 leaked bytes), a variant
# with work_b doubled and one with leak_e (150 x 4096 never freed).
# Full capture: the same program twice passes (0), doubled fails naming
# work_b only, the leak fails naming leak_e; every limit on both sides of
# its exact threshold, with and without --filter. Sampled (MP_SAMPLE=4096):
# 20 pairs of runs of the same program, each sampling different blocks,
# all pass at the default 5 sigmas (and at 1 sigma some do not: the noise
# bound is not vacuous); doubled and the leak still fail. JSON and JUnit
# (read back by junitparser, a real JUnit consumer; xmllint for
# well-formedness). Every bad input: one line, exit 2.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
P=$B/tests/check_prog
run_full() { local db=$1; shift; MP_QUIET=1 profile "$db" "$P" "$@" || fail "check_prog $* failed"; }
run_sampled() { local db=$1; shift; MP_QUIET=1 MP_SAMPLE=4K profile "$db" "$P" "$@" || fail "check_prog $* failed"; }
check() { "$MPQ" check "$@"; }

# ---------------------------------------------------------------- full capture
run_full base.db
run_full same.db
run_full double.db double
run_full leak.db leak

out=$(check same.db --baseline base.db); rc=$?
assert_eq "$rc" 0 "the same program twice: exit 0"
assert_eq "$out" "mpquery check same.db against base.db (growth allowed: 10 %, at least 0.5 % of the baseline's total)
PASS: 0 of 4 stacks and 0 of 4 functions grew" "... and the report says what was compared"

out=$(check double.db --baseline base.db); rc=$?
assert_eq "$rc" 1 "work_b doubled: exit 1"
assert_eq "$out" "mpquery check double.db against base.db (growth allowed: 10 %, at least 0.5 % of the baseline's total)
result  check     measure    before     after  growth       limit  where
FAIL    stack     calls        2000      4000  +100.0 %      2200  work_b < main
FAIL    stack     bytes    1.91 MiB  3.81 MiB  +100.0 %  2.10 MiB  work_b < main
FAIL    function  calls        2000      4000  +100.0 %      2200  work_b
FAIL    function  bytes    1.91 MiB  3.81 MiB  +100.0 %  2.10 MiB  work_b
FAIL: 1 of 4 stacks and 1 of 4 functions grew" "... naming that stack (and function) only, before, after, the limit"
out=$(check double.db --baseline base.db --max-growth 100); rc=$?
assert_eq "$rc:$(echo "$out" | tail -1)" "0:PASS: 0 of 4 stacks and 0 of 4 functions grew" "--max-growth 100: doubling is allowed"
out=$(check double.db --baseline base.db --max-growth 99.9); rc=$?
assert_eq "$rc:$(echo "$out" | tail -1)" "1:FAIL: 1 of 4 stacks and 1 of 4 functions grew" "--max-growth 99.9: it is not"
assert_eq "$(check base.db --baseline double.db; echo "rc=$?")" "mpquery check base.db against double.db (growth allowed: 10 %, at least 0.5 % of the baseline's total)
PASS: 0 of 4 stacks and 0 of 4 functions grew
rc=0" "shrinking is no failure"
out=$(check double.db --baseline base.db --exclude work_b); rc=$?
assert_eq "$rc:$(echo "$out" | tail -1)" "0:PASS: 0 of 3 stacks and 0 of 3 functions grew" "--exclude work_b: the rest did not grow"

out=$(check leak.db --baseline base.db --bytes); rc=$?
assert_eq "$rc" 1 "a leak added: exit 1"
assert_eq "$out" "mpquery check leak.db against base.db (growth allowed: 10 %, at least 0.5 % of the baseline's total)
result  check     measure  before   after  growth  limit  where
FAIL    stack     calls         0     150  new        15  leak_e < main
FAIL    stack     bytes         0  614400  new     12551  leak_e < main
FAIL    stack     peak          0  614400  new     12997  leak_e < main
FAIL    stack     leaked        0  614400  new      4096  leak_e < main
FAIL    function  calls         0     150  new        15  leak_e
FAIL    function  bytes         0  614400  new     12551  leak_e
FAIL    function  peak          0  614400  new     12997  leak_e
FAIL    function  leaked        0  614400  new      4096  leak_e
FAIL: 1 of 5 stacks and 1 of 5 functions grew" "... naming leak_e, new in every measure (it is live at the new peak, at exit); the limits
are the floors: 0.5 % of the baseline's 3110 calls (15) and 2510240 bytes (12551), 4 KiB for leaked (0.5 % of the
peak 410240 is less), for peak 4 KiB and both sides' windows, 4096 (1/128 of 410240 is less) and 615040 / 128"

# a side of several runs is their mean: three runs in one file (--run all),
# two files
for i in 1 2 3; do record_run t-run$i runs3.db "$P"; done
out=$(check same.db --baseline runs3.db --run all); rc=$?
assert_eq "$rc:$(echo "$out" | tail -1)" "0:PASS: 0 of 4 stacks and 0 of 4 functions grew" "--run all: the mean of 3 runs, not their sum"
out=$(check double.db --baseline runs3.db --run all --bytes --filter work_b); rc=$?
assert_eq "$rc:$(echo "$out" | sed -n 3p)" "1:FAIL    stack     calls       2000     4000  +100.0 %     2200  work_b < main" \
  "... work_b doubled: before is the mean, 2000"
out=$(check same.db double.db --baseline base.db --bytes --filter work_b); rc=$?
assert_eq "$rc:$(echo "$out" | sed -n 3p)" "1:FAIL    stack     calls       2000     3000  +50.0 %     2200  work_b < main" \
  "two files a side: their mean (2000 and 4000: 3000)"

# ---------------------------------------------------------------- limits, each on both sides of its threshold
# base.db: 3110 calls (1000 + 2000 + 100 + 10), peak 409600 + 640, leaked 640
limit_rc() { check base.db "$@" >/dev/null; echo $?; }
assert_eq "$(limit_rc --max-calls 3110) $(limit_rc --max-calls 3109)" "0 1" "--max-calls: 3110 passes, 3109 fails"
assert_eq "$(limit_rc --max-peak 410240) $(limit_rc --max-peak 410239)" "0 1" "--max-peak: 410240 passes, 410239 fails"
assert_eq "$(limit_rc --max-leaked 640) $(limit_rc --max-leaked 639)" "0 1" "--max-leaked: 640 passes, 639 fails"
assert_eq "$(limit_rc --max-peak 401K) $(limit_rc --max-peak 400K)" "0 1" "SIZE in units: 401K passes (410624), 400K fails (409600)"
assert_eq "$(limit_rc --max-calls 1000 --filter work_a) $(limit_rc --max-calls 999 --filter work_a)" "0 1" \
  "--max-calls with --filter work_a: its 1000 calls"
assert_eq "$(limit_rc --max-peak 409600 --filter hold_c) $(limit_rc --max-peak 409599 --filter hold_c)" "0 1" \
  "--max-peak with --filter hold_c: its 409600 bytes at the peak"
assert_eq "$(limit_rc --max-leaked 0 --filter 'work|hold') $(limit_rc --max-leaked 0 --filter keep_d)" "0 1" \
  "--max-leaked 0 with --filter: work_* and hold_c leak nothing, keep_d does"
assert_eq "$(check base.db --max-calls 3000 --max-peak 1M --max-leaked 0 --bytes; echo "rc=$?")" "mpquery check base.db
result  check  measure  before   after  growth    limit  where
FAIL    limit  calls    -         3110  -          3000  (all stacks)
pass    limit  peak     -       410240  -       1048576  (all stacks)
FAIL    limit  leaked   -          640  -             0  (all stacks)
FAIL: 2 of 3 limits exceeded
rc=1" "the limits' report: one row each, pass or FAIL"
assert_eq "$(check double.db --baseline base.db --max-peak 1M | sed -n '3p;$p')" \
"pass    limit     peak            -   401 KiB  -         1.00 MiB  (all stacks)
FAIL: 0 of 1 limit exceeded; 1 of 4 stacks and 1 of 4 functions grew" "limits and a baseline together"

# a profile without peak snapshots (the basic fixture, as format version 2
# wrote them): peak is the sum of the stacks' own peaks (maxlive), an
# upper bound of the peak; leaked as leaks counts it
fixture basic >/dev/null
assert_eq "$(check basic.db --max-peak 5000 >/dev/null; echo $?) $(check basic.db --max-peak 4999 >/dev/null; echo $?)" "0 1" \
  "no peak snapshot: --max-peak over all stacks on the process peak, 5000"
assert_eq "$(json_get "$("$MPQ" info basic.db --format json)" 'j["peak"]')" 5000 "... as info prints it"
assert_eq "$(check basic.db --max-peak 3987 --filter . >/dev/null; echo $?) $(check basic.db --max-peak 3986 --filter . >/dev/null; echo $?)" "0 1" \
  "... over the stacks --filter keeps, the sum of their own peaks (maxlive), 3987"
assert_eq "$(q basic.db 'SELECT SUM(maxlive) FROM last_sample')" 3987 "... which SQL agrees with"
assert_eq "$(check basic.db --max-leaked 3230 >/dev/null; echo $?) $(check basic.db --max-leaked 3229 >/dev/null; echo $?)" "0 1" \
  "... --max-leaked: 3230, as leaks says"

# on a terminal at 80 columns: what a person sees, stacks fitted
out=$(COLUMNS=80 PAGER=cat script -qc "$MPQ check double.db --baseline base.db --filter work_b" /dev/null | tr -d '\r')
assert_eq "$(echo "$out" | sed -n 3p)" \
  "FAIL    stack     calls        2000      4000  +100.0 %      2200  work_b < main" "a terminal of 80 columns: the same rows"
out=$(COLUMNS=200 PAGER=cat script -qc "$MPQ check leak.db --baseline base.db" /dev/null | tr -d '\r')
assert_eq "$(echo "$out" | sed -n '2p;$p')" \
"result  check     measure  before    after  growth     limit  where
FAIL: 1 of 5 stacks and 1 of 5 functions grew" "... and of 200"

# ---------------------------------------------------------------- json
j=$(check double.db --baseline base.db --max-calls 6000 --format json); rc=$?
assert_eq "$rc" 1 "json: the exit code as text's"
assert_eq "$(json_get "$j" 'j["result"], j["baseline"], j["max_growth"], j["sigmas"], j["compared"]')" \
  "('fail', 'base.db', 10.0, 5.0, {'stacks': 4, 'functions': 4})" "json: result, baseline, settings, compared"
assert_eq "$(json_get "$j" '[(c["check"], c["measure"], c["before"], c["after"], c["limit"], c["pass"], c.get("frames") or c.get("function") or c.get("filter")) for c in j["checks"]]')" \
  "[('limit', 'calls', None, 5110, 6000, True, None), ('stack', 'calls', 2000, 4000, 2200, False, ['work_b', 'main']), ('stack', 'bytes', 2000000, 4000000, 2200000, False, ['work_b', 'main']), ('function', 'calls', 2000, 4000, 2200, False, 'work_b'), ('function', 'bytes', 2000000, 4000000, 2200000, False, 'work_b')]" \
  "json: each check, raw numbers, the stack's frames"

# ---------------------------------------------------------------- junit, read by a JUnit consumer
sh "$ROOT/tests/lib/deps.sh" python3-junitparser >deps.log 2>&1 || fail "cannot install python3-junitparser: $(cat deps.log)"
check double.db --baseline base.db --max-leaked 100 --max-calls 6000 --format junit -o r.xml 2>wrote.txt
assert_eq "$?:$(cat wrote.txt)" "1:mpquery: wrote r.xml (1.52 KiB)" "junit -o: exit 1, the file written"
xmllint --noout r.xml || fail "r.xml is not well-formed XML"
junit() {
    $PY3 - "$1" <<'EOF'
import sys
from junitparser import JUnitXml, Failure
xml = JUnitXml.fromfile(sys.argv[1])
for suite in xml:
    print(f"{suite.name}: tests={suite.tests} failures={suite.failures} errors={suite.errors}")
    for case in suite:
        fails = [r for r in case.result if isinstance(r, Failure)]
        print(f"{case.classname} | {case.name} | " + ("; ".join(f.message for f in fails) if fails else "pass"))
        for f in fails:
            for line in (f.text or "").splitlines(): print("    " + line)
EOF
}
assert_eq "$(junit r.xml)" "mpquery check: tests=10 failures=5 errors=0
mpquery.check | calls <= 6000 | pass
mpquery.check | leaked <= 100 | leaked 640 > limit 100
    leaked 640 > limit 100
mpquery.check | no stack grew in calls | 1 stack grew in calls
    work_b < main: calls 2000 -> 4000 (+100.0 %, limit 2200)
mpquery.check | no stack grew in bytes | 1 stack grew in bytes
    work_b < main: bytes 2000000 -> 4000000 (+100.0 %, limit 2200000)
mpquery.check | no stack grew in peak | pass
mpquery.check | no stack grew in leaked | pass
mpquery.check | no function grew in calls | 1 function grew in calls
    work_b: calls 2000 -> 4000 (+100.0 %, limit 2200)
mpquery.check | no function grew in bytes | 1 function grew in bytes
    work_b: bytes 2000000 -> 4000000 (+100.0 %, limit 2200000)
mpquery.check | no function grew in peak | pass
mpquery.check | no function grew in leaked | pass" "junit: one suite, a testcase per limit and per growth check, failures with what grew"
check same.db --baseline base.db --format junit -o ok.xml 2>/dev/null
assert_eq "$?:$(junit ok.xml | head -1)" "0:mpquery check: tests=8 failures=0 errors=0" "junit of a pass: 8 testcases, no failure"

# names with markup (C++: <, >, &) are escaped, and whole (as json's)
cp basic.db b2.db && sqlite3 b2.db "UPDATE sample SET ncalls = ncalls * 2, memtot = memtot * 2, nfree = nfree * 2
                                     WHERE stack = 11" || fail "cannot derive b2.db"
NO_PROFILE_CHECK="$NO_PROFILE_CHECK b2.db"
check b2.db --baseline basic.db --format junit -o b2.xml 2>/dev/null
assert_eq "$?" 1 "the fixture's vector stack doubled: 1"
xmllint --noout b2.xml || fail "b2.xml is not well-formed XML"
assert_eq "$(junit b2.xml | grep -A1 '| no stack grew in calls')" \
"mpquery.check | no stack grew in calls | 1 stack grew in calls
    std::vector<int>::push_back(int const&) < main: calls 20 -> 40 (+100.0 %, limit 30)" "junit: C++ names whole, read back as written (the limit: 20 and the floor, 10 calls)"
j=$(check b2.db --baseline basic.db --format json)
assert_eq "$(json_get "$j" '[c.get("function") for c in j["checks"]]')" \
  "[None, 'std::vector<int>::push_back(int const&)']" "json: the same names (calls only: its bytes grew by less than the 4 KiB floor)"

# ---------------------------------------------------------------- sampled
# Each run first allocates 5 MB x i (phase): the recorder's sampling points
# are a fixed sequence per thread, so this moves each run's workload to a
# part of it no other run uses: independent samples of the same pattern.
# phase differs between runs on purpose: --exclude it.
for i in $(seq 1 40); do run_sampled s$i.db shift $((i * 5000000)); done
failing() {     # the pairs (2i-1, 2i) that fail with these options
    local n=0
    for i in $(seq 1 20); do
        check s$((2 * i)).db --baseline s$((2 * i - 1)).db --exclude '^phase$' "$@" >pair$i.txt
        case $? in 0) ;; 1) n=$((n + 1));; *) fail "check of pair $i: $(cat pair$i.txt)";; esac
    done
    echo $n
}
assert_eq "$(failing)" 0 "sampled: 20 pairs of runs of the same program, none fails"
assert_eq "$(tail -1 pair1.txt)" "PASS: 0 of 4 stacks and 0 of 4 functions grew" "... (work_a, work_b, hold_c, keep_d's sampled blocks)"
assert_match "$(head -1 pair1.txt)" "growth allowed: 10 % and the sampling noise" "... the noise is said"
n=$(failing --sigmas 1 --max-growth 0)
[ "$n" -ge 1 ] || fail "at 1 sigma and 0 %, no pair failed: the noise bound would be vacuous"
echo "  ok: at 1 sigma and 0 %, $n of 20 pairs fail (the bound is not vacuous)"
run_sampled sd.db double shift 250000000
run_sampled sl.db leak shift 260000000
out=$(check sd.db --baseline s1.db --exclude '^phase$'); rc=$?
assert_eq "$rc" 1 "sampled, work_b doubled: exit 1"
assert_eq "$(echo "$out" | awk 'NR > 2 && $1 == "FAIL" { print $2, $3, $NF }' | sort -u)" "function bytes work_b
function calls work_b
stack bytes main
stack calls main" "... naming work_b only (stack rows end '< main')"
assert_match "$(echo "$out" | grep 'stack *calls')" "work_b < main" "... the stack"
out=$(check sl.db --baseline s1.db --exclude '^phase$'); rc=$?
assert_eq "$rc:$(echo "$out" | awk 'NR > 2 && $1 == "FAIL" { print $2 }' | sort | uniq -c | tr -s ' ')" \
  "1: 4 function
 4 stack" "sampled, the leak added: exit 1, four measures of one stack and one function"
assert_eq "$(echo "$out" | grep -c 'leak_e')" 8 "... all of them leak_e"

# ---------------------------------------------------------------- bad input: one line, exit 2
echo hello > notdb.txt
cp base.db v99.db && sqlite3 v99.db "PRAGMA user_version = 99" || fail "cannot make v99.db"
NO_PROFILE_CHECK="$NO_PROFILE_CHECK v99.db"
expect_fail 2 '^mpquery: nope.db: No such file or directory$' "$MPQ" check nope.db --max-calls 1
expect_fail 2 '^mpquery: nope.db: No such file or directory$' "$MPQ" check base.db --baseline nope.db
expect_fail 2 '^mpquery: notdb.txt: not a mallocprof profile' "$MPQ" check notdb.txt --max-calls 1
expect_fail 2 '^mpquery: notdb.txt: not a mallocprof profile' "$MPQ" check base.db --baseline notdb.txt
expect_fail 2 '^mpquery: v99.db: schema version 99, this mpquery reads versions 1 to' "$MPQ" check base.db --baseline v99.db
expect_fail 2 "^mpquery: check: bad value '12Q' for --max-peak \(expected a size" "$MPQ" check base.db --max-peak 12Q
expect_fail 2 "^mpquery: check: bad value '-1' for --max-leaked" "$MPQ" check base.db --max-leaked -1
expect_fail 2 "^mpquery: check: bad value 'x' for --max-calls" "$MPQ" check base.db --max-calls x
expect_fail 2 "^mpquery: check: bad value 'abc' for --max-growth" "$MPQ" check base.db --baseline same.db --max-growth abc
expect_fail 2 "^mpquery: check: bad value '-1' for --sigmas" "$MPQ" check base.db --baseline same.db --sigmas -1
expect_fail 2 "^mpquery: check: bad regex '\('" "$MPQ" check base.db --max-calls 1 --filter '('
expect_fail 2 "^mpquery: check: bad value 'xml' for --format \(expected text, json or junit\)" "$MPQ" check base.db --max-calls 1 --format xml
expect_fail 2 '^mpquery: check: --baseline and --server do not combine' "$MPQ" check base.db --baseline same.db --server http://127.0.0.1:1/
expect_fail 2 '^mpquery: check: --max-growth, --sigmas and --min-\* need a baseline' "$MPQ" check base.db --max-growth 5
expect_fail 2 '^mpquery: check: --max-growth, --sigmas and --min-\* need a baseline' "$MPQ" check base.db --min-share 1
expect_fail 2 "^mpquery: check: bad value '1x' for --min-bytes" "$MPQ" check base.db --baseline same.db --min-bytes 1x
expect_fail 2 "^mpquery: check: bad value '-3' for --min-calls" "$MPQ" check base.db --baseline same.db --min-calls -3
expect_fail 2 '^mpquery: check: nothing to check: give a limit' "$MPQ" check base.db
expect_fail 2 '^mpquery: check: missing DB' "$MPQ" check --max-calls 1
expect_fail 2 '^mpquery: check: --where, --host and --since select runs of --server URL' "$MPQ" check base.db --max-calls 1 --where 1
expect_fail 2 '^mpquery: base.db: the output \(-o\) is the input base.db' "$MPQ" check same.db --baseline base.db -o base.db
expect_fail 2 '^mpquery: http://127.0.0.1:1/: cannot connect' "$MPQ" check base.db --server http://127.0.0.1:1/

# ---------------------------------------------------------------- help
h=$("$MPQ" check --help-all) || fail "check --help-all exit $?"
assert_match "$h" "^usage: mpquery check DB" "check --help-all: a usage line"
for o in max-peak max-leaked max-calls baseline max-growth min-share min-bytes min-calls sigmas filter exclude format output server where; do
    printf '%s' "$h" | grep -q -- "--$o" || fail "check --help-all does not mention --$o"
done
echo "  ok: check --help-all names every option"
assert_match "$("$MPQ" --help)" "check +a memory gate for CI" "mpquery --help lists check"
