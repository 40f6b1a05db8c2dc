#!/bin/bash
# mpquery check when there is no verdict to give (issue 41, item 14): exit
# 1 means "a limit or a growth failed" to CI, so nothing else may exit 1.
#   - the report cannot be written (-o in a directory that is not there,
#     -o /dev/full, stdout on /dev/full): exit 2 and one line, on a passing
#     profile and on a failing one alike (the verdict was never delivered);
#   - a baseline of another program (tests/progs/check_prog.c against
#     tests/alloc_functions: no stack in common, as mpquery fold agrees):
#     one line saying so, exit 2, not every stack listed as new;
#   - --filter (or --exclude) keeping no stack: one line saying nothing
#     was checked, exit 2 (a limit on nothing always passed).
# Each case has its control: the same command where it can be answered.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
run() { local db=$1; shift; MP_QUIET=1 profile "$db" "$@" >/dev/null || fail "$* failed"; }
run base.db $B/tests/check_prog
run same.db $B/tests/check_prog
run double.db $B/tests/check_prog double
MP_QUIET=1 profile other.db $B/tests/alloc_functions; assert_eq "$?" 7 "alloc_functions: its exit status 7"
run leak.db $B/tests/check_prog leak

# ---------------------------------------------------------------- the report not written
out=$("$MPQ" check base.db --max-calls 3110 2>&1); rc=$?
assert_eq "$rc:$(echo "$out" | tail -1)" "0:PASS: 0 of 1 limit exceeded" "control: base.db passes --max-calls 3110"
out=$("$MPQ" check double.db --baseline base.db 2>&1); rc=$?
assert_eq "$rc:$(echo "$out" | tail -1)" "1:FAIL: 1 of 4 stacks and 1 of 4 functions grew" "control: double.db grew"
expect_fail 2 '^mpquery: /nonexistent/mem.xml: No such file or directory$' \
  "$MPQ" check base.db --max-calls 3110 -o /nonexistent/mem.xml
expect_fail 2 '^mpquery: /nonexistent/mem.xml: No such file or directory$' \
  "$MPQ" check base.db --max-calls 3110 --format junit -o /nonexistent/mem.xml
expect_fail 2 '^mpquery: /nonexistent/mem.xml: No such file or directory$' \
  "$MPQ" check double.db --baseline base.db -o /nonexistent/mem.xml
[ -e /nonexistent ] && fail "/nonexistent was made"
expect_fail 2 '^mpquery: /dev/full: write error: No space left on device$' \
  "$MPQ" check base.db --max-calls 3110 -o /dev/full
expect_fail 2 '^mpquery: /dev/full: write error: No space left on device$' \
  "$MPQ" check double.db --baseline base.db --format json -o /dev/full
err=$("$MPQ" check base.db --max-calls 3110 2>&1 >/dev/full); rc=$?
assert_eq "$rc:$err" "2:mpquery: check: stdout: write error: No space left on device" "stdout on /dev/full: 2, one line"
err=$("$MPQ" check double.db --baseline base.db 2>&1 >/dev/full); rc=$?
assert_eq "$rc:$err" "2:mpquery: check: stdout: write error: No space left on device" "... a failing check too"
mkdir outdir && echo old > outdir/mem.txt
"$MPQ" check base.db --max-calls 3110 -o outdir/mem.txt 2>wrote.txt
assert_eq "$?:$(cat wrote.txt)" "0:mpquery: wrote outdir/mem.txt ($(wc -c <outdir/mem.txt) B)" "control: -o a writable place: 0"
assert_eq "$(cat outdir/mem.txt)" "$("$MPQ" check base.db --max-calls 3110)" "... the report written, as on stdout"

# ---------------------------------------------------------------- a baseline of another program
# what each has, as check compares them (each against itself), and as fold says
out=$("$MPQ" check other.db --baseline other.db); rc=$?
assert_eq "$rc:$(echo "$out" | tail -1)" "0:PASS: 0 of 8 stacks and 0 of 8 functions grew" "other.db: 8 stacks"
out=$("$MPQ" check base.db --baseline base.db); rc=$?
assert_eq "$rc:$(echo "$out" | tail -1)" "0:PASS: 0 of 4 stacks and 0 of 4 functions grew" "base.db: 4 stacks"
"$MPQ" fold base.db | sed 's/ [0-9]*$//' | sort >base.fold
"$MPQ" fold other.db | sed 's/ [0-9]*$//' | sort >other.fold
assert_eq "$(wc -l <base.fold) $(wc -l <other.fold) $(comm -12 base.fold other.fold | wc -l)" "4 8 0" \
  "mpquery fold: 4 and 8 stacks, none in common"
expect_fail 2 "^mpquery: check: other.db \(alloc_functions, 8 stacks\) and the baseline base.db \(check_prog, 4 stacks\) have no stack in common: a baseline of another program\?$" \
  "$MPQ" check other.db --baseline base.db
expect_fail 2 "^mpquery: check: base.db \(check_prog, 4 stacks\) and the baseline other.db \(alloc_functions, 8 stacks\) have no stack in common" \
  "$MPQ" check base.db --baseline other.db --format junit
out=$("$MPQ" check other.db --baseline base.db --format json 2>/dev/null)
assert_eq "$out" "" "... nothing on stdout (no stack listed as new)"
# a filter does not hide it: the programs are compared whole
expect_fail 2 "have no stack in common" "$MPQ" check other.db --baseline base.db --filter main

# ---------------------------------------------------------------- --filter keeping nothing
out=$("$MPQ" check same.db --baseline base.db --filter work_a); rc=$?
assert_eq "$rc:$(echo "$out" | tail -1)" "0:PASS: 0 of 1 stack and 0 of 1 function grew" "control: --filter work_a keeps one stack"
expect_fail 2 "^mpquery: check: --filter 'nomatch' keeps no stack of same.db or base.db: nothing was checked$" \
  "$MPQ" check same.db --baseline base.db --filter nomatch
expect_fail 2 "^mpquery: check: --filter 'nomatch' keeps no stack of base.db: nothing was checked$" \
  "$MPQ" check base.db --max-calls 10 --filter nomatch
expect_fail 2 "^mpquery: check: --filter 'nomatch\|other' keeps no stack of base.db: nothing was checked$" \
  "$MPQ" check base.db --max-leaked 0 --filter nomatch --filter other --format junit -o f.xml
[ -e f.xml ] && fail "f.xml written"
expect_fail 2 "^mpquery: check: --exclude '.' keeps no stack of base.db: nothing was checked$" \
  "$MPQ" check base.db --max-peak 1M --exclude .
expect_fail 2 "^mpquery: check: --filter 'work' and --exclude 'work' keep no stack of double.db or base.db: nothing was checked$" \
  "$MPQ" check double.db --baseline base.db --filter work --exclude work
# a stack only the baseline has is kept: it is checked (it shrank to nothing)
out=$("$MPQ" check base.db --baseline leak.db --filter leak_e); rc=$?
assert_eq "$rc:$(echo "$out" | tail -1)" "0:PASS: 0 of 1 stack and 0 of 1 function grew" "control: --filter leak_e, in the baseline only"
out=$("$MPQ" check same.db --baseline base.db --exclude 'work_a|work_b|hold_c' --max-leaked 640); rc=$?
assert_eq "$rc:$(echo "$out" | tail -1)" "0:PASS: 0 of 1 limit exceeded; 0 of 1 stack and 0 of 1 function grew" \
  "control: --exclude leaving keep_d: checked"
echo PASS
