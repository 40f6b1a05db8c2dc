#!/bin/bash
# mpquery push into a private clickhouse-server (tests/lib/clickhouse.sh): the
# rows of every table equal the SQLite files' (the content addresses of
# frames and stacks recomputed here in Python), the sums at each process's
# last snapshot equal mpquery info's totals, pushing again stores nothing,
# names with tabs, newlines, backslashes, quotes and invalid UTF-8 come back
# byte for byte, a push cut before its commit or by the server's death
# leaves no run and a later push stores it once, and every error is one
# line. Fake servers (Python, 127.0.0.1) stand for what ClickHouse never does.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
source "$ROOT/tests/lib/clickhouse.sh"

# ---------------------------------------------------------------- errors without a server
expect_fail 2 '^mpquery: push: needs a URL and at least one database' "$MPQ" push http://127.0.0.1:1/
expect_fail 2 '^mpquery: https://127.0.0.1:1/: https is not supported; use http://' "$MPQ" push https://127.0.0.1:1/ x.db
expect_fail 2 '^mpquery: 127.0.0.1:8123: not an http:// URL' "$MPQ" push 127.0.0.1:8123 x.db
expect_fail 2 '^mpquery: http://127.0.0.1:99999/: bad port$' "$MPQ" push http://127.0.0.1:99999/ x.db
expect_fail 2 '^mpquery: http://:8123/: no host$' "$MPQ" push http://:8123/ x.db
expect_fail 2 '^mpquery: http://\[::1:8123/: unclosed' "$MPQ" push 'http://[::1:8123/' x.db
expect_fail 2 '^mpquery: MPQ_CH_TIMEOUT: .x. is not a number of seconds' env MPQ_CH_TIMEOUT=x "$MPQ" push http://127.0.0.1:1/ x.db

# ---------------------------------------------------------------- fake servers
source "$ROOT/tests/lib/fake_clickhouse.sh"

# a port nothing listens on: a fake server's, once it is gone
fake close; down=$FAKE_URL; fake_stop
expect_fail 1 "^mpquery: ${down//./\\.}: cannot connect to 127\.0\.0\.1 port [0-9]+: Connection refused$" "$MPQ" push "$down" x.db
fake silent
expect_fail 1 "^mpquery: $FAKE_RE: no answer in 1 s \(MPQ_CH_TIMEOUT\)$" env MPQ_CH_TIMEOUT=1 "$MPQ" push "$FAKE_URL" x.db
fake close
expect_fail 1 "^mpquery: $FAKE_RE: the server closed the connection without an answer" "$MPQ" push "$FAKE_URL" x.db
fake garbage
expect_fail 1 "^mpquery: $FAKE_RE: not an HTTP answer \(is this ClickHouse's HTTP port\?\)$" "$MPQ" push "$FAKE_URL" x.db
fake web
expect_fail 1 "^mpquery: $FAKE_RE: not a ClickHouse server \(GET /ping answered '<html>hi</html>', not 'Ok\.'\)$" "$MPQ" push "$FAKE_URL" x.db
fake truncated
expect_fail 1 "^mpquery: $FAKE_RE: the server closed the connection in the middle of the answer" "$MPQ" push "$FAKE_URL" x.db
fake_stop

# ---------------------------------------------------------------- profiles
# a.db: two runs (tags and named threads; threads freeing each other's
# blocks); b.db: 50-70 processes (fork, exec, posix_spawn); c.db: interval
# and peak snapshots
MP_RUN=t-tags profile a.db "$B/tests/tags_threads" >/dev/null 2>&1 || fail "tags_threads failed"
MP_RUN=t-cross profile a.db "$B/tests/threads_cross_free" >/dev/null 2>&1 || fail "threads_cross_free failed"
MP_RUN=t-tree MP_QUIET=1 timeout 60 env LD_PRELOAD=$LIB MP_OUT=b.db "$B/tests/proc_tree" >/dev/null 2>&1 || fail "proc_tree failed"
MP_RUN=t-peak MP_INTERVAL=0.01 profile c.db "$B/tests/peak_phases" >/dev/null 2>&1 || fail "peak_phases failed"
assert_eq "$(q c.db "SELECT group_concat(reason) FROM (SELECT DISTINCT reason FROM snapshot ORDER BY reason)")" \
    "exit,interval,peak" "c.db has interval and peak snapshots"
echo junk > junk.db

ch_start

