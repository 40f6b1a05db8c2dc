#!/bin/bash
# mpquery info on the basic fixture: exact totals (including allocations
# without a stack and frees of unknown blocks), threads, snapshots,
# dictionary sizes, settings, profiler memory; text, csv and json.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null

info=$("$MPQ" info basic.db --bytes) || fail "info failed"
for re in '^  ncalls  50 allocations \(8 without a stack\)$' '^  memtot  8400 bytes allocated \(63 bytes without a stack\)$' \
          '^  nfree   40 frees \(2 of blocks the profiler never saw\)$' '^  nlive   10 blocks still allocated$' \
          '^  memlive 3260 bytes still allocated$' '^  peak    5000 bytes: the process peak \(its maxlive; no peak snapshot\)$' \
          '^    100  main        29    6300     20      9     3160     4000$' \
          '^    101  worker      21    2100     20      1      100      500$' \
          '^    \*1   \+2\.500s  exit  ' '^  settings: MP_DEPTH=128 MP_THRESHOLD=0$' \
          '^stacks with samples in this selection: 6; the stack tree: 18 nodes, frames: 11, functions: 9, modules: 3$' \
          '^profiler memory: 123456 bytes$'; do
    printf '%s\n' "$info" | grep -Eq -- "$re" || fail "info: no line matching /$re/"
    echo "  ok: info has /$re/"
done

# text by default: sizes in units (--bytes above: exact bytes)
assert_eq "$("$MPQ" info basic.db | sed -n '/^totals:/,/^process 100/p')" \
"totals:
  ncalls  50 allocations (8 without a stack)
  memtot  8.20 KiB allocated (63 B without a stack)
  nfree   40 frees (2 of blocks the profiler never saw)
  nlive   10 blocks still allocated
  memlive 3.18 KiB still allocated
  peak    4.88 KiB: the process peak (its maxlive; no peak snapshot)

process 100: /usr/bin/app" "info: totals in units"
assert_eq "$("$MPQ" info basic.db | sed -n '/^  threads:/,$p')" \
"  threads:
    tid  name    ncalls    memtot  nfree  nlive   memlive   maxlive
    100  main        29  6.15 KiB     20      9  3.09 KiB  3.91 KiB
    101  worker      21  2.05 KiB     20      1     100 B     500 B
  snapshots (* = selected):
    seq  time     reason  label  ncalls    memtot   memlive   maxlive  profiler
    *1   +2.500s  exit               50  8.20 KiB  3.18 KiB  4.88 KiB   121 KiB

stacks with samples in this selection: 6; the stack tree: 18 nodes, frames: 11, functions: 9, modules: 3
profiler memory: 121 KiB" "info: threads and snapshots in units"

json=$("$MPQ" info basic.db --format json)
assert_eq "$(json_get "$json" 'tuple(j["totals"][k] for k in ("ncalls","memtot","nfree","nlive","memlive","maxlive","ncalls_nostack","memtot_nostack","nfree_unknown"))')" \
  "(50, 8400, 40, 10, 3260, 5000, 8, 63, 2)" "info json totals (nlive = ncalls - nfree)"
assert_eq "$(json_get "$json" '[(p["pid"], p["exe"], p["totals"]["memlive"], p["duration"], [t["name"] for t in p["threads"]]) for p in j["processes"]]')" \
  "[(100, '/usr/bin/app', 3260, 2.5, ['main', 'worker'])]" "info json processes"
assert_eq "$(json_get "$json" 'j["peak"], j["processes"][0]["peak"]')" "(5000, {'bytes': 5000, 'snapshot': None, 'time': None, 'snapshot_bytes': None})" \
  "info json: the process peak (no peak snapshot: its maxlive, the totals' 5000)"
assert_eq "$(json_get "$json" 'j["stacks"], j["frames"], j["profiler_memory"], j["processes"][0]["snapshots"][0]["reason"]')" \
  "(18, 11, 123456, 'exit')" "info json counts"
assert_eq "$("$MPQ" info basic.db --format csv)" \
"pid,ppid,duration,threads,snapshots,ncalls,memtot,nfree,nlive,memlive,maxlive,command
100,1,2.500,2,1,50,8400,40,10,3260,5000,app --x" "info --format csv: one row a process"
