# The counters of format version 5 in every reader: the program's own
# mappings (nmap, mapped, maxmapped, rss: rows of stacks whose leaf is an
# '[mmap]' frame) and cold blocks (memcold, coldage: MP_COLD), on the
# hand-computed fixture tests/lib/fixtures/maps.sql (its values there):
# top --mmap exact in text (80 and 200 columns), csv and json; heap
# listings without the mapping rows; --by of every new counter (coldage
# combines by max: threads, merged rows, diff's totals, the tree); fold,
# diff, export (speedscope, pprof), tree, show, info, timeline (the ticks'
# mapped), report; merge carries
# the columns; a file without mappings or of format version 4; the errors.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"
fixture maps >/dev/null
fixture basic >/dev/null
tty() { COLUMNS=$1 PAGER=cat script -qc "$2" /dev/null | tr -d '\r'; }

echo "# top --mmap"
assert_eq "$(tty 200 "$MPQ top maps.db --mmap")" \
"nmap    mapped      %  maxmapped       rss  stack  where
   5  67.9 MiB  100.0   72.8 MiB  35.9 MiB         (total: 2 stacks in 2 rows)
   3  64.0 MiB   94.2   65.0 MiB  32.0 MiB  3      mmap anonymous < map_big < main
   2  3.91 MiB    5.8   7.81 MiB  3.91 MiB  5      mmap /data/x.bin < load < main" \
    "text, 200 columns: the mapping stacks by mapped, the four counters, threads summed (map_big: 2 + 1 maps)"
assert_eq "$(tty 80 "$MPQ top maps.db --mmap")" \
"nmap    mapped      %  maxmapped       rss  stack  where
   5  67.9 MiB  100.0   72.8 MiB  35.9 MiB         (total: 2 stacks in 2 rows)
   3  64.0 MiB   94.2   65.0 MiB  32.0 MiB  3      mmap anonymous < map_big < …
   2  3.91 MiB    5.8   7.81 MiB  3.91 MiB  5      mmap /data/x.bin < load < …" \
    "text, 80 columns: the where column fitted"
assert_eq "$("$MPQ" top maps.db --mmap --by rss --bytes)" \
"nmap    mapped  maxmapped       rss      %  stack  where
   5  71204864   76349440  37650432  100.0         (total: 2 stacks in 2 rows)
   3  67108864   68157440  33554432   89.1  3      mmap anonymous < map_big < main
   2   4096000    8192000   4096000   10.9  5      mmap /data/x.bin < load < main" "--by rss --bytes"
assert_eq "$("$MPQ" top maps.db --mmap --by maxmapped --format csv -n 1)" \
"nmap,mapped,maxmapped,rss,stack,stacks,where
3,67108864,68157440,33554432,3,1,mmap anonymous < map_big < main" "csv: the four counters, raw"
assert_eq "$("$MPQ" top maps.db --mmap --format json)" \
'[
 {"nmap": 3, "mapped": 67108864, "maxmapped": 68157440, "rss": 33554432, "stack": 3, "stacks": 1, "where": "mmap anonymous < map_big < main", "frames": ["mmap anonymous", "map_big", "main"]},
 {"nmap": 2, "mapped": 4096000, "maxmapped": 8192000, "rss": 4096000, "stack": 5, "stacks": 1, "where": "mmap /data/x.bin < load < main", "frames": ["mmap /data/x.bin", "load", "main"]}
]' "json: the [mmap] leaf named 'mmap WHAT'"
assert_eq "$("$MPQ" top maps.db --mmap --by nmap --functions --format csv)" \
"self.nmap,self.mapped,self.maxmapped,self.rss,inclusive.nmap,inclusive.mapped,inclusive.maxmapped,inclusive.rss,function
3,67108864,68157440,33554432,3,67108864,68157440,33554432,mmap anonymous
2,4096000,8192000,4096000,2,4096000,8192000,4096000,mmap /data/x.bin" "--functions: the mapped things as leaves"

assert_eq "$("$MPQ" top maps.db --mmap --exclude load)" \
"nmap    mapped      %  maxmapped       rss  stack  where
   3  64.0 MiB  100.0   65.0 MiB  32.0 MiB         (total: 1 stacks in 1 rows)
   3  64.0 MiB  100.0   65.0 MiB  32.0 MiB  3      mmap anonymous < map_big < main
ignored 1 stacks (2 mappings, 3.91 MiB mapped) with 1 filters" "filters: what they left out in mappings"

