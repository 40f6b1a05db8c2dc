# mpquery rss: the ledger of each process at its selected snapshot, exact
# on a fixture made by hand (tests/lib/fixtures/ledger.sql: two processes,
# heap stacks changing between snapshots, an anonymous and a file
# mapping); text at 80 and 200 columns, csv, json, -o, -n, --snapshot,
# --pid; the errors (files without a ledger, peak snapshots, bad values).
# The recorder's side: tests/recorder/ledger.sh.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"
fixture ledger >/dev/null
assert_eq "$("$MPQ" rss ledger.db --format csv)" "pid,snapshot,line,stack,bytes,size,percent
10,2,heap live,,700000,700000,8.75
10,2,heap live,2,500000,500000,6.25
10,2,heap live,3,200000,200000,2.50
10,2,heap overhead,,50000,50000,0.62
10,2,heap free,,250000,400000,3.12
10,2,mmap anonymous,,2097152,4194304,26.21
10,2,mmap anonymous,5,2097152,4194304,26.21
10,2,mmap file,,524288,1048576,6.55
10,2,mmap file,6,524288,1048576,6.55
10,2,thread stacks,,131072,8388608,1.64
10,2,modules,,3000000,20000000,37.50
10,2,profiler,,1000000,3000000,12.50
10,2,unexplained,,247488,0,3.09
10,2,rss,,8000000,52000000,100.00
11,1,heap live,,1000,1000,0.07
11,1,heap live,2,1000,1000,0.07
11,1,heap overhead,,24,24,0.00
11,1,heap free,,0,0,0.00
11,1,mmap anonymous,,0,0,0.00
11,1,mmap file,,0,0,0.00
11,1,thread stacks,,8192,8388608,0.54
11,1,modules,,1000000,10000000,66.29
11,1,profiler,,500000,2000000,33.15
11,1,unexplained,,-784,0,-0.05
11,1,rss,,1508432,30000000,100.00" "csv: each process's ledger at its last snapshot, its stacks under heap live (the cache's row of seq 1 still holds) and the mmap lines"
assert_eq "$("$MPQ" rss ledger.db --pid 10 --snapshot 1 -n 1 --format csv | grep -v ',,')" "pid,snapshot,line,stack,bytes,size,percent
10,1,heap live,2,600000,600000,10.00
10,1,mmap anonymous,5,1048576,4194304,17.48" "--snapshot 1 -n 1: the values of seq 1, one stack a line"
assert_eq "$("$MPQ" rss ledger.db --pid 11 -n 0 --format csv | grep -c ',,')" 10 "-n 0: the lines alone"
# the lines of a ledger add up to its rss line
for snap in 1 2; do
    assert_eq "$(q ledger.db "SELECT sum(CASE WHEN line = 'rss' THEN -bytes ELSE bytes END) FROM ledger WHERE snapshot = $snap")" 0 "snapshot $snap: the lines add up to rss"
done
json=$("$MPQ" rss ledger.db --format json)
assert_eq "$(json_get "$json" '[(p["pid"], p["snapshot"], p["reason"], p["rss"], len(p["lines"])) for p in j["processes"]]')" \
    "[(10, 2, 'exit', 8000000, 10), (11, 1, 'exit', 1508432, 10)]" "json: a ledger a process"
assert_eq "$(json_get "$json" 'j["processes"][0]["lines"][3]')" \
    "{'line': 'mmap anonymous', 'bytes': 2097152, 'size': 4194304, 'percent': 26.21, 'stacks': [{'stack': 5, 'bytes': 2097152, 'size': 4194304, 'percent': 26.21, 'frames': ['mmap anonymous', 'mapper', 'main']}]}" \
    "json: a line, its stacks with their frames leaf first"
"$MPQ" rss ledger.db --format json -o l.json 2>err || fail "-o failed: $(cat err)"
assert_eq "$(cat l.json)" "$json" "-o FILE: the same json"
assert_match "$(cat err)" "^mpquery: wrote l.json" "-o: the status line"
text80=$(COLUMNS=80 PAGER=cat script -qc "$MPQ rss ledger.db --pid 10" /dev/null | tr -d '\r')
assert_eq "$text80" "pid 10 app, snapshot 2 (exit): rss 7.63 MiB
line            resident      %      size  stack  where
heap live        684 KiB    8.8   684 KiB
                 488 KiB    6.2   488 KiB      2  load < main
                 195 KiB    2.5   195 KiB      3  cache < main
heap overhead   48.8 KiB    0.6  48.8 KiB
heap free        244 KiB    3.1   391 KiB
mmap anonymous  2.00 MiB   26.2  4.00 MiB
                2.00 MiB   26.2  4.00 MiB      5  mmap anonymous < mapper < main
mmap file        512 KiB    6.6  1.00 MiB
                 512 KiB    6.6  1.00 MiB      6  mmap /data/file.bin < mapper …
thread stacks    128 KiB    1.6  8.00 MiB
modules         2.86 MiB   37.5  19.1 MiB
profiler         977 KiB   12.5  2.86 MiB
unexplained      242 KiB    3.1
rss             7.63 MiB  100.0  49.6 MiB" "text at 80 columns: sizes in units, the stacks' one-line labels"
assert_eq "$(COLUMNS=200 PAGER=cat script -qc "$MPQ rss ledger.db --pid 10" /dev/null | tr -d '\r')" "${text80/mmap \/data\/file.bin < mapper …/mmap /data/file.bin < mapper < main}" \
    "text at 200 columns: the same but the label cut at 80"
assert_eq "$(COLUMNS=50 PAGER=cat script -qc "$MPQ rss ledger.db --pid 10" /dev/null | tr -d '\r' | sed -n 11p)" \
    "                 512 KiB    6.6  1.00 MiB      6 …" "text at 50 columns: the line cut to the width"
assert_eq "$("$MPQ" rss ledger.db --pid 11 --bytes | sed -n '1p;3,4p')" "pid 11 helper, snapshot 1 (exit): rss 1508432 bytes
heap live           1000    0.1      1000
                    1000    0.1      1000      2  load < main" "--bytes: bytes"
assert_eq "$("$MPQ" rss ledger.db --pid 11 | tail -n 2)" "unexplained       -784 B   -0.1
rss             1.44 MiB  100.0  28.6 MiB" "a negative unexplained line (the others overestimate)"
# errors: one line, exit 2
expect_fail 2 '^mpquery: rss: --snapshot peak: peak snapshots have no ledger' "$MPQ" rss ledger.db --snapshot peak
expect_fail 2 "^mpquery: rss: bad value 'x' for -n \(expected a count >= 0\)" "$MPQ" rss ledger.db -n x
expect_fail 2 "^mpquery: rss: bad value 'svg' for --format \(expected text, csv or json\)" "$MPQ" rss ledger.db --format svg
expect_fail 2 '^mpquery: ledger.db: no process with pid 99' "$MPQ" rss ledger.db --pid 99
expect_fail 2 '^mpquery: rss: missing DB' "$MPQ" rss
fixture basic >/dev/null
expect_fail 2 '^mpquery: basic.db: pid 100: no ledger at snapshot 1 \(the recorder writes one at every snapshot but peaks, since format version 5\)$' "$MPQ" rss basic.db
old_fixture 3
expect_fail 2 '^mpquery: v3.db: no ledger: the file has format version 3, the ledger came with version 5$' "$MPQ" rss v3.db
