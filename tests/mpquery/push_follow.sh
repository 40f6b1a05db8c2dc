#!/bin/bash
# mpquery push --follow DIR --server URL, against a private clickhouse-server
# (tests/lib/clickhouse.sh): programs recording interval snapshots into the
# followed directory (tests/progs/live_steps.c; the files appear after the
# agent started) have each snapshot stored while they run; the server
# killed and restarted mid-run, the agent SIGKILLed and restarted: every
# snapshot's rows are stored exactly once (counted per snapshot and table
# against the file, through sqlite3); top --server equals top FILE;
# --remove-shipped removes only the files stored whole whose processes
# ended (a program still running keeps its file until it is killed); a bad
# URL, a missing directory: one line, exit 2; SIGTERM: exit 0.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
source "$ROOT/tests/lib/clickhouse.sh"
P=$B/tests/live_steps

expect_fail 2 '^mpquery: http://127\.0\.0\.1:99999/: bad port$' "$MPQ" push --follow . --server http://127.0.0.1:99999/
expect_fail 2 '^mpquery: push: --follow nodir: No such file or directory$' \
    "$MPQ" push --follow nodir --server http://127.0.0.1:1/ --state st0
expect_fail 2 '^mpquery: push: needs a URL and at least one database \(--follow: a directory or file\)' "$MPQ" push --follow

ch_start
mkdir prof st
AGENT= runs=
agent() {   # agent LOG [ARGS...]: starts the agent on prof/
    local log=$1; shift
    # its copies in $T: a SIGKILLed agent leaves its copy behind
    TMPDIR=$T "$MPQ" push --follow prof --server "$CH_URL" --state st "$@" 2>"$log" &
    AGENT=$!
}
on_exit '[ -n "$AGENT" ] && kill -KILL $AGENT 2>/dev/null; for p in $(jobs -p); do kill -KILL $p 2>/dev/null; done'

# wait_for WHAT CMD...: polls CMD until it succeeds (60 s at most)
wait_for() {
    local what=$1 end=$((SECONDS + 60)); shift
    while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done
    fail "$what: not so after 60 s"
}
stored() { chc "SELECT count() FROM mp_snapshot" 2>/dev/null; }
at_least() { [ "$(stored)" -ge "$1" ]; }

agent agent1.err
# 150 steps of 100 ms, a snapshot every 0.2 s: it runs while the server
# and the agent are killed and restarted below
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=prof/%e-%p.db MP_INTERVAL=0.2 $P 150 100 >one.out 2>one.err &
PROG1=$!
wait_for "a running program's snapshots in the store" at_least 3
echo "  ok: snapshots stored while the program runs ($(stored))"

# the server dies mid-run, and comes back
ch_kill
sleep 1.5
ch_restart
n=$(stored)
wait_for "snapshots stored after the server's restart" at_least $((n + 2))
kill -0 $PROG1 || fail "the program ended before the server came back (too slow a machine?)"
grep -q 'retrying' agent1.err || fail "the server's failure is not said: $(cat agent1.err)"
grep -q 'answers again' agent1.err || fail "the server's return is not said: $(cat agent1.err)"
assert_eq "$(grep -c 'retrying' agent1.err)" 1 "the failure said once"

# the agent killed outright, restarted; a second program starts meanwhile
kill -KILL $AGENT; wait $AGENT 2>/dev/null
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=prof/%e-%p.db MP_INTERVAL=0.2 $P 10 100 >two.out 2>two.err &
PROG2=$!
sleep 0.5
agent agent2.err
wait $PROG1 || fail "live_steps failed"
wait $PROG2 || fail "live_steps (the second) failed"

