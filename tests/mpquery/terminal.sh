#!/bin/bash
# One terminal interface (issue 27, item 1): info, tree and hist in units
# with --bytes; on a terminal every text output is cut to its width (…)
# and paged only when longer than the screen (LINES - 1 lines), in one
# place for every command; --no-pager; info's long tables and many
# processes shortened (--all); -q/--quiet on the commands that say what
# they did; --help short by use, --help-all everything.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null
command -v script >/dev/null || fail "script(1) (util-linux) is needed for the terminal tests"
# tty CMD: CMD's output on a pseudo-terminal, without the terminal's CRs
tty() { script -qec "$1" /dev/null </dev/null | tr -d '\r'; }
export PAGER=cat LINES=100

# many.db: basic.db with 14 snapshots in its process and 6 children
cp basic.db many.db
sqlite3 many.db "
UPDATE snapshot SET seq = 14 WHERE id = 1;
WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 13)
INSERT INTO snapshot (id, process, seq, time, reason, label, profiler_memory)
  SELECT k + 1, 1, k, 1000.0 + k * 0.1, 'interval', '', 1024 * k FROM n;
WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 13)
INSERT INTO totals SELECT k + 1, 0, k, 100 * k, 0, 100 * k, 100 * k, 0, 0, 0 FROM n;
WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 6)
INSERT INTO process (id, run, pid, ppid, exe, cmdline, host, start_time, end_time, settings, ended)
  SELECT k + 1, 1, 100 + k, 100, '/bin/sh', 'sh -c job' || k, 'host1', 1000.0 + k, 1000.5 + k, '', 'exit 0' FROM n;
WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 6)
INSERT INTO snapshot (id, process, seq, time, reason, label, profiler_memory)
  SELECT 100 + k, k + 1, 1, 1000.5 + k, 'exit', '', 0 FROM n;" || fail "many.db"

echo "# info at 80 columns: lines cut with …; at 200 and on a pipe: whole"
assert_eq "$(COLUMNS=80 tty "$MPQ info basic.db")" \
"profile basic.db (schema version $SCHEMA_VERSION)

run 1, started 1970-01-01 00:16:40

processes: 1, as 1 images (exec starts a new image)
  pid  ppid  duration  threads  snapshots  ncalls    memtot  nfree  nlive   mem…
  100     1     2.500        2          1      50  8.20 KiB     40     10  3.18…

process tree: 1 process, 1 without a final snapshot
  100 app: still running or killed (no final snapshot)

totals:
  ncalls  50 allocations (8 without a stack)
  memtot  8.20 KiB allocated (63 B without a stack)
  nfree   40 frees (2 of blocks the profiler never saw)
  nlive   10 blocks still allocated
  memlive 3.18 KiB still allocated
  peak    4.88 KiB: the process peak (its maxlive; no peak snapshot)

process 100: /usr/bin/app
  started 1970-01-01 00:16:40 on host1
  settings: MP_DEPTH=128 MP_THRESHOLD=0
  live bytes: requested sizes (every block tracked)
  ended: still running or killed (no final snapshot)
  threads:
    tid  name    ncalls    memtot  nfree  nlive   memlive   maxlive
    100  main        29  6.15 KiB     20      9  3.09 KiB  3.91 KiB
    101  worker      21  2.05 KiB     20      1     100 B     500 B
  snapshots (* = selected):
    seq  time     reason  label  ncalls    memtot   memlive   maxlive  profiler
    *1   +2.500s  exit               50  8.20 KiB  3.18 KiB  4.88 KiB   121 KiB

stacks with samples in this selection: 6; the stack tree: 18 nodes, frames: 11,…
profiler memory: 121 KiB" "info, 80 columns"
whole=$("$MPQ" info basic.db)
assert_eq "$(COLUMNS=200 tty "$MPQ info basic.db")" "$whole" "info, 200 columns: as on a pipe"
assert_eq "$(printf '%s\n' "$whole" | sed -n 6,7p)" \
"  pid  ppid  duration  threads  snapshots  ncalls    memtot  nfree  nlive   memlive   maxlive  command
  100     1     2.500        2          1      50  8.20 KiB     40     10  3.18 KiB  4.88 KiB  app --x" "info: the processes table whole"