# per-table row counts in the store: "mp_process N,mp_thread N,..."
TABLES="mp_process mp_thread mp_snapshot mp_sample mp_totals"
store_counts() {
    local t out=
    for t in $TABLES; do out+="$t $(chc "SELECT count() FROM $t" "$@"),"; done
    echo "$out runs $(chc "SELECT count() FROM mp_runs" "$@")"
}
sqlite_counts() {
    local t out= n
    declare -A table=([mp_process]=process [mp_thread]=thread [mp_snapshot]=snapshot [mp_sample]=sample [mp_totals]=totals)
    for t in $TABLES; do
        n=0
        for db in "$@"; do n=$((n + $(q "$db" "SELECT count(*) FROM ${table[$t]}"))); done
        out+="$t $n,"
    done
    n=0
    for db in "$@"; do n=$((n + $(q "$db" "SELECT count(*) FROM run"))); done
    echo "$out runs $n"
}

"$MPQ" push "$CH_URL" a.db junk.db b.db c.db 2>push.err; rc=$?
cat push.err
assert_eq "$rc" 2 "push with a file that is not a profile: exit 2, the others pushed"
assert_eq "$(grep -c '^mpquery: junk.db: not a mallocprof profile (not an SQLite database)$' push.err)" 1 "junk.db: one error line"
assert_match "$(grep 't-tags:' push.err)" '^mpquery: push: a\.db: t-tags: 1 processes, [0-9]+ rows$' "a line per run: file, token, processes, rows"
nproc_tree=$(q b.db "SELECT count(*) FROM process")
assert_match "$(grep 't-tree:' push.err)" "^mpquery: push: b\\.db: t-tree: $nproc_tree processes, [0-9]+ rows$" "t-tree: $nproc_tree processes"
rows=$(sed -n 's/.*: [0-9]* processes, \([0-9]*\) rows$/\1/p' push.err | paste -sd+ | bc)
assert_match "$(tail -n 1 push.err)" "^mpquery: push: pushed 4 runs \(0 already stored\) from 3 files: $rows rows in [0-9.]+ s \([0-9]+ rows/s, [0-9.]+ runs/s\)$" \
    "the last line: runs, files, rows (the runs' lines summed), time and rates"
assert_eq "$(store_counts)" "$(sqlite_counts a.db b.db c.db)" "rows per table: the store's equal the files' (peak rows included)"
assert_eq "$(chc "SELECT sum(rows) FROM mp_runs")" "$(sqlite_counts a.db b.db c.db | tr -dc '0-9 ' | awk '{print $1 + $2 + $3 + $4 + $5}')" \
    "mp_run.rows: the run's rows in the five tables of runs"

# a file with values no recorder writes (tests/mpquery/db_corrupt.sh) is
# refused whole: nothing of it stored (the old build stored ncalls -5)
{ cat "$ROOT/schema/profile.sql"; echo "$STACK_IN"; cat "$FIX/basic.sql"; echo "$STACK_OUT"
  echo "UPDATE run SET token = 't-corrupt'; UPDATE sample SET ncalls = -5 WHERE stack = 8 AND thread = 1;"; } \
    | sqlite3 -batch corrupt.db || fail "cannot build corrupt.db"
NO_PROFILE_CHECK="$NO_PROFILE_CHECK corrupt.db"
before=$(store_counts)
"$MPQ" push "$CH_URL" corrupt.db 2>push.err; rc=$?
assert_eq "$rc" 2 "push of a corrupt file: exit 2"
assert_eq "$(head -n 1 push.err)" \
    "mpquery: corrupt.db: corrupt profile (table sample, row snapshot 1 stack 8 thread 1: ncalls -5 is out of range (0 to 2^62))" \
    "... one line naming the file, table and row"
assert_eq "$(store_counts)" "$before" "... and nothing stored"
assert_eq "$(chc "SELECT count() FROM mp_run WHERE token = 't-corrupt'") $(chc "SELECT count() FROM mp_sample WHERE ncalls < 0")" "0 0" \
    "... no run, no negative count"

# content addresses: the frames and stacks of the sampled stacks, as
# schema/clickhouse.sql defines them, computed from the files
cat > ids.py <<'EOF'
import sqlite3, sys
M, B = 0xffffffffffffffff, 0xcbf29ce484222325
def fnv(h, data):
    for x in data:
        h = ((h ^ x) * 0x100000001b3) & M
    return h