echo "# heap listings leave the mapping rows out (their heap counters are 0)"
assert_eq "$("$MPQ" top maps.db)" \
"ncalls    memtot      %  stack  where
   202  1.79 MiB  100.0         (total: 2 stacks in 2 rows)
     2  1.00 MiB   56.2  7      leak_buf < main
   200   800 KiB   43.8  6      cache_fill < main" "top: heap stacks only"
assert_eq "$("$MPQ" top maps.db --format csv --by memlive | head -n 2)" \
"ncalls,memtot,nfree,nlive,memlive,maxlive,ntemp,nmap,mapped,maxmapped,rss,memcold,coldage,stack,stacks,where
2,1052672,0,2,1052672,1052672,0,0,0,0,0,1052672,3,7,1,leak_buf < main" \
    "csv: every counter the profile has (mapping and cold ones; no time without MP_TIME); coldage of two threads: the larger"
assert_eq "$("$MPQ" top basic.db --format csv | head -n 1)" "ncalls,memtot,nfree,nlive,memlive,maxlive,ntemp,stack,stacks,where" \
    "a profile without mappings nor MP_COLD: no such columns"

echo "# --by every new counter"
assert_eq "$("$MPQ" fold maps.db --by mapped)" "main;load;mmap /data/x.bin 4096000
main;map_big;mmap anonymous 67108864" "fold --by mapped"
assert_eq "$("$MPQ" fold maps.db --by nmap)" "main;load;mmap /data/x.bin 2
main;map_big;mmap anonymous 3" "fold --by nmap"
assert_eq "$("$MPQ" fold maps.db --by maxmapped)" "main;load;mmap /data/x.bin 8192000
main;map_big;mmap anonymous 68157440" "fold --by maxmapped"
assert_eq "$("$MPQ" fold maps.db --by rss)" "main;load;mmap /data/x.bin 4096000
main;map_big;mmap anonymous 33554432" "fold --by rss"
assert_eq "$("$MPQ" fold maps.db --by memcold)" "main;cache_fill 204800
main;leak_buf 1052672" "fold --by memcold"
assert_eq "$("$MPQ" fold maps.db --by coldage)" "main;cache_fill 1
main;leak_buf 3" "fold --by coldage: leak_buf's two threads (3 and 1) give 3, not 4"
assert_eq "$("$MPQ" fold maps.db --by mapped --snapshot 2)" "main;load;mmap /data/x.bin 8192000
main;map_big;mmap anonymous 67108864" "fold --by mapped at snapshot 2"
assert_eq "$("$MPQ" top maps.db --by memcold --bytes)" \
"ncalls  memcold      %  stack  where
   202  1257472  100.0         (total: 2 stacks in 2 rows)
     2  1052672   83.7  7      leak_buf < main
   200   204800   16.3  6      cache_fill < main" "top --by memcold"
assert_eq "$("$MPQ" tree maps.db --by mapped --bytes)" \
"self.mapped  self%  total.mapped  total%  tag
          0    0.0      71204864   100.0  app (pid 300)
   71204864  100.0      71204864   100.0    (no tag)" "tree --by mapped"
assert_eq "$("$MPQ" tree maps.db --by coldage)" \
"self.coldage  self%  total.coldage  total%  tag
           0    0.0              3   100.0  app (pid 300)
           3  100.0              3   100.0    (no tag)" "tree --by coldage: the largest, not the sum"
assert_eq "$("$MPQ" show maps.db 3 | head -n 2 | tr '\n' '|')" \
"stack 3: ncalls 0 memtot 0 B nfree 0 nlive 0 memlive 0 B maxlive 0 B ntemp 0 nmap 3 mapped 64.0 MiB maxmapped 65.0 MiB rss 32.0 MiB memcold 0 B coldage 0|#0   mmap anonymous|" \
    "show: every counter the profile has (lines joined by |), no address for a mapping"

echo "# diff"
fixture maps b.db >/dev/null
q b.db "UPDATE run SET token = 'tokm2'; UPDATE process SET pid = 301;
        UPDATE sample SET mapped = 2 * mapped, rss = 2 * rss WHERE snapshot = 3 AND stack = 5;
        UPDATE sample SET coldage = 5 WHERE snapshot = 3 AND stack = 7 AND thread = 1"
assert_eq "$("$MPQ" diff maps.db b.db --by mapped)" \
"maps.db mapped  b.db mapped     delta  ratio  where
      67.9 MiB     71.8 MiB  3.91 MiB  1.058  (total: 2 stacks, 1 unchanged not shown)
      3.91 MiB     7.81 MiB  3.91 MiB  2.000  mmap /data/x.bin < load < main" "diff --by mapped"
