-- A small profile with exact, hand-computed values (see the comments).
-- Paths after filters/default.rules (malloc, operator new, __libc_start_main dropped):
--   A  main;load;helper                       (helper is inlined into load)
--   B  main;parse(std::string const&)
--   C  main;std::vector<int>::push_back(int const&)
--   D  main;foo(int)                          (stored mangled: _Z3fooi)
--   E  main;app+0x999                          (no symbol)
--   F  main;parse(std::string const&);parse(std::string const&)   (recursion)
INSERT INTO run VALUES (1, 'tok1', 1000.0);
INSERT INTO process(id, run, pid, ppid, exe, cmdline, host, start_time, end_time, settings) VALUES (1, 1, 100, 1, '/usr/bin/app', 'app --x', 'host1', 1000.0, 1002.5, 'MP_DEPTH=128 MP_THRESHOLD=0');
INSERT INTO thread VALUES (1, 1, 1, 100, 'main'), (2, 1, 2, 101, 'worker');
INSERT INTO module VALUES (1, '/usr/bin/app', 'abcd'), (2, '/lib/x86_64-linux-gnu/libc.so.6', ''),
                          (3, '/usr/lib/libstdc++.so.6', '');
INSERT INTO function VALUES (1, 'main'), (2, 'malloc'), (3, 'operator new(unsigned long)'),
  (4, 'std::vector<int, std::allocator<int> >::push_back(int const&)'),
  (5, 'parse(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)'),
  (6, 'load'), (7, 'helper'), (8, '__libc_start_main'), (9, '_Z3fooi');
INSERT INTO file VALUES (1, '/src/app/main.cc'), (2, '/src/app/parse.cc');
-- frame: id, module, offset, inline_depth, function, file, line
INSERT INTO frame VALUES
  (1, 1, 256, 0, 1, 1, 10),     -- main
  (2, 2, 4096, 0, 2, NULL, 0),  -- malloc
  (3, 3, 8192, 0, 3, NULL, 0),  -- operator new
  (4, 1, 1024, 0, 4, 1, 20),    -- push_back
  (5, 1, 1280, 0, 5, 2, 30),    -- parse
  (6, 1, 1536, 0, 6, 1, 40),    -- load (address 1536, real frame)
  (7, 1, 1536, 1, 7, 1, 41),    -- helper inlined into load at 1536
  (8, 2, 512, 0, 8, NULL, 0),   -- __libc_start_main
  (9, 1, 1792, 0, 9, 1, 50),    -- foo(int), mangled
  (10, 1, 2457, 0, NULL, NULL, 0), -- no symbol: app+0x999
  (11, 1, 1300, 0, 5, 2, 31);   -- parse, recursive call site
-- stack: id, parent, frame (root first)
INSERT INTO stack VALUES
  (1, 0, 8), (2, 1, 1),
  (3, 2, 6), (4, 3, 7), (5, 4, 2),            -- A
  (6, 2, 5), (7, 6, 3), (8, 7, 2),            -- B
  (9, 2, 4), (10, 9, 3), (11, 10, 2),         -- C
  (12, 2, 9), (13, 12, 2),                    -- D
  (14, 2, 10), (15, 14, 2),                   -- E
  (16, 6, 11), (17, 16, 3), (18, 17, 2);      -- F
INSERT INTO snapshot VALUES (1, 1, 1, 1002.5, 'exit', '', 123456);
-- sample: snapshot, stack, thread, ncalls, memtot, nfree, memlive, maxlive
INSERT INTO sample(snapshot, stack, thread, ncalls, memtot, nfree, memlive, maxlive) VALUES
  (1, 5, 1, 10, 1000, 10, 0, 300),      -- A
  (1, 8, 1, 5, 5000, 2, 3000, 3000),    -- B main thread
  (1, 8, 2, 1, 100, 0, 100, 100),       -- B worker
  (1, 11, 2, 20, 2000, 20, 0, 400),     -- C
  (1, 13, 1, 3, 30, 0, 30, 30),         -- D
  (1, 15, 1, 1, 7, 1, 0, 7),            -- E
  (1, 18, 1, 2, 200, 1, 100, 150);      -- F
-- sums with a stack: ncalls 42 memtot 8337 nfree 34 memlive 3230
-- totals add 8 allocations / 63 bytes without a stack
INSERT INTO totals VALUES
  (1, 0, 50, 8400, 40, 3260, 5000, 8, 63, 2),
  (1, 1, 29, 6300, 20, 3160, 4000, 8, 63, 2),
  (1, 2, 21, 2100, 20, 100, 500, 0, 0, 0);
