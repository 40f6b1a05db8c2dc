-- mallocprof's store on ClickHouse: the tables `mpquery push` fills and
-- `mpquery top|fold|diff|info|hist --server` reads. mpquery compiles this file in
-- and runs each statement (they are separated by lines holding only ';')
-- before a push, so every statement is idempotent. Only SQL that ClickHouse
-- 18.16 (Debian 12's clickhouse-server) and current releases both accept.
--
-- Conventions
--   * A load is one run (one MP_RUN token) pushed once: `run` is the load's
--     id, and the first column of the key of every table of rows. Its top
--     16 bits are the day the run started (UTC, days since 1970-01-01:
--     mpquery/chstore.c's ch_day_run), the other 48 random bits chosen by
--     mpquery push (a followed run's: below). Every table of rows is
--     partitioned by that day (PARTITION BY bitShiftRight(run, 48)), so a
--     run's rows are in one partition, and `mpquery push --ttl 30d` drops
--     the partitions of the runs started more than 30 days ago, whole runs
--     only: a snapshot's rows hold only what changed since the one before,
--     so a row-age TTL would leave runs that answer wrongly (ClickHouse
--     18.16 has no TTL clause either; it came with 19.6). The ORDER BY
--     keys are those of the queries: a run's rows per (process, stack,
--     thread) in seq order for the snapshot and window sums (argMax over
--     seq), (run, process) for the joins of processes (--group, windows). A run's processes, threads and snapshots
--     are numbered within the load (process and thread from 1, in the
--     order of their ids in the file; thread 0 in mp_totals is the whole
--     process; snapshots keep their seq).
--   * A load commits by its row in mp_run, written after all its other
--     rows: rows of a load without one (an interrupted push) are never
--     read. Pushing a token again stores nothing (push asks mp_runs first),
--     unless the file holds more of the run (more processes, or as many
--     and more snapshots: a copy taken while it ran, then the final file):
--     that copy is a new load. View mp_runs shows one load per token, the
--     one with the most (processes, snapshots), ties (two pushes that
--     raced) the smaller run id, so every reader sees each token once.
--   * A followed run (mpquery push --follow: the snapshots of a running
--     program stored as they are committed) is one load per file whose id
--     is FNV-1a 64 of ("mpquery push --follow", NUL, token, NUL, host, NUL,
--     the decimal pid of its first process in the file), its top 16 bits
--     then the run's start day (mpquery/follow_ship.c),
--     the same for every agent and every restart. Its mp_run row goes with
--     its first snapshot, and each snapshot's rows are stored once per
--     (run, process, seq) and table: ClickHouse 18.16 has no insert
--     deduplication token for MergeTree, so the agent keeps its position
--     (the last snapshot stored) and, when it cannot be sure (a start, a
--     request that failed), asks each table which (process, seq) it holds
--     before sending; a table's rows of a batch go in one INSERT (one
--     block: stored whole or not at all) and a snapshot's mp_snapshot row
--     after its rows in the others. Its mp_process rows (end_time, ended)
--     and its mp_run counts (processes, snapshots, rows) are those of its
--     first snapshot until its processes end, then updated (ALTER TABLE
--     UPDATE).
--   * Frames and stacks are content-addressed, so that runs from any file
--     share them: frame = FNV-1a 64 of (module path, build id, offset,
--     inline depth), of ('[tag]', name) for a [tag] frame; stack = FNV-1a 64
--     of its frame ids, outermost first (mpquery/chstore.c has both, with
--     the bytes exactly; tests/mpquery/clickhouse_push.sh recomputes them). They are
--     dictionaries: a push may write rows that exist already, and the
--     Replacing engine folds them in the background, so readers take any()
--     per key.
--   * mp_sample holds cumulative counters per (process, stack, thread) as of
--     a snapshot, only the rows that changed since the process's previous
--     snapshot, as in the SQLite format: the value at snapshot seq S is the
--     row with the largest seq <= S among the process's snapshots that are
--     not peaks; a peak snapshot's rows are deltas against the snapshots
--     before it (schema/profile.sql).
--
-- Several servers: create these tables on every shard (as they are, or as
-- ReplicatedMergeTree for replicas), then on the server users query a
-- Distributed table per table, named as here, over the local ones renamed
-- with a _local suffix, sharded by run so that a load stays on one shard:
--
--   CREATE TABLE mp_sample AS mp_sample_local
--       ENGINE = Distributed(mallocprof_cluster, default, mp_sample_local, run);
--
-- (mallocprof_cluster is a cluster of the servers' <remote_servers>
-- configuration.) Readers select runs with subqueries over these tables,
-- and a push's mp_run row must land after its other rows: give the URL
-- &distributed_product_mode=global&insert_distributed_sync=1. The dictionaries mp_frame and mp_stack can be sharded
-- by frame and stack instead; any() per key then works as it does here.

-- The store's version, checked as a profile's PRAGMA user_version is: push
-- and --server refuse a store of a later version than theirs ("the store
-- is of version 3, this mpquery reads versions 1 to 2"), whose tables may
-- mean what they do not know. A store without this view was made before
-- versions (version 1: the same tables, not partitioned by day, run ids
-- all random) and stays so (readable, pushed to, but no --ttl); version 2
-- is partitioned by day. Raise the number with any change an older
-- mpquery would misread. The view is made with a new store only.
-- (mpquery reads its own version from this statement: chschema.c.)
CREATE VIEW IF NOT EXISTS mp_version AS SELECT toUInt32(2) AS version
;
CREATE TABLE IF NOT EXISTS mp_run (
    run         UInt64,     -- the load
    token       String,     -- MP_RUN: the run's identity across files and pushes
    start_time  Float64,    -- seconds since the epoch
    pushed      DateTime,
    source      String,     -- the database file it was pushed from
    host        String,     -- of the run's first process: process 1, the lowest id in the file
    exe         String,
    cmdline     String,
    processes   UInt32,
    snapshots   UInt32,     -- of its processes, peak snapshots aside
    rows        UInt64      -- the load's rows in mp_process, mp_thread, mp_snapshot, mp_totals
                            -- and mp_sample (count() WHERE run = R: the load is whole)
) ENGINE = MergeTree() PARTITION BY bitShiftRight(run, 48) ORDER BY (token, run)
;
-- The runs a reader sees: one load per token, the most complete.
CREATE VIEW IF NOT EXISTS mp_runs AS
SELECT * FROM mp_run WHERE run IN
    (SELECT argMax(run, tuple(processes, snapshots, 18446744073709551615 - run)) FROM mp_run GROUP BY token)
;
CREATE TABLE IF NOT EXISTS mp_process (
    run         UInt64,
    process     UInt32,
    pid         Int64,
    ppid        Int64,
    exe         String,
    cmdline     String,
    host        String,
    start_time  Float64,
    end_time    Float64,    -- -1: no snapshot yet
    settings    String,
    ended       String
) ENGINE = MergeTree() PARTITION BY bitShiftRight(run, 48) ORDER BY (run, process)
;
CREATE TABLE IF NOT EXISTS mp_thread (
    run         UInt64,
    process     UInt32,
    thread      UInt32,
    seq         Int64,
    tid         Int64,
    name        String
) ENGINE = MergeTree() PARTITION BY bitShiftRight(run, 48) ORDER BY (run, thread)
;
CREATE TABLE IF NOT EXISTS mp_snapshot (
    run         UInt64,
    process     UInt32,
    seq         UInt32,
    time        Float64,
    reason      String,     -- exit | interval | api | signal | exec | peak
    label       String,
    profiler_memory Int64
) ENGINE = MergeTree() PARTITION BY bitShiftRight(run, 48) ORDER BY (run, process, seq)
;
CREATE TABLE IF NOT EXISTS mp_sample (
    run         UInt64,
    process     UInt32,
    seq         UInt32,     -- the snapshot
    stack       UInt64,
    thread      UInt32,
    ncalls      Int64,
    memtot      Int64,
    nfree       Int64,
    memlive     Int64,
    maxlive     Int64,
    ntemp       Int64,
    time        Int64,
    -- format version 5: the program's own mappings (rows of stacks whose
    -- leaf is an '[mmap]' frame) and cold blocks (MP_COLD). A store made
    -- before them gets them with ALTER TABLE mp_sample ADD COLUMN nmap
    -- Int64 DEFAULT 0 (and so on, in this order).
    nmap        Int64 DEFAULT 0,
    mapped      Int64 DEFAULT 0,
    maxmapped   Int64 DEFAULT 0,
    rss         Int64 DEFAULT 0,
    memcold     Int64 DEFAULT 0,
    coldage     Int64 DEFAULT 0
) ENGINE = MergeTree() PARTITION BY bitShiftRight(run, 48) ORDER BY (run, process, stack, thread, seq)
;
CREATE TABLE IF NOT EXISTS mp_totals (
    run         UInt64,
    process     UInt32,
    seq         UInt32,
    thread      UInt32,     -- 0: the whole process
    ncalls      Int64,
    memtot      Int64,
    nfree       Int64,
    memlive     Int64,
    maxlive     Int64,
    ncalls_nostack Int64,
    memtot_nostack Int64,
    nfree_unknown  Int64
) ENGINE = MergeTree() PARTITION BY bitShiftRight(run, 48) ORDER BY (run, process, seq, thread)
;
CREATE TABLE IF NOT EXISTS mp_frame (
    frame       UInt64,
    module      String,
    build_id    String,
    offset      Int64,
    inline_depth UInt32,
    function    String,     -- '' when no symbol was found
    file        String,
    line        UInt32
) ENGINE = ReplacingMergeTree() ORDER BY frame
;
CREATE TABLE IF NOT EXISTS mp_stack (
    stack       UInt64,
    frames      Array(UInt64)   -- outermost first
) ENGINE = ReplacingMergeTree() ORDER BY stack
;
-- The size histograms (schema/profile.sql's hist and stack_hist): per
-- snapshot of a process, and per (stack, thread) the rows that changed
-- since the process's previous snapshot, as in the SQLite format.
CREATE TABLE IF NOT EXISTS mp_hist (
    run         UInt64,
    process     UInt32,
    seq         UInt32,
    lo          Int64,      -- the class: lo <= size < 2 * lo (0: size 0)
    ncalls      Int64,
    memtot      Int64,
    nlive       Int64,
    memlive     Int64
) ENGINE = MergeTree() PARTITION BY bitShiftRight(run, 48) ORDER BY (run, process, seq, lo)
;
CREATE TABLE IF NOT EXISTS mp_stack_hist (
    run         UInt64,
    process     UInt32,
    seq         UInt32,
    stack       UInt64,
    thread      UInt32,
    lo          Int64,
    ncalls      Int64,
    memtot      Int64,
    nlive       Int64,
    memlive     Int64
) ENGINE = MergeTree() PARTITION BY bitShiftRight(run, 48) ORDER BY (run, process, stack, thread, lo, seq)
;
-- Growth over time, for windows over the whole store ("what grew in the
-- last hour", fleet-wide or per executable: mpquery/chwindow.c). push
-- writes, per snapshot of a process's chain (peak snapshots aside) and
-- stack, what each counter grew by since the process's previous snapshot
-- (the change of its rows, summed over threads: a maximum's too, so that
-- its value at a time is the sum of its growth until then), at the
-- snapshot's time rounded up to the second (`at`: a window (S, U] of
-- whole seconds holds the snapshots with S < time <= U, as the files'
-- windows), with its process's --group exe key (g: exe, ' ', argv[0]).
-- The rows go to table mp_growth, which keeps none (engine Null): the
-- materialized views below sum them, per second and per minute (the
-- minute M holds M - 60 < at <= M), and note which snapshots they hold,
-- from each INSERT's block. A window then reads its whole minutes from
-- mp_growth_minute and the seconds at its ends from mp_growth_second,
-- instead of every row of mp_sample. mp_growth_run lists the loads whose
-- growth is stored (written before their mp_run row): a store with runs
-- pushed by an older mpquery answers from mp_sample. (The views of an
-- INSERT are filled one after the other, not at once: a server killed
-- amid them can leave a snapshot's growth in some and not in others.
-- One view whose table holds the three kinds of rows would make it one
-- part, stored whole or not at all.) The rollups are
-- partitioned by the day of `at` (days since 1970-01-01, as runs are by
-- their start's), which --ttl drops as it drops runs.
CREATE TABLE IF NOT EXISTS mp_growth (
    run         UInt64,
    process     UInt32,
    seq         UInt32,
    at          UInt32,     -- the snapshot's time, rounded up to the second
    g           String,     -- --group exe's key of the process
    stack       UInt64,
    ncalls      Int64,      -- each counter's growth since the process's previous snapshot
    memtot      Int64,
    nfree       Int64,
    memlive     Int64,
    maxlive     Int64,
    ntemp       Int64,
    time        Int64,
    nmap        Int64,
    mapped      Int64,
    maxmapped   Int64,
    rss         Int64,
    memcold     Int64,
    coldage     Int64
) ENGINE = Null
;
-- push --follow asks it which snapshots of a load are stored, as it asks
-- the other tables (mpquery/follow_ship.c)
CREATE MATERIALIZED VIEW IF NOT EXISTS mp_growth_seen
ENGINE = MergeTree() PARTITION BY bitShiftRight(run, 48) ORDER BY (run, process, seq)
AS SELECT run, process, seq FROM mp_growth GROUP BY run, process, seq
;
CREATE MATERIALIZED VIEW IF NOT EXISTS mp_growth_second
ENGINE = SummingMergeTree() PARTITION BY intDiv(at, 86400) ORDER BY (at, g, stack)
AS SELECT at, g, stack, ncalls, memtot, nfree, memlive, maxlive, ntemp, time, nmap, mapped, maxmapped, rss,
          memcold, coldage FROM mp_growth
;
CREATE MATERIALIZED VIEW IF NOT EXISTS mp_growth_minute
ENGINE = SummingMergeTree() PARTITION BY intDiv(minute, 86400) ORDER BY (minute, g, stack)
AS SELECT intDiv(at + 59, 60) * 60 AS minute, g, stack, ncalls, memtot, nfree, memlive, maxlive, ntemp, time,
          nmap, mapped, maxmapped, rss, memcold, coldage FROM mp_growth
;
CREATE TABLE IF NOT EXISTS mp_growth_run (
    run         UInt64
) ENGINE = MergeTree() PARTITION BY bitShiftRight(run, 48) ORDER BY run