assert_eq "$("$MPQ" diff maps.db b.db --by coldage)" \
"maps.db coldage  b.db coldage  delta  ratio  where
              3             5      2  1.667  (total: 2 stacks, 1 unchanged not shown)
              3             5      2  1.667  leak_buf < main" "diff --by coldage: each side's total is its largest"
assert_eq "$("$MPQ" diff maps.db b.db --by rss --fold)" "main;load;mmap /data/x.bin 4096000 8192000
main;map_big;mmap anonymous 33554432 33554432" "diff --fold --by rss"

echo "# export"
"$MPQ" export maps.db --format speedscope -o s.json 2>/dev/null || fail "export speedscope failed"
assert_eq "$($PY3 -c 'import json; j = json.load(open("s.json"))
print(j["activeProfileIndex"], [(p["name"].split()[0], p["unit"], p["endValue"]) for p in j["profiles"]][7:])')" \
"1 [('nmap', 'none', 5), ('mapped', 'bytes', 71204864), ('maxmapped', 'bytes', 76349440), ('rss', 'bytes', 37650432), ('memcold', 'bytes', 1257472)]" \
    "speedscope: a profile per counter the profile has, but coldage (an age weighs nothing)"
"$MPQ" export maps.db --format speedscope --by mapped -o s2.json 2>/dev/null || fail "export speedscope --by mapped failed"
assert_eq "$($PY3 -c 'import json; j = json.load(open("s2.json")); p = j["profiles"][0]
print([f["name"] for f in j["shared"]["frames"]], p["samples"], p["weights"])')" \
"['main', 'load', 'mmap /data/x.bin', 'map_big', 'mmap anonymous'] [[0, 1, 2], [0, 3, 4]] [4096000, 67108864]" "speedscope --by mapped"
"$MPQ" export maps.db --format pprof -o p.pb.gz 2>/dev/null || fail "export pprof failed"
assert_eq "$(zcat p.pb.gz | $PY3 -c 'import sys, re
b = sys.stdin.buffer.read()
print(" ".join(t for t in ("alloc_objects", "inuse_space", "mmap_count", "mapped_space", "mapped_resident", "cold_space", "coldage") if t.encode() in b))')" \
    "alloc_objects inuse_space mmap_count mapped_space mapped_resident cold_space" "pprof: sample types of the mappings and cold bytes"
"$MPQ" export basic.db --format pprof -o b.pb.gz 2>/dev/null || fail "export pprof failed"
assert_eq "$(zcat b.pb.gz | grep -c mapped_space)" 0 "pprof: none of them without mappings"
"$MPQ" export maps.db --format folded --by maxmapped -o x.folded 2>/dev/null || fail "export folded failed"
assert_eq "$(cat x.folded)" "main;load;mmap /data/x.bin 8192000
main;map_big;mmap anonymous 68157440" "folded --by maxmapped"

echo "# info"
assert_eq "$("$MPQ" info maps.db | grep -e '^  mmap' -e 'mappings:')" \
"  mmap    5 mappings, 67.9 MiB mapped, 35.9 MiB resident
  mappings: 5 mappings, 67.9 MiB mapped, 35.9 MiB resident" "text: the totals and the process's mappings, summed from its rows"
assert_eq "$("$MPQ" info maps.db --bytes | grep '^  mmap')" "  mmap    5 mappings, 71204864 bytes mapped, 37650432 bytes resident" "--bytes"
json=$("$MPQ" info maps.db --format json)
assert_eq "$(json_get "$json" "j['mappings'], j['processes'][0]['mappings']")" \
"({'nmap': 5, 'mapped': 71204864, 'maxmapped': 76349440, 'rss': 37650432}, {'nmap': 5, 'mapped': 71204864, 'maxmapped': 76349440, 'rss': 37650432})" \
    "json: the mappings of all and of each process"
assert_eq "$("$MPQ" info basic.db | grep -c -e '^  mmap' -e 'mappings:')" 0 "no such line without mappings"
assert_eq "$(json_get "$("$MPQ" info basic.db --format json)" "'mappings' in j")" False "nor such key"
assert_eq "$(json_get "$("$MPQ" info maps.db --snapshot 2 --format json)" "j['mappings']")" \
    "{'nmap': 3, 'mapped': 75300864, 'maxmapped': 75300864, 'rss': 37650432}" "json at snapshot 2"

