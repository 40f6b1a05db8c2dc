# MP_MAX_MEMORY caps the profiler's own memory. Full capture keeps an
# eighth of it back; once the rest is used, the recorder moves to sampling
# (MP_SAMPLE's sampler, 512K: said once on stderr), every block still in
# the map: the totals stay exact, sampled blocks get their stacks (with
# their weights: estimates) from the eighth kept, what got no stack counts
# without one, and the program runs on unchanged. The profile says when
# (process.settings' MP_SAMPLED_FROM; mpquery info's line). With 4 threads too
# (intern_race), the totals are those of a run without the cap.
. "$(dirname "$0")/../lib/lib.sh"
# has TEXT STRING WHAT: STRING in TEXT, as written
has() { printf '%s' "$1" | grep -qF -- "$2" || fail "$3: no [$2] in [$1]"; echo "  ok: $3"; }
MP_MAX_MEMORY=16M profile a.db $B/tests/many_paths 17 2>err; rc=$?
assert_eq "$rc" 0 "exit status"
assert_eq "$(grep -c 'mallocprof: warning: ' err)" 1 "one line"
has "$(sed 's/+[0-9.]* s on/+S s on/' err)" "mallocprof: warning: the profiler reached MP_MAX_MEMORY (16777216 bytes, less the eighth kept for samples): from +S s on it samples, one stack per 524288 bytes allocated on average (512K, MP_SAMPLE being 0); the totals stay exact" "the line says when and the period"
# many_paths 17: 131,072 paths, one malloc(8) and its free each
assert_eq "$(q a.db 'SELECT ncalls, memtot, nfree, memlive FROM process_totals')" "131072|1048576|131072|0" "totals exact"
# a path's stack in full capture counts its 1 call; a sampled one its
# weight, 1/p of an 8-byte block at 512K: 65537 (whole calls)
full=$(q a.db "SELECT count(*) FROM last_sample WHERE ncalls = 1")
sampled=$(q a.db "SELECT count(*) FROM last_sample WHERE ncalls = 65537")
nostack=$(q a.db "SELECT ncalls_nostack FROM process_totals")
assert_eq "$(q a.db "SELECT count(*) FROM last_sample")" "$((full + sampled))" "every stack a full one or a sample"
assert_eq "$((full + sampled + nostack))" 131072 "full + sampled + not sampled = all"
# the cap counts the profiler's heap too, SQLite's and libdw's blocks (prof/base/ownheap.c)
[ "$full" -gt 4000 ] || fail "expected the first paths in full capture ($full)"
# the first allocation after the switch is sampled (the countdown starts at
# 0); about 1 MB allocated after it: about 2 more
[ "$sampled" -ge 1 ] || fail "no sampled stack after the switch"
from=$(q a.db "SELECT settings FROM process" | sed -n 's/.* MP_SAMPLED_FROM=\([0-9.]*\) MP_SAMPLED_EVERY=524288$/\1/p')
[ -n "$from" ] || fail "no MP_SAMPLED_FROM in process.settings: $(q a.db 'SELECT settings FROM process')"
info=$($MPQ info a.db) || fail "mpquery info"
has "$info" "sampled from +$from s on (MP_MAX_MEMORY reached)" "info's line"
has "$info" "totals: exact (sampled once MP_MAX_MEMORY was reached: the stacks' counters are estimates" "info's totals labelled"
has "$info" "ncalls  131072 allocations ($nostack not sampled)" "info: the blocks not sampled"
has "$($MPQ info a.db --format json)" "\"sampled_from\": $from," "info's JSON: sampled_from"
top=$($MPQ top a.db) || fail "mpquery top"
has "$top" "(estimated total, from samples: " "top's total labelled an estimate"
mem=$(q a.db "SELECT profiler_memory FROM snapshot WHERE reason = 'exit'")
echo "# profiler memory at the cap: $mem bytes; $full stacks in full capture, $sampled sampled"
MP_MAX_MEMORY=4G profile b.db $B/tests/many_paths 17 2>err
assert_eq "$(grep -c warning err)" 0 "nothing said without the cap"
assert_eq "$(q b.db "SELECT count(*), sum(ncalls) FROM last_sample")" "131072|131072" "without the cap: every path its stack"
assert_eq "$(q b.db "SELECT settings LIKE '%MP_SAMPLED_FROM%' FROM process")" 0 "without the cap: no MP_SAMPLED_FROM"
# 4 threads interning stacks at once (intern_race): under the cap, the
# same exact totals as without it (and the line at most once)
MP_MAX_MEMORY=16M profile r.db $B/tests/intern_race 2>err || fail "intern_race under the cap"
[ "$(grep -c 'reached MP_MAX_MEMORY' err)" -le 1 ] || fail "said more than once: $(cat err)"
MP_MAX_MEMORY=4G profile r2.db $B/tests/intern_race 2>/dev/null || fail "intern_race"
totals="SELECT ncalls, memtot, nfree, memlive FROM process_totals"
assert_eq "$(q r.db "$totals")" "$(q r2.db "$totals")" "4 threads: the totals as without the cap"
echo "# intern_race under 16M: $(q r.db "SELECT count(*) FROM last_sample") rows, $(q r.db 'SELECT ncalls_nostack FROM process_totals') calls not sampled"