assert_eq "$(COLUMNS=80 tty "$MPQ info basic.db --bytes" | sed -n '/^totals/,/^$/p')" \
"totals:
  ncalls  50 allocations (8 without a stack)
  memtot  8400 bytes allocated (63 bytes without a stack)
  nfree   40 frees (2 of blocks the profiler never saw)
  nlive   10 blocks still allocated
  memlive 3260 bytes still allocated
  peak    5000 bytes: the process peak (its maxlive; no peak snapshot)" "info --bytes"

echo "# tree at 80, 200 and 40 columns"
tree_whole="self.memtot  self%  total.memtot  total%  function
        0 B    0.0      8.14 KiB   100.0  app (pid 100)
        0 B    0.0      8.14 KiB   100.0    main
   4.98 KiB   61.2      5.18 KiB    63.6      parse
      200 B    2.4         200 B     2.4        parse
   1.95 KiB   24.0      1.95 KiB    24.0      std::vector<…>::push_back
        0 B    0.0        1000 B    12.0      load
     1000 B   12.0        1000 B    12.0        helper
       30 B    0.4          30 B     0.4      foo
        7 B    0.1           7 B     0.1      app+0x999"
assert_eq "$(COLUMNS=80 tty "$MPQ tree basic.db --functions")" "$tree_whole" "tree, 80 columns: short names, units"
assert_eq "$(COLUMNS=200 tty "$MPQ tree basic.db --functions")" "$tree_whole" "tree, 200 columns"
assert_eq "$(COLUMNS=40 tty "$MPQ tree basic.db --functions" | sed -n 1,2p)" \
"self.memtot  self%  total.memtot  total…
        0 B    0.0      8.14 KiB   100.…" "tree, 40 columns: cut"
assert_eq "$("$MPQ" tree basic.db --functions --full-names --bytes | sed -n 6p)" \
"       2000   24.0          2000    24.0      std::vector<int>::push_back" "tree --full-names --bytes"
assert_eq "$("$MPQ" tree basic.db --functions --signatures | sed -n 6p)" \
"   1.95 KiB   24.0      1.95 KiB    24.0      std::vector<…>::push_back(int const&)" "tree --signatures"

echo "# hist at 80 and 200 columns"
profile h.db $B/tests/cheap_modes 2>/dev/null || fail "the program failed"
hist_whole="size        ncalls    memtot  nlive   memlive  memtot
[16, 32)     10001   234 KiB      0       0 B  #####
[32, 64)       301  14.7 KiB      0       0 B  #
[64, 128)     1201   111 KiB   1100   104 KiB  ###
[128, 256)       1     128 B      0       0 B  #
[256, 512)       1     256 B      0       0 B  #
[512, 1K)     2011  1.92 MiB      0       0 B  ########################################
[1K, 2K)         1  1.00 KiB      0       0 B  #
[2K, 4K)         1  2.00 KiB      0       0 B  #
[4K, 8K)         1  4.00 KiB      0       0 B  #
[1M, 2M)         1  1.00 MiB      1  1.00 MiB  #####################"
assert_eq "$(COLUMNS=80 tty "$MPQ hist h.db" | sed -n 7p)" \
  "[512, 1K)     2011  1.92 MiB      0       0 B  #################################" "hist, 80 columns: the bars scaled to the room left (33 of 40)"
assert_eq "$(COLUMNS=80 tty "$MPQ hist h.db" | sed -n 11p)" \
  "[1M, 2M)         1  1.00 MiB      1  1.00 MiB  ##################" "hist, 80 columns: the others scaled alike"
assert_eq "$(COLUMNS=80 tty "$MPQ hist h.db" | cut -c1-47)" "$(printf '%s\n' "$hist_whole" | cut -c1-47)" "hist, 80 columns: units"
assert_eq "$(COLUMNS=200 tty "$MPQ hist h.db")" "$hist_whole" "hist, 200 columns"
assert_eq "$(COLUMNS=40 tty "$MPQ hist h.db" | sed -n 7p)" "[512, 1K)     2011  1.92 MiB      0    …" "hist, 40 columns: cut"
assert_eq "$("$MPQ" hist h.db --bytes | sed -n 2p)" "[16, 32)     10001   240016      0        0  #####" "hist --bytes"

