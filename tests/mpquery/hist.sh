# mpquery hist: the size histogram the recorder writes at each snapshot,
# log2 classes [lo, hi), exact on tests/progs/cheap_modes.c (its header
# has the allocations), in text, csv and json; selection by snapshot; the
# errors. (The recorder's side in every mode: tests/recorder/modes_cheap.sh.)
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"
profile a.db $B/tests/cheap_modes 2>/dev/null || fail "the program failed"
assert_eq "$("$MPQ" hist a.db --format csv)" "lo,hi,ncalls,memtot,nlive,memlive
16,32,10001,240016,0,0
32,64,301,15032,0,0
64,128,1201,114064,1100,107000
128,256,1,128,0,0
256,512,1,256,0,0
512,1024,2011,2010512,0,0
1024,2048,1,1024,0,0
2048,4096,1,2048,0,0
4096,8192,1,4096,0,0
1048576,2097152,1,1048576,1,1048576" "csv: every class with something in it"
assert_match "$("$MPQ" hist a.db | grep '^\[512, 1K)')" '^\[512, 1K\) +2011 +1\.92 MiB +0 +0 B +#{40}$' "text: sizes in units"
out=$("$MPQ" hist a.db --bytes)
assert_match "$out" '^size +ncalls +memtot +nlive +memlive +memtot' "text: the header, bars by memtot"
assert_match "$(printf '%s\n' "$out" | grep '^\[512, 1K)')" '^\[512, 1K\) +2011 +2010512 +0 +0 +#{40}$' "text: the largest class has the full bar"
assert_match "$("$MPQ" hist a.db --by memlive --bytes | grep '^\[1M, 2M)')" '^\[1M, 2M\) +1 +1048576 +1 +1048576 +#{40}$' "--by memlive: the live MiB block's bar"
assert_eq "$("$MPQ" hist a.db --format json | python3 -c 'import json,sys; r=json.load(sys.stdin)["rows"]; print(len(r), r[2])')" \
    "10 {'lo': 64, 'hi': 128, 'ncalls': 1201, 'memtot': 114064, 'nlive': 1100, 'memlive': 107000}" "json: rows of lo, hi and the counters"
# api_region's snapshot "region" (its 600 blocks of 10, 20 and 30 bytes made
# and freed); with MP_ENABLED=0 (a cheap mode) the classes are of glibc's
# sizes: 24, 24 and 40 bytes
MP_ENABLED=0 profile b.db $B/tests/api_region 2>/dev/null
assert_eq "$("$MPQ" hist b.db --snapshot label:region --format csv | tail -n +2)" "16,32,300,5000,0,0
32,64,300,9000,0,0" "--snapshot label:region, a cheap mode: the classes of the allocator's sizes"
profile c.db $B/tests/api_region 2>/dev/null
assert_eq "$("$MPQ" hist c.db --snapshot label:region --format csv | tail -n +2)" "8,16,100,1000,0,0
16,32,500,13000,0,0" "--snapshot label:region, full capture: the classes of the requested sizes"
expect_fail 2 'hist: --by nfree: the histogram has ncalls, memtot, nlive and memlive' "$MPQ" hist a.db --by nfree
expect_fail 2 'hist: the histogram is per process: --thread applies only with --stack' "$MPQ" hist a.db --thread 1
# the basic fixture in format version 1
old_fixture 1
expect_fail 2 '^mpquery: v1.db: no size histogram in this profile \(format version 1' "$MPQ" hist v1.db