frames, stacks = set(), {}
for path in sys.argv[1:]:
    db = sqlite3.connect(path)
    db.text_factory = bytes
    fid = {}
    for i, mod, bid, off, depth, fn in db.execute(
            "SELECT f.id, m.path, m.build_id, f.offset, f.inline_depth, COALESCE(fn.name, x'') "
            "FROM frame f JOIN module m ON m.id = f.module LEFT JOIN function fn ON fn.id = f.function"):
        if mod == b'[tag]':
            fid[i] = fnv(fnv(B, b'[tag]\0'), fn)
        else:
            fid[i] = fnv(B, mod + b'\0' + bid + b'\0' + (off & M).to_bytes(8, 'little') + depth.to_bytes(4, 'little'))
    node = {i: (p, f) for i, p, f in db.execute("SELECT id, parent, frame FROM stack")}
    for (s,) in db.execute("SELECT DISTINCT stack FROM sample"):
        path = []
        while s:
            s, f = node[s]
            path.insert(0, fid[f])
        h = B
        for f in path:
            h = fnv(h, f.to_bytes(8, 'little'))
        stacks[h] = path
        frames.update(path)
for h in sorted(stacks):
    print('%d\t[%s]' % (h, ','.join(map(str, stacks[h]))))
print('frames', ' '.join(map(str, sorted(frames))))
EOF
python3 ids.py a.db b.db c.db > ids.txt || fail "ids.py failed"
assert_eq "$(chc "SELECT stack, any(frames) FROM mp_stack GROUP BY stack ORDER BY stack" | md5sum)" "$(grep -v '^frames' ids.txt | md5sum)" \
    "mp_stack: each sampled stack once, id = FNV-1a of its frames' ids, root first ($(grep -vc '^frames' ids.txt) stacks)"
assert_eq "$(chc "SELECT DISTINCT frame FROM mp_frame ORDER BY frame" | paste -sd' ' | md5sum)" "$(sed -n 's/^frames //p' ids.txt | md5sum)" \
    "mp_frame: the frames of those stacks, id = FNV-1a of module, build id, offset, depth (tags: name) ($(grep '^frames' ids.txt | wc -w) frames)"
assert_eq "$(chc "SELECT count() FROM mp_sample WHERE stack NOT IN (SELECT stack FROM mp_stack)")" 0 "every sample's stack is in mp_stack"

# the sums at each process's last snapshot (its newest row of each stack
# and thread, peaks aside) plus what had no stack, and its totals there,
# equal info's totals
LAST_SUMS="
SELECT token, pid, nc + ncalls_nostack, mt + memtot_nostack, ncalls, memtot, nfree, memlive, maxlive FROM (
  SELECT * FROM (
    SELECT run, process, pid, nc, mt FROM (
      SELECT run, process, sum(nc) AS nc, sum(mt) AS mt FROM (
        SELECT run, process, argMax(ncalls, seq) AS nc, argMax(memtot, seq) AS mt FROM mp_sample
        WHERE (run, process, seq) NOT IN (SELECT run, process, seq FROM mp_snapshot WHERE reason = 'peak')
        GROUP BY run, process, stack, thread)
      GROUP BY run, process)
    ANY INNER JOIN (SELECT run, process, pid FROM mp_process) USING (run, process))
  ANY INNER JOIN (
    SELECT run, process, ncalls, memtot, nfree, memlive, maxlive, ncalls_nostack, memtot_nostack FROM mp_totals
    WHERE thread = 0 AND (run, process, seq) IN (
        SELECT run, process, max(seq) FROM mp_snapshot WHERE reason != 'peak' GROUP BY run, process)) USING (run, process))
ANY INNER JOIN (SELECT run, token FROM mp_runs) USING run
ORDER BY token, pid FORMAT CSV"
info_sums() {   # token,pid,ncalls,memtot,ncalls,memtot,nfree,memlive,maxlive from info
    local db token
    for db in a.db b.db c.db; do
        for token in $(q $db "SELECT token FROM run"); do
            "$MPQ" info $db --run "$(q $db "SELECT id FROM run WHERE token = '$token'")" --format csv |
                awk -F, -v t="\"$token\"" 'NR > 1 { print t "," $1 "," $6 "," $7 "," $6 "," $7 "," $8 "," $10 "," $11 }'
        done
    done | sort
}
assert_eq "$(chc "$LAST_SUMS" | sort | md5sum)" "$(info_sums | md5sum)" \
    "per process at its last snapshot: samples + no-stack and totals = info's ncalls, memtot, nfree, memlive, maxlive ($(info_sums | wc -l) processes)"
