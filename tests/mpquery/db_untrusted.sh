#!/bin/bash
# A profile is untrusted input: SQL that a file brings never runs. Copies of
# a real profile with a planted trigger (on snapshot, on process, on frame,
# which symbolize updates), an extra view, an extra index, or table stack
# redefined are refused by every command (exit 2, one line naming the file)
# and stay byte for byte unchanged. Files as older versions wrote them
# (UNIQUE (parent, frame) on stack; the first version's views) and files
# SQLite added its own tables to (ANALYZE, AUTOINCREMENT) are still read.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
[ -x "$B/tests/cxx_alloc" ] || fail "$B/tests/cxx_alloc is not built (make)"

profile a.db "$B/tests/cxx_alloc" 2>/dev/null || fail "cannot profile cxx_alloc"
# ncalls,memtot,nfree,nlive,memlive,maxlive of the stacks that free (tests/progs/cxx_alloc.cc)
expected="ncalls,memtot,nfree,nlive,memlive,maxlive
500,12000,500,0,0,24
300,12300,300,0,0,41
100,20000,100,0,0,200
20,2020,20,0,0,2020
11,8188,11,0,0,6144
1,640,1,0,0,640"
top_of() { "$MPQ" top "$1" --by nfree --format csv | cut -d, -f1-6; }
assert_eq "$(top_of a.db)" "$expected" "the untouched profile is read: top --by nfree"

# planted NAME SQL: a copy of a.db with SQL applied, as NAME.db
planted() { cp a.db "$1.db" && sqlite3 -batch "$1.db" "$2" || fail "cannot plant $1"; }
planted trig_snapshot "CREATE TRIGGER keep_quiet AFTER INSERT ON snapshot BEGIN SELECT RAISE(IGNORE); END;"
planted trig_process "CREATE TRIGGER wipe AFTER INSERT ON process BEGIN DELETE FROM sample; END;"
planted trig_frame "CREATE TRIGGER rewrite AFTER UPDATE ON frame BEGIN UPDATE sample SET ncalls = 0; END;"
planted view "CREATE VIEW evil AS SELECT * FROM sample;"
planted index "CREATE INDEX evil_ix ON sample(ncalls);"
planted stack "CREATE TEMP TABLE s AS SELECT * FROM stack_run; DROP TABLE stack_run;
    CREATE TABLE stack_run (id INTEGER PRIMARY KEY, parent INTEGER NOT NULL, frames TEXT NOT NULL DEFAULT (random()));
    INSERT INTO stack_run SELECT * FROM s;"
why_trig_snapshot="trigger 'keep_quiet' is not part of the mallocprof schema"
why_trig_process="trigger 'wipe' is not part of the mallocprof schema"
why_trig_frame="trigger 'rewrite' is not part of the mallocprof schema"
why_view="view 'evil' is not part of the mallocprof schema"
why_index="index 'evil_ix' is not part of the mallocprof schema"
why_stack="table 'stack_run' differs from the mallocprof schema"

for name in trig_snapshot trig_process trig_frame view index stack; do
    db=$name.db
    why=why_$name
    sum=$(sha1sum "$db")
    for cmd in top info fold symbolize; do
        expect_fail 2 "^mpquery: $db: ${!why}\$" "$MPQ" $cmd "$db"
    done
    expect_fail 2 "^mpquery: $db: ${!why}\$" "$MPQ" diff a.db "$db"
    expect_fail 2 "^mpquery: $db: ${!why}\$" "$MPQ" sql "$db" "SELECT count(*) FROM sample"
    assert_eq "$(sha1sum "$db")" "$sum" "$db: unchanged"
done