# every file's snapshots, each stored once
files=$(ls prof/*.db)
assert_eq "$(echo $files | wc -w)" 2 "profiles in the directory"
in_files() { local f s=0; for f in $files; do s=$((s + $(q "$f" "SELECT count(*) FROM snapshot"))); done; echo $s; }
all_stored() { [ "$(stored)" = "$(in_files)" ] && [ "$(chc "SELECT count() FROM mp_process WHERE ended = ''")" = 0 ]; }
wait_for "every snapshot stored and every process ended" all_stored
echo "  ok: $(stored) snapshots stored, as many as the files hold"
for f in $files; do
    token=$(q "$f" "SELECT token FROM run")
    run=$(chc "SELECT run FROM mp_runs WHERE token = '$token'")
    [ -n "$run" ] || fail "$f: no run of token $token in mp_runs"
    for t in sample:sample totals:totals hist:hist stack_hist:stack_hist snapshot:snapshot; do
        if [ "$t" = snapshot:snapshot ]; then
            want=$(q "$f" "SELECT seq || ' 1' FROM snapshot ORDER BY seq")
        else
            want=$(q "$f" "SELECT sn.seq || ' ' || count(*) FROM ${t%%:*} x JOIN snapshot sn ON sn.id = x.snapshot
                           GROUP BY sn.seq ORDER BY sn.seq")
        fi
        got=$(chc "SELECT concat(toString(seq), ' ', toString(count())) FROM mp_${t#*:} WHERE run = $run
                   GROUP BY seq ORDER BY seq")
        [ "$got" = "$want" ] || fail "$f: mp_${t#*:} rows per snapshot: store [$got], file [$want]"
    done
    assert_eq "$(chc "SELECT count() FROM mp_process WHERE run = $run")" 1 "$f: one process row"
    assert_eq "$(chc "SELECT count() FROM mp_thread WHERE run = $run")" "$(q "$f" "SELECT count(*) FROM thread")" \
        "$f: thread rows"
    assert_eq "$(chc "SELECT ended FROM mp_process WHERE run = $run")" "$(q "$f" "SELECT ended FROM process")" \
        "$f: how its process ended"
    echo "  ok: $f: rows per snapshot and table as in the file, each once"
    runs="${runs:+$runs, }$run"
    # the rows, every counter; the store numbers its stacks anew (the stack
    # column aside), and rows alike in --by may come in another order
    ids() { sed -E 's/,[0-9]+,([0-9]+),([^,]*)$/,ID,\1,\2/' | sort; }
    "$MPQ" top "$f" --format csv -n 0 | ids >file.top || fail "top $f"
    "$MPQ" top --server "$CH_URL" --where "token = '$token'" --format csv -n 0 | ids >server.top || fail "top --server"
    diff file.top server.top || fail "$f: top --server differs from top FILE"
    assert_eq "$(chc "SELECT count() FROM (SELECT seq FROM mp_growth_seen WHERE run = $run GROUP BY seq HAVING count() > 1)")" \
        0 "$f: each snapshot's growth stored once"
done
echo "  ok: top --server equals top FILE for both runs"
# a window over the whole store, from the growth rollups, as over the files
first=$(echo $files | cut -d' ' -f1)
since=$(q "$first" "SELECT CAST(time AS INTEGER) FROM snapshot WHERE reason != 'peak' ORDER BY seq LIMIT 1 OFFSET 3")
[ -n "$since" ] || fail "$first: no fourth snapshot"
"$MPQ" top $files --run all --since "$since" --format csv -n 0 2>/dev/null | ids >file.win || fail "top FILES --since"
"$MPQ" top --server "$CH_URL" --since "$since" --format csv -n 0 2>/dev/null | ids >server.win || fail "top --server --since"
diff file.win server.win || fail "top --server --since $since (the rollups) differs from the files: $(diff file.win server.win | head -20)"
[ "$(wc -l <file.win)" -gt 2 ] || fail "top FILES --since $since: no rows: $(cat file.win)"
echo "  ok: top --server --since $since (the rollups) equals the files ($(wc -l <file.win) rows)"

# SIGTERM: a clean stop
kill -TERM $AGENT; wait $AGENT; rc=$?
AGENT=
assert_eq "$rc" 0 "exit status after SIGTERM"
assert_match "$(tail -n 1 agent2.err)" '^mpquery: push: stopped: [0-9]+ snapshots' "the last line"

# an agent killed between its last batch and the end: the next one writes the end
chc "ALTER TABLE mp_process UPDATE ended = '' WHERE run IN ($runs)"
unended() { [ "$(chc "SELECT count() FROM mp_process WHERE run IN ($runs) AND ended = ''")" = "$1" ]; }
wait_for "the ends undone" unended 2
sed -i 's/^finished 1$/finished 0/' st/*.state

# --remove-shipped: the finished files go, a running program's stays until it is killed
n=$(stored)
LD_PRELOAD=$LIB MP_QUIET=1 MP_OUT=prof/%e-%p.db MP_INTERVAL=0.2 $P 1000 100 >three.out 2>three.err &
PROG3=$!
live=prof/live_steps-$PROG3.db
wait_for "the third program's file" test -s "$live"
agent agent3.err --remove-shipped
gone() { local f; for f in $files; do [ -e "$f" ] && return 1; done; return 0; }
wait_for "the finished files removed" gone
wait_for "the ends written again" unended 0
wait_for "the running program's snapshots stored" at_least $((n + 2))
[ -e "$live" ] || fail "the running program's file was removed"
echo "  ok: --remove-shipped removed the finished files, kept the running one's"
kill -KILL $PROG3; wait $PROG3 2>/dev/null
wait_for "the killed program's file removed" test ! -e "$live"
echo "  ok: the killed program's file removed once stored whole"
assert_eq "$(chc "SELECT count() FROM (SELECT run, process, seq FROM mp_snapshot GROUP BY run, process, seq HAVING count() > 1)")" 0 \
    "snapshots stored twice"
kill -TERM $AGENT; wait $AGENT
AGENT=
grep -v -e 'stored whole' -e 'removed (stored whole)' -e '^mpquery: push: stopped' agent3.err && fail "agent3 said more"
ch_stop
echo "PASS"
