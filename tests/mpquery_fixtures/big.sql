-- 1 M distinct stacks with samples (parent = id / 2: depth ~20), 2000
-- C++-ish function names, for the scale test (mpquery_scale.sh).
BEGIN;
INSERT INTO run VALUES (1, 'big', 1000.0);
INSERT INTO process(id, run, pid, ppid, exe, cmdline, host, start_time, end_time, settings) VALUES (1, 1, 1, 0, '/usr/bin/big', 'big', 'h', 1000.0, 1010.0, '');
INSERT INTO thread VALUES (1, 1, 1, 1, 'main'), (2, 1, 2, 2, 'worker');
INSERT INTO module VALUES (1, '/usr/bin/big', '');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO function SELECT i, printf('ns%d::Class%d<std::vector<int, std::allocator<int> > >::method%d(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)', i % 13, i % 97, i) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO frame SELECT i, 1, 16 * i, 0, i, NULL, 0 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
INSERT INTO stack SELECT i, i / 2, (i % 2000) + 1 FROM n;
INSERT INTO snapshot VALUES (1, 1, 1, 1010.0, 'exit', '', 0);
INSERT INTO sample(snapshot, stack, thread, ncalls, memtot, nfree, memlive, maxlive) SELECT 1, id, 1 + id % 2, 1 + id % 5, 16 * (1 + id % 100), min(id % 3, 1 + id % 5), min(8 * (id % 7), 16 * (1 + id % 100)), 16 * (id % 11) FROM stack;
INSERT INTO totals SELECT 1, 0, SUM(ncalls), SUM(memtot), SUM(nfree), SUM(memlive), SUM(maxlive), 0, 0, 0 FROM sample;
COMMIT;