assert_eq "$(chc "$LAST_SUMS" | grep t-cross)" '"t-cross",'"$(q a.db "SELECT pid FROM process p JOIN run r ON r.id = p.run WHERE token = 't-cross'")"',4016,162176,4016,162176,4000,2176,64192' \
    "threads_cross_free: 4016 calls, 162176 bytes, 4000 frees (with the recorder, glibc's 4 thread vectors are 16 bytes larger: the namespace's libc, one TLS module more)"
LEAF_SUMS="
SELECT function, sum(nc), sum(mt) FROM (
  SELECT frames[length(frames)] AS frame, nc, mt FROM (
    SELECT stack, argMax(ncalls, seq) AS nc, argMax(memtot, seq) AS mt FROM mp_sample
    WHERE run IN (SELECT run FROM mp_runs WHERE token = 't-cross') GROUP BY run, process, stack, thread)
  ANY INNER JOIN (SELECT stack, any(frames) AS frames FROM mp_stack GROUP BY stack) USING stack)
ANY INNER JOIN (SELECT frame, any(function) AS function FROM mp_frame GROUP BY frame) USING frame
WHERE function LIKE 'thread_%' GROUP BY function ORDER BY function FORMAT CSV"
assert_eq "$(chc "$LEAF_SUMS" | tr '\n' ' ')" '"thread_alloc",4000,160000 "thread_leak",12,768 ' \
    "leaf functions through mp_stack and mp_frame: thread_alloc 4000 x 160000 bytes, thread_leak 12 x 768"
assert_eq "$(chc "SELECT sum(memtot) FROM (SELECT argMax(memtot, seq) AS memtot FROM mp_sample WHERE run IN
    (SELECT run FROM mp_runs WHERE token = 't-tags') GROUP BY process, stack, thread)")" 1167076 \
    "tags_threads: 1167076 bytes with a stack (mpquery/tree.sh's total)"
assert_eq "$(chc "SELECT token, processes, host, exe FROM mp_runs WHERE token = 't-tree'" --format CSV)" \
    "$(q b.db "SELECT '\"t-tree\",$nproc_tree,\"' || host || '\",\"' || exe || '\"' FROM process ORDER BY id LIMIT 1")" \
    "mp_run: host and exe of the run's first process (lowest id)"
assert_eq "$(chc "SELECT reason, count() FROM mp_snapshot GROUP BY reason ORDER BY reason" | tr '\t\n' ' ,')" \
    "$(for db in a b c; do q $db.db "SELECT reason FROM snapshot"; done | sort | uniq -c | awk '{printf "%s %s,", $2, $1}')" \
    "snapshots by reason (peak ones too)"
assert_eq "$(chc "SELECT toString(groupArray(thread)) FROM (SELECT thread FROM mp_thread WHERE run IN (SELECT run FROM mp_runs WHERE token = 't-tags') ORDER BY thread)")" \
    "[1,2,3,4,5]" "threads numbered from 1 within the run"

# ---------------------------------------------------------------- again: nothing stored
before=$(store_counts)
"$MPQ" push "$CH_URL" a.db b.db c.db 2>again.err || fail "push again failed: $(cat again.err)"
assert_eq "$(grep -c ': already stored$' again.err)" 4 "push again: each run 'already stored'"
assert_match "$(tail -n 1 again.err)" '^mpquery: push: pushed 0 runs \(4 already stored\) from 3 files: 0 rows in' "push again: 0 runs pushed"
assert_eq "$(store_counts)" "$before" "push again: row counts unchanged"
"$MPQ" push -q "$CH_URL" a.db a.db 2>twice.err || fail "push -q failed"
assert_eq "$(cat twice.err | wc -l)" 1 "-q: only the last line"
"$MPQ" push --dry-run "$CH_URL" c.db 2>dry.err || fail "--dry-run failed"
assert_match "$(cat dry.err)" 't-peak: already stored' "--dry-run asks the server"

