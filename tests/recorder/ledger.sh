# The ledger (prof/snapshot/ledger.c) on tests/progs/ledger_mix.c, run with
# MP_INTERVAL so that it has several snapshots: at each one (peaks aside)
# the ten lines, adding up to the rss line, which is the kernel's RSS;
# each line within 5 % of what the program did: heap live = its 1,000
# blocks of 10,000 bytes and its 4 MiB cache and buffer, thread stacks >=
# the 4 threads' touched 256 KiB, the 64 MiB mapping half touched (32 MiB:
# 'mmap anonymous' once the mapping recorder is there, else unexplained).
# mpquery rss reads it (csv, json). The ledger's cost is said by the flush.
. "$(dirname "$0")/../lib/lib.sh"
MiB=1048576
MP_INTERVAL=0.2 profile a.db $B/tests/ledger_mix 1.2 2>err || fail "the program failed: $(cat err)"
nsnap=$(q a.db "SELECT count(*) FROM snapshot WHERE reason != 'peak'")
[ "$nsnap" -ge 4 ] || fail "expected >= 4 snapshots, got $nsnap"
assert_eq "$(q a.db "SELECT count(*) FROM snapshot s WHERE reason != 'peak' AND (SELECT count(*) FROM ledger WHERE snapshot = s.id) = 10")" "$nsnap" "every snapshot but the peaks has the ten lines"
assert_eq "$(q a.db "SELECT count(*) FROM ledger l JOIN snapshot s ON s.id = l.snapshot WHERE s.reason = 'peak'")" 0 "peak snapshots have none"
# (the interval thread, waiting while the exit's snapshot was written, wrote one after it)
assert_eq "$(q a.db "SELECT reason FROM snapshot ORDER BY seq DESC LIMIT 1")" exit "the exit's snapshot is the last"
assert_eq "$(q a.db "SELECT count(*) FROM snapshot s WHERE reason != 'peak' AND
    (SELECT sum(CASE WHEN line = 'rss' THEN -bytes ELSE bytes END) FROM ledger WHERE snapshot = s.id) != 0")" 0 "at each snapshot, the lines add up to the rss line"
assert_match "$(cat err)" "exit snapshot, .* the ledger in [0-9.]+ s" "the flush says the ledger's time"
# the exit snapshot's ledger, from mpquery rss
csv=$("$MPQ" rss a.db --format csv -n 1) || fail "mpquery rss failed"
line() { printf '%s\n' "$csv" | awk -F, -v l="$1" '$3 == l && $4 == "" { print $5 }'; }
within() {  # within NAME VALUE EXPECTED: |VALUE - EXPECTED| <= 5 % of EXPECTED
    /usr/bin/python3 -c 'import sys; v, e = int(sys.argv[2]), int(sys.argv[3]); sys.exit(0 if abs(v - e) <= 0.05 * e else 1)' "$@" \
        || fail "$1: $2, expected $3 within 5 %"
    echo "  ok: $1: $2 (expected $3 within 5 %)"
}
rss=$(line rss)
# the kernel's RSS: the latest point of memory over time (statm) beside it
within "rss, against statm at the same time" "$rss" "$(q a.db "SELECT rss FROM tick ORDER BY time DESC LIMIT 1")"
within "heap live: 1,000 blocks of 10,000 bytes, the cache and the buffer" "$(line 'heap live')" $((10000000 + 8 * MiB))
assert_eq "$(printf '%s\n' "$csv" | awk -F, '$3 == "heap live" && $4 != "" { print $5 }')" 10000000 "heap live's top stack: the 1,000 blocks"
assert_eq "$("$MPQ" rss a.db --format json -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["processes"][0]["lines"][0]["stacks"][0]["frames"][:2])')" \
    "['fill_blocks', 'main']" "json: its frames"
stacks=$(line 'thread stacks')
[ "$stacks" -ge $((4 * 256 * 1024)) ] || fail "thread stacks: $stacks, expected >= 4 x 256 KiB"
echo "  ok: thread stacks: $stacks >= the 4 threads' 256 KiB"
within "thread stacks: the 4 threads' 256 KiB (and a few pages each, the main thread's)" "$stacks" $((4 * 264 * 1024 + 32 * 1024))
for l in modules profiler; do [ "$(line $l)" -gt 0 ] || fail "$l: none"; done
echo "  ok: modules and profiler have resident bytes"
# the mapping: 32 MiB of the 64 touched. With the mapping recorder (its
# sample rows), 'mmap anonymous' says it and its top stack is map_region;
# without, nobody does and it is unexplained.
anon=$(line 'mmap anonymous') unexplained=$(line unexplained)
if [ "$(q a.db "SELECT count(*) FROM sample WHERE nmap > 0")" -gt 0 ]; then
    within "mmap anonymous: the half of the mapping touched" "$anon" $((32 * MiB))
    assert_match "$("$MPQ" rss a.db -n 1 | grep -A1 '^mmap anonymous' | tail -n 1)" "map_region" "its stack: map_region"
    [ "$unexplained" -lt $((rss / 20)) ] || fail "unexplained: $unexplained, expected < 5 % of $rss"
    echo "  ok: unexplained: $unexplained < 5 % of the rss"
else
    assert_eq "$anon" 0 "no mapping recorder: no mmap line"
    within "unexplained: the mapping (32 MiB) and little else" "$unexplained" $((32 * MiB))
fi

# once set up, the program allocates nothing: the last two snapshots' heap live are equal
assert_eq "$(q a.db "SELECT count(DISTINCT bytes) FROM (SELECT l.bytes FROM ledger l JOIN snapshot s ON s.id = l.snapshot
    WHERE l.line = 'heap live' AND s.reason != 'peak' ORDER BY s.seq DESC LIMIT 2)")" 1 "heap live: the same in the last two snapshots"
# the program writes every byte it allocates: once set up (its snapshot
# labelled so; an interval snapshot may come between a malloc and its
# memset, seen here 2 runs in 6 on a loaded machine), its live bytes are
# all resident at every snapshot (the allocator's untouched tcache'd blocks,
# which the flush's churn adds to, are not taken from them: ledger.c split_heap)
setup=$(q a.db "SELECT seq FROM snapshot WHERE label = 'set up'")
[ -n "$setup" ] || fail "no snapshot labelled 'set up'"
assert_eq "$(q a.db "SELECT count(*) FROM ledger l JOIN snapshot s ON s.id = l.snapshot
    WHERE l.line = 'heap live' AND s.reason != 'peak' AND s.seq >= $setup AND l.bytes != l.size")" 0 "heap live: all resident once set up"

# MP_LEDGER=0: no ledger rows, the rest of the profile as usual
MP_LEDGER=0 profile off.db $B/tests/ledger_mix 0.2 2>err || fail "the program failed: $(cat err)"
assert_eq "$(q off.db "SELECT count(*) FROM ledger")|$(q off.db "SELECT count(*) > 0 FROM sample WHERE memlive > 0")" "0|1" \
    "MP_LEDGER=0: no ledger, the samples there"
