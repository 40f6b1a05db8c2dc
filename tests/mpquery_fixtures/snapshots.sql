-- Two runs in one database, interval snapshots storing only changed rows,
-- and a process tree.
--   run 1: process pid 10, snapshots seq 1 (interval), 2 (api, label 'mid'), 3 (exit)
--          X (main;fx): seq1 1/100, seq2 3/300, unchanged at seq3 (no row)
--          Y (main;fy): first appears at seq3 with 5/50
--   run 2: pid 20 and its child pid 21, one exit snapshot each
--          X in pid 20: 7/700; Y in pid 21: 2/20
INSERT INTO run VALUES (1, 'run-one', 1000.0), (2, 'run-two', 2000.0);
INSERT INTO process(id, run, pid, ppid, exe, cmdline, host, start_time, end_time, settings) VALUES
  (1, 1, 10, 1, '/bin/one', 'one', 'h', 1000.0, 1003.0, 'MP_INTERVAL=1'),
  (2, 2, 20, 1, '/bin/make', 'make -j2', 'h', 2000.0, 2005.0, 'MP_INTERVAL=0'),
  (3, 2, 21, 20, '/bin/cc', 'cc -c x.c', 'h', 2001.0, 2002.0, 'MP_INTERVAL=0');
INSERT INTO thread VALUES (1, 1, 1, 10, 'one'), (2, 2, 1, 20, 'make'), (3, 3, 1, 21, 'cc');
INSERT INTO module VALUES (1, '/bin/one', '');
INSERT INTO function VALUES (1, 'main'), (2, 'fx'), (3, 'fy');
INSERT INTO frame VALUES (1, 1, 16, 0, 1, NULL, 0), (2, 1, 32, 0, 2, NULL, 0), (3, 1, 48, 0, 3, NULL, 0);
INSERT INTO stack VALUES (1, 0, 1), (2, 1, 2), (3, 1, 3);
INSERT INTO snapshot VALUES
  (1, 1, 1, 1001.0, 'interval', '', 100),
  (2, 1, 2, 1002.0, 'api', 'mid', 200),
  (3, 1, 3, 1003.0, 'exit', '', 300),
  (4, 2, 1, 2005.0, 'exit', '', 400),
  (5, 3, 1, 2002.0, 'exit', '', 500);
INSERT INTO sample(snapshot, stack, thread, ncalls, memtot, nfree, memlive, maxlive) VALUES
  (1, 2, 1, 1, 100, 0, 100, 100),
  (2, 2, 1, 3, 300, 0, 300, 300),
  (3, 3, 1, 5, 50, 5, 0, 20),
  (4, 2, 2, 7, 700, 7, 0, 700),
  (5, 3, 3, 2, 20, 0, 20, 20);
INSERT INTO totals VALUES
  (1, 0, 1, 100, 0, 100, 100, 0, 0, 0), (1, 1, 1, 100, 0, 100, 100, 0, 0, 0),
  (2, 0, 3, 300, 0, 300, 300, 0, 0, 0), (2, 1, 3, 300, 0, 300, 300, 0, 0, 0),
  (3, 0, 8, 350, 5, 300, 320, 0, 0, 0), (3, 1, 8, 350, 5, 300, 320, 0, 0, 0),
  (4, 0, 7, 700, 7, 0, 700, 0, 0, 0), (4, 2, 7, 700, 7, 0, 700, 0, 0, 0),
  (5, 0, 2, 20, 0, 20, 20, 0, 0, 0), (5, 3, 2, 20, 0, 20, 20, 0, 0, 0);