# ---------------------------------------------------------------- a more complete copy
# c.db as it was while the run went on (without its exit snapshot and
# what came after), pushed first; the final file then replaces it (a new
# load that view mp_runs shows), and pushing either again stores nothing
cp c.db part.db
cut="(SELECT id FROM snapshot WHERE seq >= (SELECT max(seq) FROM snapshot WHERE reason != 'peak'))"
q part.db "DELETE FROM sample WHERE snapshot IN $cut; DELETE FROM totals WHERE snapshot IN $cut;
           DELETE FROM hist WHERE snapshot IN $cut; DELETE FROM stack_hist WHERE snapshot IN $cut;
           DELETE FROM snapshot WHERE id IN $cut; DELETE FROM tick  -- those the exit snapshot rewrote"
part_snaps=$(q part.db "SELECT count(*) FROM snapshot WHERE reason != 'peak'")
full_snaps=$(q c.db "SELECT count(*) FROM snapshot WHERE reason != 'peak'")
[ "$part_snaps" -lt "$full_snaps" ] || fail "part.db should have fewer snapshots ($part_snaps, $full_snaps)"
chc "CREATE DATABASE partial"
"$MPQ" push "${CH_URL}?database=partial" part.db 2>part.err || fail "push part.db failed: $(cat part.err)"
"$MPQ" push "${CH_URL}?database=partial" c.db 2>full.err || fail "push c.db failed: $(cat full.err)"
assert_match "$(head -n 1 full.err)" "t-peak: 1 processes, [0-9]+ rows, replacing the stored copy \(1 processes, $part_snaps snapshots\)\$" \
    "the final file replaces the copy taken while the run went on"
assert_eq "$(chc "SELECT count(), any(snapshots) FROM mp_runs" --database partial)" "1	$full_snaps" "mp_runs: the final copy, once"
"$MPQ" push "${CH_URL}?database=partial" part.db c.db 2>part2.err || fail "push again failed"
assert_eq "$(grep -c ': already stored$' part2.err)" 2 "either copy again: already stored"
assert_eq "$("$MPQ" top --functions --server "${CH_URL}?database=partial" -n 0 --no-pager)" \
    "$("$MPQ" top --functions c.db -n 0 --no-pager)" "--server answers as the final file"

# ---------------------------------------------------------------- hostile names
# tabs, newlines, CR, backslashes, quotes and invalid UTF-8 in function
# names, cmdlines, thread names, labels and the tokens (the IN list of the
# stored check escapes them); compared as bytes (hex)
cp a.db w.db
sqlite3 w.db "UPDATE run SET token = 't-we''ird\\' || char(9) || 'x' WHERE token = 't-tags';
              UPDATE run SET token = 't-' || char(10) || 'nl' || x'ff' WHERE token = 't-cross';
              UPDATE function SET name = name || char(9) || 'tab' || char(10) || 'nl\\back''q' || char(13) || x'ff'
                  WHERE name IN ('in_a', 'thread_alloc');
              UPDATE process SET cmdline = cmdline || char(9) || '--x=\\' || char(10) || x'c3';
              UPDATE thread SET name = name || char(9) || '\\t' WHERE name != '';
              UPDATE snapshot SET label = 'l''a' || char(10) || 'b'" || fail "cannot make w.db"
chc "CREATE DATABASE hostile"
"$MPQ" push -q "${CH_URL}?database=hostile" w.db 2>w.err || fail "push of w.db failed: $(cat w.err)"
hex() { chc "SELECT ${3:-} hex($1) AS h FROM $2 ORDER BY h" --database hostile | tr '\n' ' '; }
hexq() { q w.db "SELECT ${3:-} hex($1) AS h FROM $2 ORDER BY h" | tr '\n' ' '; }
assert_eq "$(hex token mp_run)" "$(hexq token run)" "tokens come back byte for byte"
assert_eq "$(hex function "mp_frame WHERE position(function, 'tab') > 0" DISTINCT)" "$(hexq name "function WHERE instr(name, 'tab') > 0" DISTINCT)" \
    "function names with tab, newline, backslash, quote, CR, 0xff come back byte for byte"
assert_eq "$(hex cmdline mp_process)" "$(hexq cmdline process)" "cmdlines come back byte for byte"
assert_eq "$(hex name mp_thread)" "$(hexq name thread)" "thread names come back byte for byte"
assert_eq "$(hex label mp_snapshot)" "$(hexq label snapshot)" "labels come back byte for byte"
"$MPQ" push "${CH_URL}?database=hostile" w.db 2>w2.err || fail "push of w.db again failed: $(cat w2.err)"
assert_eq "$(grep -c 'already stored$' w2.err)" 2 "hostile tokens found stored again (the IN list's literals)"

