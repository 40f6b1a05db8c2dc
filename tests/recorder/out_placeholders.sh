# MP_OUT's placeholders (%p pid, %e executable, %h host, %t start time, %%):
# put in once by the run's first process; its fork and exec children write
# the same file; an unknown one is kept, with a warning naming MP_OUT and
# it; mpquery record -o takes them too and names the file it made.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/live_steps
host=$(hostname)

before=$(date +%s)
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT='a-%p-%e-%h-%t-%%.db' $P 1 0 >a.out 2>a.err || fail "live_steps failed"
after=$(date +%s)
pid=$(sed -n 's/^pid //p' a.out)
f=$(ls a-*.db)
t=$(echo "$f" | sed -n "s/^a-$pid-live_steps-$host-\([0-9]*\)-%\.db\$/\1/p")
[ -n "$t" ] || fail "MP_OUT=a-%p-%e-%h-%t-%%.db made [$f], not a-$pid-live_steps-$host-T-%.db"
echo "  ok: %p %e %h %% put in: $f"
[ "$t" -ge "$before" ] && [ "$t" -le "$after" ] || fail "%t=$t not within [$before, $after]"
echo "  ok: %t is the start second ($before <= $t <= $after)"
assert_eq "$(cat a.err)" "" "no warning"
assert_eq "$(q "$f" "SELECT pid FROM process")" "$pid" "the process row's pid is %p's"

# fork and exec children: the same file, one run
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT='f-%p.db' $P 1 0 fork >f.out 2>&1 || fail "live_steps fork failed"
pid=$(sed -n 's/^pid //p' f.out | head -1)
assert_eq "$(ls f-*.db)" "f-$pid.db" "fork: one file, the parent's pid"
assert_eq "$(q f-$pid.db "SELECT count(*) || ' ' || count(DISTINCT run) FROM process")" "2 1" "fork: 2 processes of one run"
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT='e-%p.db' $P 1 0 exec >e.out 2>&1 || fail "live_steps exec failed"
pid=$(sed -n 's/^pid //p' e.out | head -1)
assert_eq "$(ls e-*.db)" "e-$pid.db" "exec: one file, the first process's pid"
assert_eq "$(q e-$pid.db "SELECT count(DISTINCT pid) || ' ' || count(DISTINCT run) FROM process")" "2 1" \
    "exec: both pids in it, one run"
assert_eq "$(sed -n 's/^pid //p' e.out | sort -u | wc -l)" "2" "exec: the child printed its own pid"

# an unknown placeholder: kept, one warning
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT='b-%q.db' $P 1 0 >/dev/null 2>b.err || fail "live_steps failed"
assert_eq "$(cat b.err)" "mallocprof: warning: MP_OUT=b-%q.db: unknown placeholder %q, kept as it is (%p pid, %e executable, %h host, %t start time, %% a '%')" \
    "the warning names MP_OUT and the placeholder"
assert_eq "$(ls b-*.db)" "b-%q.db" "the placeholder kept as written"

# mpquery record -o: the program's pid, its file name; the summary names the file
$MPQ record -o 'r-%p-%e.db' -- $P 1 0 >r.out 2>r.err || fail "record failed: $(cat r.err)"
pid=$(sed -n 's/^pid //p' r.out)
assert_eq "$(ls r-*.db)" "r-$pid-live_steps.db" "record -o: %p is the program's pid, %e its name"
assert_match "$(cat r.err)" "^mpquery: wrote r-$pid-live_steps.db: 1 process \(1 image\), " "record's line names the file made"
$MPQ record -o 'r2-%z.db' -- $P 1 0 >/dev/null 2>r2.err || fail "record failed"
assert_match "$(head -1 r2.err)" "^mpquery: warning: record: -o r2-%z.db: unknown placeholder %z, kept as it is" \
    "record: the unknown placeholder's warning"
[ -f 'r2-%z.db' ] || fail "r2-%z.db not written"
echo "PASS"