echo "# timeline: the ticks' mapped bytes"
assert_eq "$("$MPQ" timeline maps.db --format csv)" \
"time,pid,seq,reason,label,ncalls,memtot,memlive,maxlive,rss,mapped
1.000,300,1,interval,,101,1458176,1458176,1458176,40000000,67108864
2.000,300,2,interval,,101,1458176,1458176,1458176,44000000,75300864
3.000,300,3,exit,,202,1871872,1462272,1871872,41000000,71204864
1.000,0,,,,101,1458176,1458176,,40000000,67108864
2.000,0,,,,101,1458176,1458176,,44000000,75300864
3.000,0,,,,202,1871872,1462272,,41000000,71204864" "csv: a column mapped, the tree's the processes' sum"
assert_eq "$("$MPQ" timeline basic.db --format csv | head -n 1)" "time,pid,seq,reason,label,ncalls,memtot,memlive,maxlive,rss" \
    "no such column without mappings"

echo "# report"
"$MPQ" report maps.db -o r.html 2>/dev/null || fail "report failed"
assert_eq "$(python3 "$ROOT/tests/lib/report_page.py" r.html ids | grep -e mapped -e memcold | paste -sd' ')" \
  "flame-mapped flame-memcold top-mapped top-memcold functions-mapped-self functions-mapped-inclusive functions-memcold-self functions-memcold-inclusive" \
  "report: a flame graph, stacks and functions of the mappings and of the cold bytes"
assert_match "$(cat r.html)" "mmap anonymous" "their stacks"

echo "# merge carries the columns"
"$MPQ" merge -o m.db maps.db b.db 2>/dev/null || fail "merge failed"
assert_eq "$(q m.db "SELECT sum(nmap), sum(mapped), sum(maxmapped), sum(rss), sum(memcold), max(coldage) FROM sample")" \
    "12|162889728|169082880|87588864|4612096|5" "every row's new columns"
assert_eq "$(q m.db "SELECT group_concat(mapped) FROM (SELECT mapped FROM tick ORDER BY process, time)")" \
    "67108864,75300864,71204864,67108864,75300864,71204864" "tick.mapped"
assert_eq "$("$MPQ" top --mmap m.db --run all --format csv)" "$("$MPQ" top --mmap maps.db b.db --format csv)" \
    "top --mmap of the merged file = of the two files"
assert_eq "$("$MPQ" fold m.db --run all --by coldage)" "main;cache_fill 1
main;leak_buf 5" "fold --by coldage across two processes: the largest"

echo "# older files and files without them"
old_fixture 4
assert_eq "$("$MPQ" top v4.db --format csv)" "$("$MPQ" top basic.db --format csv)" "a version-4 file: the same columns as a version-5 one without mappings"

echo "# errors"
expect_fail 2 '^mpquery: basic.db: no mappings in this profile \(the program made no mmap of its own, or was recorded before format version 5\)$' \
    "$MPQ" top basic.db --mmap
expect_fail 2 '^mpquery: v4.db: no mappings in this profile' "$MPQ" top v4.db --mmap
expect_fail 2 '^mpquery: top: --mmap sorts by nmap, mapped, maxmapped or rss, not --by memtot \(see mpquery top --help\)$' \
    "$MPQ" top maps.db --mmap --by memtot
expect_fail 2 "^mpquery: top: bad value 'cold' for --by \(expected ncalls, memtot, nfree, nlive, memlive, maxlive, ntemp, time, nmap, mapped, maxmapped, rss, memcold or coldage\)" \
    "$MPQ" top maps.db --by cold
expect_fail 2 "^mpquery: flame: --by coldage: an age \(a stack's largest\), not an amount: it cannot be a width \(see mpquery flame --help\)$" \
    "$MPQ" flame maps.db --by coldage -o f.svg
expect_fail 2 "^mpquery: export: --by coldage: an age" "$MPQ" export maps.db --format speedscope --by coldage -o x.json
expect_fail 2 "^mpquery: diff: --by coldage: an age" "$MPQ" diff maps.db b.db --by coldage --flame -o d.svg
[ ! -e f.svg ] && [ ! -e x.json ] && [ ! -e d.svg ] || fail "a refused command wrote a file"
"$MPQ" flame maps.db --by mapped -o f2.svg 2>/dev/null || fail "flame --by mapped failed"
assert_match "$(cat f2.svg)" "mmap anonymous" "flame --by mapped: the mapping stacks"
echo PASS
