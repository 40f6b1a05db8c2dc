-- One process (pid 300, two threads) through three snapshots, the second
-- its peak, with an inlined call and sites below massif's 1% threshold
-- (tests/mpquery_export.sh). Paths after filters/default.rules (malloc
-- dropped), values as (ncalls, memtot, nfree, memlive):
--   G  main;grow            thread 300  seq 1: 10/10000/0/10000  peak: 30/30000/0/30000  exit: 30/30000/30/0
--   S  main;small           thread 300  seq 1: 5/500/0/500        (no row after: carried)
--   I  main;outer;inner     thread 301  peak: 4/4000/0/4000       exit: 4/4000/0/4000
--                           (inner inlined into outer at address 0x400)
--   T  main;tiny            thread 300  peak: 1/100/0/100         exit: 2/200/2/0
--   U  main;tiny2           thread 300  peak: 1/50/0/50           exit: 1/50/1/0
-- Live bytes: seq 1 10500 (G, S); peak 34650 (G, I, S, T, U: T and U below
-- 1% = 346 bytes); exit 4500 (I, S). Allocated: 10500, 34650, 34750.
-- Times: seq 1 at +0.5 s, the peak at +1 s, exit at +2 s.
INSERT INTO run VALUES (1, 'phases', 1000.0);
INSERT INTO process(id, run, pid, ppid, exe, cmdline, host, start_time, end_time, settings, ended) VALUES
  (1, 1, 300, 1, '/usr/bin/pk', 'pk --run', 'h', 1000.0, 1002.0, 'MP_INTERVAL=0.5', 'exit 0');
INSERT INTO thread VALUES (1, 1, 1, 300, 'main'), (2, 1, 2, 301, 'worker');
INSERT INTO module VALUES (1, '/usr/bin/pk', 'beef01'), (2, '/lib/x86_64-linux-gnu/libc.so.6', '');
INSERT INTO function VALUES (1, 'main'), (2, 'grow'), (3, 'small'), (4, 'malloc'), (5, 'outer'),
  (6, 'inner'), (7, 'tiny'), (8, 'tiny2');
INSERT INTO file VALUES (1, '/src/pk/pk.c'), (2, '/src/pk/inner.h');
-- frame: id, module, offset, inline_depth, function, file, line
INSERT INTO frame VALUES
  (1, 1, 256, 0, 1, 1, 10),     -- main
  (2, 1, 512, 0, 2, 1, 20),     -- grow
  (3, 1, 768, 0, 3, 1, 30),     -- small
  (4, 2, 4096, 0, 4, NULL, 0),  -- malloc
  (5, 1, 1024, 0, 5, 1, 40),    -- outer, at 0x400
  (6, 1, 1024, 1, 6, 2, 41),    -- inner, inlined into outer at 0x400
  (7, 1, 1280, 0, 7, 1, 50),    -- tiny
  (8, 1, 1536, 0, 8, 1, 60);    -- tiny2
-- stack: id, parent, frame (root first)
INSERT INTO stack VALUES
  (1, 0, 1),
  (2, 1, 2), (3, 2, 4),                 -- G
  (4, 1, 3), (5, 4, 4),                 -- S
  (6, 1, 5), (7, 6, 6), (8, 7, 4),      -- I
  (9, 1, 7), (10, 9, 4),                -- T
  (11, 1, 8), (12, 11, 4);              -- U
INSERT INTO snapshot VALUES
  (1, 1, 1, 1000.5, 'interval', '', 0),
  (2, 1, 2, 1001.0, 'peak', '', 0),
  (3, 1, 3, 1002.0, 'exit', '', 0);
INSERT INTO sample(snapshot, stack, thread, ncalls, memtot, nfree, memlive, maxlive) VALUES
  (1, 3, 1, 10, 10000, 0, 10000, 10000),
  (1, 5, 1, 5, 500, 0, 500, 500),
  (2, 3, 1, 30, 30000, 0, 30000, 30000),
  (2, 8, 2, 4, 4000, 0, 4000, 4000),
  (2, 10, 1, 1, 100, 0, 100, 100),
  (2, 12, 1, 1, 50, 0, 50, 50),
  (3, 3, 1, 30, 30000, 30, 0, 30000),
  (3, 8, 2, 4, 4000, 0, 4000, 4000),
  (3, 10, 1, 2, 200, 2, 0, 100),
  (3, 12, 1, 1, 50, 1, 0, 50);
INSERT INTO totals VALUES
  (1, 0, 15, 10500, 0, 10500, 10500, 0, 0, 0),
  (1, 1, 15, 10500, 0, 10500, 10500, 0, 0, 0),
  (2, 0, 41, 34650, 0, 34650, 34650, 0, 0, 0),
  (2, 1, 37, 30650, 0, 30650, 30650, 0, 0, 0),
  (2, 2, 4, 4000, 0, 4000, 4000, 0, 0, 0),
  (3, 0, 42, 34750, 33, 4500, 34650, 0, 0, 0),
  (3, 1, 38, 30750, 33, 500, 30650, 0, 0, 0),
  (3, 2, 4, 4000, 0, 4000, 4000, 0, 0, 0);