echo "# info: the first 5 processes' sections, 10 rows of a table (--all: everything)"
assert_eq "$("$MPQ" info many.db | sed -n '/^  snapshots (\* = selected; --all/,/^$/p')" \
"  snapshots (* = selected; --all: every one):
    seq  time     reason    label  ncalls    memtot   memlive   maxlive  profiler
    1    +0.100s  interval              1     100 B     100 B     100 B  1.00 KiB
    2    +0.200s  interval              2     200 B     200 B     200 B  2.00 KiB
    3    +0.300s  interval              3     300 B     300 B     300 B  3.00 KiB
    4    +0.400s  interval              4     400 B     400 B     400 B  4.00 KiB
    …    6 more
    11   +1.100s  interval             11  1.07 KiB  1.07 KiB  1.07 KiB  11.0 KiB
    12   +1.200s  interval             12  1.17 KiB  1.17 KiB  1.17 KiB  12.0 KiB
    13   +1.300s  interval             13  1.27 KiB  1.27 KiB  1.27 KiB  13.0 KiB
    *14  +2.500s  exit                 50  8.20 KiB  3.18 KiB  4.88 KiB   121 KiB" "info: a long snapshots table shortened, the selected one kept"
assert_eq "$("$MPQ" info many.db --snapshot 7 | grep -E '^    (\*?7|…) ')" \
"    …    2 more
    *7   +0.700s  interval              7     700 B     700 B     700 B  7.00 KiB
    …    3 more" "info --snapshot 7: the selected row kept among those left out"
assert_eq "$("$MPQ" info many.db | grep -E '^(process [0-9]+:|… )')" \
"process 100: /usr/bin/app
process 101: /bin/sh
process 102: /bin/sh
process 103: /bin/sh
process 104: /bin/sh
… 2 more processes: --pid PID for one, --all for every one" "info: 5 processes' sections"
assert_eq "$("$MPQ" info many.db --all | grep -c -E '^process [0-9]+:|^    [0-9]+ +\+[0-9.]+s +interval')" "20" \
  "info --all: 7 sections, 13 interval snapshots"
assert_eq "$("$MPQ" info many.db --pid 106 | grep -E '^process [0-9]+:|^…')" "process 106: /bin/sh" "info --pid: that process's section"

echo "# the pager: only for an output longer than the screen (more than LINES - 1 lines)"
# tree --functions prints 10 lines: paged with LINES=10, not with LINES=11
assert_eq "$(LINES=10 PAGER='sed s/^/P:/' tty "$MPQ tree basic.db --functions" | sed -n '1p;$p')" \
"P:self.memtot  self%  total.memtot  total%  function
P:        7 B    0.1           7 B     0.1      app+0x999" "10 lines, LINES=10: through \$PAGER, every line"
assert_eq "$(LINES=11 PAGER='sed s/^/P:/' tty "$MPQ tree basic.db --functions" | sed -n 1p)" \
  "self.memtot  self%  total.memtot  total%  function" "10 lines, LINES=11: fits, no pager"
assert_eq "$(LINES=10 PAGER='sed s/^/P:/' tty "$MPQ tree basic.db --functions --no-pager" | sed -n 1p)" \
  "self.memtot  self%  total.memtot  total%  function" "--no-pager"
assert_eq "$(LINES=10 COLUMNS=40 PAGER='sed s/^/P:/' tty "$MPQ tree basic.db --functions" | sed -n 2p)" \
  "P:        0 B    0.0      8.14 KiB   100.…" "through the pager, lines cut too"
# a pager that says it ran: used by the long output of every text command, not by a short one
cat > pager.sh <<'EOF'
#!/bin/sh
echo used >> "$PAGER_LOG"
cat
EOF
chmod +x pager.sh
export PAGER_LOG=$PWD/pager.log
for cmd in "info basic.db" "info many.db" "hist h.db" "tree basic.db --functions" "sql basic.db 'SELECT id FROM stack'" \
           "top basic.db -n 0" "show basic.db 6"; do
    rm -f pager.log
    LINES=3 PAGER=./pager.sh tty "$MPQ $cmd" >/dev/null
    assert_eq "$(cat pager.log 2>/dev/null)" "used" "$cmd, LINES=3: paged"
    rm -f pager.log
    LINES=1000 PAGER=./pager.sh tty "$MPQ $cmd" >/dev/null
    assert_eq "$(cat pager.log 2>/dev/null)" "" "$cmd, LINES=1000: not paged"
