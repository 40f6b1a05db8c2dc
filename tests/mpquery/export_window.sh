#!/bin/bash
# mpquery export --format pprof of a time window (--since, --until, as
# top's): the sample types named as pprof's heap profiles name them
# (alloc_objects, alloc_space, inuse_objects, inuse_space), each value the
# window's change, and time_nanos / duration_nanos the window's (its since
# and until snapshots), decoded with the npm package pprof-format
# (tests/lib/npm.sh). On the fleet fixture (three processes, snapshots at
# +1, +2, +3 s from 5000 s): +1.5..+2.5 reads the snapshots at +1 and +2:
# api pid 10 get 2 calls, 200 bytes (1 block, 100 bytes live), db put 1
# call, 10 bytes, api pid 20 put 5 calls, 50000 bytes, all live.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
source "$ROOT/tests/lib/npm.sh"
fixture fleet >/dev/null

"$MPQ" export fleet.db --format pprof --since +1.5 --until +2.5 -o w.pb.gz 2>err.txt || fail "export --since --until: $(cat err.txt)"
assert_eq "$(sed 's/ ([0-9]* B)$//' err.txt)" "mpquery: window +1.500..+2.500 s: snapshots of 3 processes (3 with one in the window), from +1.000 to +2.000 s
mpquery: wrote w.pb.gz" "export's window line, as top's"
"$MPQ" export fleet.db --format pprof -o all.pb.gz -q || fail "export without a window"
expect_fail 2 "^mpquery: export: --format massif writes every snapshot: no --snapshot, --since or --until" \
    "$MPQ" export fleet.db --format massif --since +1
expect_fail 2 "^mpquery: export: bad value 'soon' for --since" "$MPQ" export fleet.db --format pprof --since soon

PINS="pprof-format@2.3.2"
npm_pins $PINS
npm_ready $PINS || { echo "SKIP: npm package $PINS not installed: $(tail -n 1 npm.log)"; exit 0; }
pprof() {
    NPM=$NPM node - "$1" <<'EOF' || fail "$1: pprof-format cannot decode it"
const fs = require('fs'), zlib = require('zlib');
const { Profile } = require(process.env.NPM + '/node_modules/pprof-format');
const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(process.argv[2])));
const s = i => p.stringTable.strings[Number(i)];
const fn = new Map(p.function.map(f => [String(f.id), f]));
const loc = new Map(p.location.map(l => [String(l.id), l]));
console.log('types: ' + p.sampleType.map(t => s(t.type) + '/' + s(t.unit)).join(' ') + ', default ' + s(p.defaultSampleType));
console.log('totals: ' + p.sampleType.map((t, k) => p.sample.reduce((a, x) => a + BigInt(x.value[k]), 0n)).join(' '));
console.log('time: ' + p.timeNanos + ' duration: ' + p.durationNanos);
for (const x of p.sample)
    console.log(x.locationId.map(i => s(fn.get(String(loc.get(String(i)).line[0].functionId)).name)).join(' < ')
                + ': ' + x.value.join(' '));
EOF
}
assert_eq "$(pprof w.pb.gz)" "types: alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes, default inuse_space
totals: 8 50210 7 50110
time: 5001000000000 duration: 1000000000
get < main: 2 200 1 100
put < main: 6 50010 6 50010" "pprof --since +1.5 --until +2.5: the window's values, Go's heap sample types, the window's times"
assert_eq "$(pprof all.pb.gz | sed -n 2,3p)" "totals: 38 56630 20 3530
time: 5000000000000 duration: 3000000000" "pprof without a window: every allocation, from the start to the last snapshot"
echo PASS