# historical schemas: stack with UNIQUE (parent, frame) before 77d6cec (an
# sqlite_autoindex_stack_1 with it), and also the views of 5a1e854
git -C "$ROOT" show 5a1e854:schema/profile.sql > v0.sql 2>/dev/null || fail "no commit 5a1e854 in the repository"
git -C "$ROOT" show 77d6cec^:schema/profile.sql > v1.sql || fail "no commit 77d6cec in the repository"
old_stack=$(sed -n '/CREATE TABLE IF NOT EXISTS stack (/,/^);/p' v1.sql)
# (and the view that walked that table, before version 6's runs)
old_walk=$(sed -n '/CREATE VIEW IF NOT EXISTS stack_frames/,/JOIN frame_info fi ON fi.frame = s.frame;/p' v1.sql)
old_views=$(sed -n '/CREATE VIEW IF NOT EXISTS stack_frames/,/^GROUP BY stack;/p' v0.sql)
# those files are of format version 1 too: sample without ntemp, its view,
# process without ended
old_sample=$(sed -n '/CREATE TABLE IF NOT EXISTS sample/,/^) WITHOUT ROWID;/p' v1.sql)
old_last=$(sed -n '/CREATE VIEW IF NOT EXISTS last_sample/,/thread = sa.thread);/p' v1.sql)
old_process=$(sed -n '/CREATE TABLE IF NOT EXISTS process (/,/^);/p' v1.sql)
# and with the UNIQUE names and frames that version 6 dropped
old_dicts=$(sed -n '/CREATE TABLE IF NOT EXISTS \(module\|function\|file\|frame\) (/,/^);/p' v1.sql)
# and without version 3's peak snapshots: its views; without version 4's ticks, version 5's ledger
old_last_snapshot=$(sed -n '/CREATE VIEW IF NOT EXISTS last_snapshot/,/process = s.process);/p' v1.sql)
resample="DROP TABLE ledger; DROP TABLE tick; DROP VIEW peak_sample; DROP VIEW peak_snapshot; DROP TABLE stack_hist; DROP VIEW last_snapshot; $old_last_snapshot
    CREATE TEMP TABLE sa AS SELECT snapshot, stack, thread, ncalls, memtot, nfree, memlive, maxlive FROM sample;
    DROP VIEW last_sample; DROP TABLE sample; DROP TABLE hist; $old_sample
    CREATE INDEX IF NOT EXISTS sample_stack ON sample(stack); INSERT INTO sample SELECT * FROM sa; $old_last
    CREATE TEMP TABLE pr AS SELECT id, run, pid, ppid, exe, cmdline, host, start_time, end_time, settings FROM process;
    DROP TABLE process; $old_process INSERT INTO process SELECT * FROM pr;
    CREATE TEMP TABLE mo AS SELECT * FROM module; CREATE TEMP TABLE fn AS SELECT * FROM function;
    CREATE TEMP TABLE fl AS SELECT * FROM file; CREATE TEMP TABLE fr AS SELECT * FROM frame;
    DROP TABLE frame; DROP TABLE file; DROP TABLE function; DROP TABLE module; $old_dicts
    INSERT INTO module SELECT * FROM mo; INSERT INTO function SELECT * FROM fn;
    INSERT INTO file SELECT * FROM fl; INSERT INTO frame SELECT * FROM fr;
    PRAGMA user_version = 1;"
restack="$resample CREATE TEMP TABLE s AS SELECT * FROM stack; DROP VIEW stack; DROP TABLE stack_run; $old_stack
    INSERT INTO stack SELECT * FROM s; DROP VIEW stack_frames; $old_walk"
planted unique "$restack"
assert_eq "$(q unique.db "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_autoindex_stack_1'")" 1 \
    "the old stack table has its autoindex"
assert_eq "$(top_of unique.db)" "$expected" "stack with UNIQUE (parent, frame) (before 77d6cec) is read"
planted first "$restack DROP VIEW stack_path; DROP VIEW stack_frames; $old_views"
assert_eq "$(top_of first.db)" "$expected" "the schema of 5a1e854 (old stack and views) is read"
n=$(q a.db "SELECT count(*) FROM stack_totals")
assert_eq "$("$MPQ" sql first.db "SELECT count(*) AS n FROM stack_totals" --format csv | tail -n 1)" "$n" \
    "... and its views are usable ($n stacks in stack_totals)"
planted mixed "DROP VIEW stack_path; DROP VIEW stack_frames; $old_views"
expect_fail 2 "^mpquery: mixed.db: view 'stack_frames' differs from the mallocprof schema$" "$MPQ" top mixed.db

# what SQLite itself adds: statistics (ANALYZE), sqlite_sequence (AUTOINCREMENT)
planted analyzed "ANALYZE;"
assert_eq "$(top_of analyzed.db)" "$expected" "an ANALYZEd profile (sqlite_stat1) is read"
planted sequence "CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT); INSERT INTO t DEFAULT VALUES; DROP TABLE t;"
assert_eq "$(q sequence.db "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'")" 1 "sqlite_sequence left behind"
assert_eq "$(top_of sequence.db)" "$expected" "a profile with sqlite_sequence is read"

# an object name that would break the one-line message
planted newline "CREATE VIEW \"two
lines\" AS SELECT 1;"
expect_fail 2 "^mpquery: newline.db: view 'two\\?lines' is not part of the mallocprof schema$" "$MPQ" top newline.db

# The recorder refuses the same files: the program's output and exit status
# are its own, it does not hang (a recursive trigger on snapshot), the file
# is unchanged, and one line says why.
planted recursive "PRAGMA recursive_triggers = ON;
    CREATE TRIGGER loop AFTER INSERT ON snapshot BEGIN INSERT INTO snapshot(process, seq, time, reason, label, profiler_memory) VALUES (NEW.process, NEW.seq + 1, 0, 'x', '', 0); END;"
why_recursive="trigger 'loop' is not part of the mallocprof schema"
for f in recursive trig_snapshot trig_process view index stack; do
    before=$(sha1sum < $f.db)
    LD_PRELOAD=$LIB MP_OUT=$f.db timeout 60 "$B/tests/cxx_alloc" >out 2>err; rc=$?
    "$B/tests/cxx_alloc" >native.out 2>/dev/null; native=$?
    assert_eq "$rc" "$native" "recorder, $f: exit status"
    assert_eq "$(cat out)" "$(cat native.out)" "recorder, $f: stdout"
    assert_eq "$(sha1sum < $f.db)" "$before" "recorder, $f: file unchanged"
    var=why_$f
    assert_eq "$(sort -u err)" "mallocprof: error: cannot write $T/$f.db: ${!var} (snapshot lost)" "recorder, $f: one line per snapshot, why"
done
