# The ledger (prof/snapshot/ledger.c, ledger_heap.c) of a program holding a 64 MiB
# block it never wrote (tests/progs/ledger_cases.c untouched): 'heap live'
# is resident as much as the block is in the kernel's smaps (its chunk
# header's page) and the program's few small blocks, not the profiler's
# heap bytes (issue 41 item 12: 3.1-3.5 MiB); its size is the block's.
. "$(dirname "$0")/../lib/lib.sh"
KiB=1024 MiB=1048576
MP_QUIET=1 profile a.db "$B/tests/ledger_cases" untouched >out 2>err || fail "the program failed: $(cat err)"
block_rss=$(sed -n 's/^block rss=\([0-9]*\) size=.*/\1/p' out)
assert_eq "$block_rss" 4 "smaps: the block's mapping has one page resident (KiB)"
csv=$("$MPQ" rss a.db --format csv -n 0) || fail "mpquery rss failed"
line() { printf '%s\n' "$csv" | awk -F, -v l="$1" -v c="$2" '$3 == l && $4 == "" { print $c }'; }
live=$(line 'heap live' 5)
[ "$live" -ge $((block_rss * KiB)) ] && [ "$live" -le $((block_rss * KiB + 64 * KiB)) ] ||
    fail "heap live resident: $live, expected the block's $((block_rss * KiB)) and at most 64 KiB of small blocks"
echo "  ok: heap live resident: $live (the block's $((block_rss * KiB)) resident bytes and small ones)"
size=$(line 'heap live' 6)
[ "$size" -ge $((64 * MiB)) ] && [ "$size" -le $((64 * MiB + 64 * KiB)) ] || fail "heap live size: $size, expected 64 MiB and small blocks"
echo "  ok: heap live size: $size"
assert_eq "$(q a.db "SELECT sum(memlive) >= 67108864 FROM sample s JOIN snapshot n ON n.id = s.snapshot WHERE n.reason = 'exit'")" 1 \
    "the profile's samples hold the block live at exit"
# the profiler's heap bytes are its own line's: it holds more than they are
[ "$(line profiler 5)" -ge $((1 * MiB)) ] || fail "profiler: $(line profiler 5), expected >= 1 MiB (its heap bytes)"
echo "  ok: profiler: $(line profiler 5) resident"
assert_eq "$(q a.db "SELECT sum(CASE WHEN line = 'rss' THEN -bytes ELSE bytes END) FROM ledger")" 0 "the lines add up to rss"