done
rm -f pager.log
LINES=3 PAGER=./pager.sh "$MPQ" info many.db >/dev/null
assert_eq "$(cat pager.log 2>/dev/null)" "" "a pipe: never paged"
assert_eq "$(LINES=3 PAGER='sed s/^/P:/' tty "$MPQ tree basic.db --functions --format csv" | sed -n 1p)" \
  "P:root,depth,path,self.ncalls,self.memtot,self.nfree,self.nlive,self.memlive,self.maxlive,self.ntemp,total.ncalls,total.memtot,total.nfree,total.nlive,total.memlive,total.maxlive,total.ntemp" \
  "csv on a terminal: paged when long, lines whole"

echo "# -q, --quiet: the status lines"
"$MPQ" merge -o m.db basic.db 2>err.txt || fail "merge"
assert_match "$(cat err.txt)" "^mpquery: merged 1 file into m.db: 1 run" "merge says what it wrote"
"$MPQ" merge -q -o m2.db basic.db 2>err.txt || fail "merge -q"
assert_eq "$(cat err.txt)" "" "merge -q: nothing"
"$MPQ" merge --quiet -o m3.db basic.db 2>err.txt || fail "merge --quiet"
assert_eq "$(cat err.txt)" "" "merge --quiet: nothing"
"$MPQ" export basic.db --format folded -o f.txt 2>err.txt || fail "export"
assert_eq "$(cat err.txt)" "mpquery: wrote f.txt (203 B)" "export -o says what it wrote"
"$MPQ" export basic.db --format folded -o f.txt -q 2>err.txt || fail "export -q"
assert_eq "$(cat err.txt)" "" "export -q: nothing"
assert_eq "$("$MPQ" export basic.db --format folded 2>&1 >/dev/null)" "" "export to stdout: no line"
for c in push symbolize merge export; do
    "$MPQ" $c --help | grep -q -- '^  -q, --quiet ' || fail "$c --help has no -q, --quiet"
done
echo "  ok: push, symbolize, merge, export take -q, --quiet"

echo "# --help: by use, short; --help-all: everything"
assert_eq "$("$MPQ" merge --help)" \
"usage: mpquery merge -o OUT.db A.db B.db ...

One profile holding every run of the inputs, which answers every query as
the inputs given together do (mpquery top A.db B.db ...).

  -o, --output OUT    the database to write (required)

Output:
  -q, --quiet         no line saying what it wrote

examples:
  mpquery merge -o nightly.db build-*.db
  mpquery merge -o nightly.db nightly.db today.db     (add a profile)

mpquery merge --help-all: every option and the details" "merge --help"
assert_eq "$("$MPQ" sql --help | wc -l) $("$MPQ" sql --help-all | wc -l)" "14 32" "sql --help and --help-all: lines"
short=$("$MPQ" top --help) all=$("$MPQ" top --help-all)
assert_eq "$(printf '%s\n' "$short" | grep -c -E -e '^ +--(server|where|host|user|database)' -e '^ClickHouse')" 0 \
  "top --help: no ClickHouse option"
assert_eq "$(printf '%s\n' "$short" | tail -1)" "mpquery top --help-all: every option (ClickHouse's too) and the details" \
  "top --help: its last line"
assert_eq "$(printf '%s\n' "$short" | grep -E '^[A-Z][a-z]+( \(--server\))?:$' | tr '\n' ' ')" "Selection: Display: Output: Rules: " \
  "top --help: headings by use"
assert_eq "$(printf '%s\n' "$all" | grep -E '^[A-Z][a-zA-Z]+( \(--server\))?:$' | tr '\n' ' ')" \
  "Selection: Display: Output: Rules: ClickHouse (--server): " "top --help-all: ClickHouse's heading too"
[ "$(printf '%s\n' "$short" | wc -l)" -le 60 ] || fail "top --help: $(printf '%s\n' "$short" | wc -l) lines"
for o in --server --where --image --module --no-inline --signatures --no-default-rules --group-threads; do
    printf '%s\n' "$short" | grep -q -E -- "^ +(-[a-z], )?$o\b" && fail "top --help lists $o"
    printf '%s\n' "$all" | grep -q -E -- "^ +(-[a-z], )?$o\b" || fail "top --help-all does not list $o"
done
echo "  ok: the rare options and ClickHouse's in --help-all only"
assert_match "$("$MPQ" --man | sed -n '/^\.SS top/,/^\.SS fold/p')" '\\-\\-server URL' "the man page keeps every option"
assert_match "$("$MPQ" --bash-completion | grep '^    top)')" '--help --help-all .*--server --where' "the completion keeps every option"