# ---------------------------------------------------------------- users
"$MPQ" push -q "http://pushuser:secret@127.0.0.1:$CH_HTTP_PORT/" a.db 2>user.err || fail "push as pushuser failed: $(cat user.err)"
assert_match "$(cat user.err)" '\(2 already stored\)' "user and password from the URL (X-ClickHouse-User, -Key)"
expect_fail 1 "^mpquery: http://pushuser:\*\*\*@127\.0\.0\.1:$CH_HTTP_PORT/: server error \(HTTP [0-9]+, code [0-9]+\): .*pushuser" \
    "$MPQ" push "http://pushuser:wrong@127.0.0.1:$CH_HTTP_PORT/" a.db
expect_fail 1 "^mpquery: ${CH_URL//./\\.}\?database=nosuch: server error \(HTTP 404, code 81\): Database nosuch doesn't exist" \
    "$MPQ" push "${CH_URL}?database=nosuch" a.db
"$MPQ" push "$CH_URL" missing.db 2>missing.err; rc=$?
assert_eq "$rc:$(head -n 1 missing.err)" "2:mpquery: missing.db: No such file or directory" "a missing file: exit 2, one line naming it (then the summary)"

# ---------------------------------------------------------------- interrupted pushes
# cut before the commit: every row but the run's mp_run one went in
chc "CREATE DATABASE cut"
fake cut-commit "$CH_HTTP_PORT"
expect_fail 1 "^mpquery: $FAKE_RE\?database=cut: the server closed the connection without an answer.* \(INSERT INTO mp_run\)$" \
    "$MPQ" push "${FAKE_URL}?database=cut" c.db
assert_eq "$(chc "SELECT count() FROM mp_run" --database cut)" 0 "a push cut at its commit: no mp_run row"
assert_eq "$(chc "SELECT count() > 0 FROM mp_sample" --database cut)" 1 "(its other rows are in, never read)"
# a proxy that closes every connection once answered: each request finds
# its kept-alive connection closed and opens a new one
fake_stop
fake idle-close "$CH_HTTP_PORT"
"$MPQ" push "${FAKE_URL}?database=cut" c.db 2>cut.err || fail "push after the cut failed: $(cat cut.err)"
assert_match "$(cat cut.err)" 't-peak: 1 processes' "pushed again (through a server closing idle connections): stored"
assert_eq "$(chc "SELECT count(), uniqExact(run) FROM mp_runs WHERE token = 't-peak'" --database cut)" "1	1" "the run stored once"
assert_eq "$(chc "SELECT count() FROM mp_sample WHERE run IN (SELECT run FROM mp_runs)" --database cut)" \
    "$(q c.db "SELECT count(*) FROM sample")" "its samples once"
fake_stop

# the server killed in the middle of a push of 1 M stacks (3-4 s here)
fixture big big.db >/dev/null
chc "CREATE DATABASE killed"
"$MPQ" push "${CH_URL}?database=killed" big.db 2>killed.err &
push_pid=$!
for _ in $(seq 1 200); do
    n=$("$CH_CLIENT" --port "$CH_TCP_PORT" --database killed --query "SELECT count() FROM mp_stack" 2>/dev/null)
    [ "${n:-0}" -gt 0 ] && break
    sleep 0.05
done
ch_kill
wait $push_pid; rc=$?
assert_eq "$rc" 1 "the server killed midway: exit 1"
assert_match "$(cat killed.err)" "^mpquery: ${CH_URL//./\\.}\?database=killed: " "one line naming the URL: $(cat killed.err)"
assert_eq "$(wc -l < killed.err)" 1 "(only that line)"
ch_restart
assert_eq "$(chc "SELECT count() FROM mp_runs" --database killed)" 0 "the server killed midway: no run stored"
"$MPQ" push "${CH_URL}?database=killed" big.db 2>big.err || fail "push after the kill failed: $(cat big.err)"
assert_match "$(cat big.err)" 'big: 1 processes, 2002005 rows$' "pushed again: 1 M samples, 1 M stacks, 2000 frames, 5 more rows"
assert_eq "$(chc "SELECT count() FROM mp_sample WHERE run IN (SELECT run FROM mp_runs)" --database killed)" 1000000 "its samples once"
echo "# push of 1 M stacks: $(tail -n 1 big.err | sed 's/^mpquery: push: //')"
