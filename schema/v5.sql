-- mallocprof profile database, format version 5 (the PRAGMA user_version at the
-- end: the one place the version is written; the build makes SCHEMA_VERSION of it).
--
-- This file is the single definition of the format: both libmallocprof.so
-- (the writer) and mpquery (the reader) compile it in. Every statement is
-- idempotent so that many processes of one run can open the same file.
--
-- Conventions
--   * Text is stored once: names live in function/file/module and are
--     referenced by integer id.
--   * stack is a prefix tree of frames; a stack is identified by its leaf
--     node. parent = 0 marks a root (outermost frame). Ids are stable: rows of
--     the dictionary tables (module, function, file, frame, stack) are never
--     updated in a way that changes their key, nor deleted.
--   * A return address resolves to one frame per inline level: inline_depth 0
--     is the function the address is in, 1.. are functions inlined into it,
--     outermost first. In a stack, the frames of one address appear in that
--     order (caller before callee), so "root;...;leaf" reads as source does.
--   * sample rows hold cumulative counters of one (stack, allocating thread)
--     as of their snapshot. A snapshot stores only the rows that changed since
--     the previous snapshot of the same process: the value of (stack, thread)
--     at snapshot S is the row with the largest snapshot id <= S of that
--     process. View last_sample does this for the latest snapshot.
--   * Peak snapshots (reason 'peak', version 3): the process as it was when
--     its live bytes were highest so far (within max(1/128, 4 KiB) of the
--     peak), written by the first snapshot after a new peak, just before
--     it, or on their own while the process runs once the peak is likely
--     final (a process killed after that has a peak snapshot only). Their rows are not in the chain of the others: the value of
--     (stack, thread) at a peak snapshot P is P's row, or else the newest
--     row of the process's other snapshots before P; the value at any other
--     snapshot S ignores the rows of peak snapshots. The latest peak
--     snapshot of a process is its peak. Their totals and hist rows are
--     complete, as for every snapshot.
--   * Ticks (version 4): the process's totals every few milliseconds,
--     without per-stack rows (table tick), for memory over time.
--   * Special frames have a module whose path starts with '[':
--     '[unknown]' (offset = absolute address), '[truncated]' (the stack was
--     deeper than MP_DEPTH; the marker is the root), '[tag]' (a scope pushed
--     with mp_tag_push; function = the tag's name, offset = 48 bits of
--     its FNV-1a hash (prof/hash.h tag_offset), alike in every process),
--     '[mmap]' (version 5: the leaf of a mapping's stack, below the code
--     that called mmap; function = 'anonymous', 'anonymous shared' or the
--     mapped file's path; offset = 48 bits of the name's FNV-1a hash).
--   * Mappings (version 5): the program's own mmap/mremap/brk calls (not
--     the allocator's: those are heap) are sample rows of stacks whose leaf
--     is an '[mmap]' frame, with the heap counters 0 and nmap, mapped,
--     maxmapped, rss set; heap rows have those 0. Peak snapshots hold no
--     mapping rows (the value at a peak is the previous snapshot's).
--   * Cold blocks (version 5, MP_COLD=1): memcold and coldage of heap rows.
--   * The ledger (version 5): where the process's resident memory went at
--     each snapshot, one row per line (table ledger).

CREATE TABLE IF NOT EXISTS run (
    id          INTEGER PRIMARY KEY,
    token       TEXT NOT NULL UNIQUE,  -- MP_RUN, inherited by child processes
    start_time  REAL NOT NULL          -- seconds since the epoch
);

CREATE TABLE IF NOT EXISTS process (
    id          INTEGER PRIMARY KEY,
    run         INTEGER NOT NULL REFERENCES run(id),
    pid         INTEGER NOT NULL,
    ppid        INTEGER NOT NULL,
    exe         TEXT NOT NULL,          -- /proc/self/exe
    cmdline     TEXT NOT NULL,          -- arguments joined by single spaces
    host        TEXT NOT NULL,
    start_time  REAL NOT NULL,          -- profiler start, seconds since the epoch
    end_time    REAL,                   -- time of the latest snapshot
    settings    TEXT NOT NULL,          -- "MP_DEPTH=128 MP_THRESHOLD=0 ..."
    ended       TEXT NOT NULL DEFAULT ''    -- how it ended, as its last snapshot saw it: 'exit N',
                                        -- '_exit N', 'quick_exit', 'exec', 'signal SIGNAME';
                                        -- '' while running, or killed (version 2)
);

CREATE TABLE IF NOT EXISTS thread (
    id          INTEGER PRIMARY KEY,
    process     INTEGER NOT NULL REFERENCES process(id),
    seq         INTEGER NOT NULL,       -- 1 = first thread seen in the process
    tid         INTEGER NOT NULL,
    name        TEXT NOT NULL DEFAULT '',
    UNIQUE (process, seq)
);

CREATE TABLE IF NOT EXISTS module (
    id          INTEGER PRIMARY KEY,
    path        TEXT NOT NULL,
    build_id    TEXT NOT NULL DEFAULT '',   -- hex, '' when the file has none
    UNIQUE (path, build_id)
);

CREATE TABLE IF NOT EXISTS function (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE        -- demangled
);

CREATE TABLE IF NOT EXISTS file (
    id          INTEGER PRIMARY KEY,
    path        TEXT NOT NULL UNIQUE
);

CREATE TABLE IF NOT EXISTS frame (
    id           INTEGER PRIMARY KEY,
    module       INTEGER NOT NULL REFERENCES module(id),
    offset       INTEGER NOT NULL,           -- return address - module load base
    inline_depth INTEGER NOT NULL DEFAULT 0, -- 0 = real frame, >0 = inlined
    function     INTEGER REFERENCES function(id),   -- NULL: no symbol found
    file         INTEGER REFERENCES file(id),
    line         INTEGER NOT NULL DEFAULT 0,        -- 0: unknown
    UNIQUE (module, offset, inline_depth)
);

CREATE TABLE IF NOT EXISTS stack (
    id          INTEGER PRIMARY KEY,
    parent      INTEGER NOT NULL,            -- 0 = root
    frame       INTEGER NOT NULL REFERENCES frame(id)
    -- (parent, frame) is unique: every writer checks against its mirror of
    -- this table, synced inside its exclusive transaction. No index enforces
    -- it: on the largest insert of a flush it would cost as much as the rows.
);

CREATE TABLE IF NOT EXISTS snapshot (
    id          INTEGER PRIMARY KEY,
    process     INTEGER NOT NULL REFERENCES process(id),
    seq         INTEGER NOT NULL,            -- 1, 2, ... within the process
    time        REAL NOT NULL,
    reason      TEXT NOT NULL,               -- exit | interval | api | signal | exec
    label       TEXT NOT NULL DEFAULT '',
    profiler_memory INTEGER NOT NULL DEFAULT 0,  -- bytes the profiler itself mapped
    UNIQUE (process, seq)
);

CREATE TABLE IF NOT EXISTS sample (
    snapshot    INTEGER NOT NULL REFERENCES snapshot(id),
    stack       INTEGER NOT NULL REFERENCES stack(id),
    thread      INTEGER NOT NULL REFERENCES thread(id),
    ncalls      INTEGER NOT NULL,   -- allocations
    memtot      INTEGER NOT NULL,   -- bytes requested
    nfree       INTEGER NOT NULL,   -- of these blocks, how many were freed
    memlive     INTEGER NOT NULL,   -- bytes still allocated
    maxlive     INTEGER NOT NULL,   -- peak of memlive for this (stack, thread)
    ntemp       INTEGER NOT NULL DEFAULT 0, -- of these blocks, how many were temporary: freed
                                    -- by their thread before it allocated or freed anything else (version 2)
    time        INTEGER NOT NULL DEFAULT 0, -- MP_TIME: nanoseconds of the thread's wall time before
                                    -- these allocations, since its previous one (version 3)
    nmap        INTEGER NOT NULL DEFAULT 0, -- mappings made (successful mmap calls, brk growth) (version 5)
    mapped      INTEGER NOT NULL DEFAULT 0, -- bytes of them mapped now
    maxmapped   INTEGER NOT NULL DEFAULT 0, -- peak of mapped for this (stack, thread)
    rss         INTEGER NOT NULL DEFAULT 0, -- bytes of them resident at the snapshot
    memcold     INTEGER NOT NULL DEFAULT 0, -- MP_COLD: live bytes on pages not written since the
                                    -- process's previous snapshot (version 5)
    coldage     INTEGER NOT NULL DEFAULT 0, -- MP_COLD: snapshots the longest-cold of these live
                                    -- blocks has stayed unwritten (0: none cold)
    PRIMARY KEY (snapshot, stack, thread)
) WITHOUT ROWID;

-- Size histogram per snapshot of a process, log2 classes of the block size:
-- lo <= size < 2 * lo (lo = 0: size 0). ncalls, memtot (bytes requested):
-- allocations of the class; nlive, memlive: its blocks live at the
-- snapshot. The size is the requested one with every block tracked; in
-- the cheap modes it is the allocator's (as are live bytes there). Only
-- the classes with something in them. (Version 2.)
CREATE TABLE IF NOT EXISTS hist (
    snapshot    INTEGER NOT NULL REFERENCES snapshot(id),
    lo          INTEGER NOT NULL,
    ncalls      INTEGER NOT NULL,
    memtot      INTEGER NOT NULL,
    nlive       INTEGER NOT NULL,
    memlive     INTEGER NOT NULL,
    PRIMARY KEY (snapshot, lo)
) WITHOUT ROWID;

-- Size histogram per stack and allocating thread (version 3): the classes
-- of the hist table, for the blocks of one sample row's (stack, thread),
-- when they are of several classes: a (stack, thread) without rows here
-- allocated in one class, that of its mean size (memtot / ncalls), with
-- its sample row's values. As for sample rows, a snapshot stores the rows
-- that changed since the previous snapshot of the process, and the value
-- at snapshot S is the row with the largest snapshot id <= S; peak
-- snapshots have none (a per-stack histogram at the peak is not kept).
CREATE TABLE IF NOT EXISTS stack_hist (
    snapshot    INTEGER NOT NULL REFERENCES snapshot(id),
    stack       INTEGER NOT NULL REFERENCES stack(id),
    thread      INTEGER NOT NULL REFERENCES thread(id),
    lo          INTEGER NOT NULL,
    ncalls      INTEGER NOT NULL,
    memtot      INTEGER NOT NULL,
    nlive       INTEGER NOT NULL,
    memlive     INTEGER NOT NULL,
    PRIMARY KEY (snapshot, stack, thread, lo)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS stack_hist_stack ON stack_hist(stack);

-- Exact totals per snapshot: one row per thread (thread = its id) and one for
-- the whole process (thread = 0). They include allocations that got no stack.
CREATE TABLE IF NOT EXISTS totals (
    snapshot    INTEGER NOT NULL REFERENCES snapshot(id),
    thread      INTEGER NOT NULL,            -- 0 = whole process
    ncalls      INTEGER NOT NULL,
    memtot      INTEGER NOT NULL,
    nfree       INTEGER NOT NULL,
    memlive     INTEGER NOT NULL,
    maxlive     INTEGER NOT NULL,            -- peak live bytes
    ncalls_nostack INTEGER NOT NULL,         -- allocations recorded without a stack
    memtot_nostack INTEGER NOT NULL,
    nfree_unknown  INTEGER NOT NULL,         -- frees of blocks the profiler never saw
    PRIMARY KEY (snapshot, thread)
) WITHOUT ROWID;

-- The process's totals over time (version 4), read by its profiler's
-- background thread every MP_TICK seconds at first, the interval doubled
-- each time the points fill the recorder's buffer (every other point is
-- then dropped): a run of any length keeps between 100 and 200 evenly
-- spaced points. Each snapshot rewrites the process's rows: the buffer's
-- points, then one of the snapshot's own totals at its time (the last row
-- of a process is its latest snapshot's totals).
CREATE TABLE IF NOT EXISTS tick (
    process     INTEGER NOT NULL REFERENCES process(id),
    time        REAL NOT NULL,               -- seconds since the epoch
    ncalls      INTEGER NOT NULL,            -- as the totals row of the process (thread = 0)
    memtot      INTEGER NOT NULL,
    memlive     INTEGER NOT NULL,
    rss         INTEGER NOT NULL,            -- resident bytes (/proc/self/statm); 0: unknown
    mapped      INTEGER NOT NULL DEFAULT 0,  -- bytes of the program's own mappings (version 5)
    PRIMARY KEY (process, time)
) WITHOUT ROWID;

-- Where the resident memory went (version 5): at each snapshot (peak
-- snapshots aside), one row per line of the ledger, from
-- /proc/self/smaps, mallinfo2() and the profiler's own figures. The lines
-- of a snapshot, 'rss' aside, add up to its 'rss' line (the kernel's
-- figure), 'unexplained' taking the difference (negative when the others
-- overestimate). Lines: 'rss', 'heap live' (requested bytes of live
-- blocks), 'heap overhead' (the allocator's bytes on live blocks beyond
-- the requested ones), 'heap free' (free memory the allocator keeps
-- resident), 'mmap anonymous', 'mmap file' (the program's own mappings),
-- 'thread stacks', 'modules' (the loaded files' code and data), 'profiler'
-- (the profiler's own memory), 'unexplained'. bytes: resident; size: the
-- line's virtual size (mapped, or the allocator's bytes), 0 when it has none.
CREATE TABLE IF NOT EXISTS ledger (
    snapshot    INTEGER NOT NULL REFERENCES snapshot(id),
    line        TEXT NOT NULL,
    bytes       INTEGER NOT NULL,
    size        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (snapshot, line)
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS sample_stack ON sample(stack);
CREATE INDEX IF NOT EXISTS snapshot_process ON snapshot(process);

-- ---------------------------------------------------------------- views

-- One row per frame with its names resolved.
CREATE VIEW IF NOT EXISTS frame_info AS
SELECT f.id AS frame, m.path AS module, m.build_id, f.offset, f.inline_depth,
       COALESCE(fn.name, '') AS function, COALESCE(fl.path, '') AS file, f.line
FROM frame f JOIN module m ON m.id = f.module
LEFT JOIN function fn ON fn.id = f.function
LEFT JOIN file fl ON fl.id = f.file;

-- The latest snapshot of each process (a peak snapshot never is).
CREATE VIEW IF NOT EXISTS last_snapshot AS
SELECT s.* FROM snapshot s
WHERE s.seq = (SELECT MAX(seq) FROM snapshot t WHERE t.process = s.process AND t.reason != 'peak');

-- Current value of every (process, stack, thread) as of its process's latest
-- snapshot (the newest row of each key, peak snapshots aside).
CREATE VIEW IF NOT EXISTS last_sample AS
SELECT sn.process, sa.stack, sa.thread, sa.ncalls, sa.memtot, sa.nfree,
       sa.memlive, sa.maxlive, sa.ntemp, sa.time, sa.nmap, sa.mapped, sa.maxmapped, sa.rss,
       sa.memcold, sa.coldage
FROM sample sa JOIN snapshot sn ON sn.id = sa.snapshot
WHERE sa.snapshot = (SELECT MAX(s2.snapshot) FROM sample s2 JOIN snapshot sn2 ON sn2.id = s2.snapshot
                     WHERE s2.stack = sa.stack AND s2.thread = sa.thread AND sn2.reason != 'peak');

-- Each process's peak: its latest peak snapshot (version 3).
CREATE VIEW IF NOT EXISTS peak_snapshot AS
SELECT s.* FROM snapshot s
WHERE s.seq = (SELECT MAX(seq) FROM snapshot t WHERE t.process = s.process AND t.reason = 'peak');

-- The value of every (process, stack, thread) at its process's peak.
CREATE VIEW IF NOT EXISTS peak_sample AS
SELECT ps.process, sa.stack, sa.thread, sa.ncalls, sa.memtot, sa.nfree,
       sa.memlive, sa.maxlive, sa.ntemp, sa.time, sa.nmap, sa.mapped, sa.maxmapped, sa.rss,
       sa.memcold, sa.coldage
FROM peak_snapshot ps JOIN snapshot sn ON sn.process = ps.process
JOIN sample sa ON sa.snapshot = sn.id
WHERE sa.snapshot = (SELECT MAX(s2.snapshot) FROM sample s2 JOIN snapshot sn2 ON sn2.id = s2.snapshot
                     WHERE s2.stack = sa.stack AND s2.thread = sa.thread AND sn2.process = ps.process
                       AND (sn2.id = ps.id OR (sn2.reason != 'peak' AND sn2.id < ps.id)));

-- The frames of every stack that has samples, depth 0 = leaf, walking
-- towards the root.
CREATE VIEW IF NOT EXISTS stack_frames AS
WITH RECURSIVE walk(stack, depth, node) AS (
    SELECT DISTINCT stack, 0, stack FROM sample
    UNION ALL
    SELECT w.stack, w.depth + 1, s.parent FROM walk w JOIN stack s ON s.id = w.node
    WHERE s.parent != 0
)
SELECT w.stack, w.depth, fi.* FROM walk w
JOIN stack s ON s.id = w.node JOIN frame_info fi ON fi.frame = s.frame;

-- Leaf function of each stack and its "root;...;leaf" path of function names.
CREATE VIEW IF NOT EXISTS stack_path AS
SELECT stack,
       MAX(CASE WHEN depth = 0 THEN function END) AS leaf,
       group_concat(CASE WHEN function != '' THEN function
                         ELSE module || '+0x' || printf('%x', offset) END, ';') AS path
FROM (SELECT * FROM stack_frames ORDER BY stack, depth DESC) f
GROUP BY stack;

-- Current counters per stack summed over threads and processes, with the path.
CREATE VIEW IF NOT EXISTS stack_totals AS
SELECT ls.stack, SUM(ncalls) AS ncalls, SUM(memtot) AS memtot, SUM(nfree) AS nfree,
       SUM(memlive) AS memlive, SUM(maxlive) AS maxlive, sp.leaf, sp.path
FROM last_sample ls JOIN stack_path sp ON sp.stack = ls.stack
GROUP BY ls.stack;

-- Process totals at each process's latest snapshot.
CREATE VIEW IF NOT EXISTS process_totals AS
SELECT p.id AS process, p.pid, p.exe, t.ncalls, t.memtot, t.nfree, t.memlive,
       t.maxlive, t.ncalls_nostack, t.memtot_nostack, t.nfree_unknown
FROM process p JOIN last_snapshot ls ON ls.process = p.id
JOIN totals t ON t.snapshot = ls.id AND t.thread = 0;

-- The format version (last: a file that has it has everything above).
PRAGMA user_version = 5;
