# A peak snapshot is written once (issue 40): after interval snapshots
# failed (the program out of descriptors), the recorder had forgotten
# what it wrote and wrote its first peak snapshot again, a second 'peak'
# row at the same time (3 runs in 3). tests/progs/fd_exhaust.c: peak_one
# (100 blocks of 100000 bytes, freed), its descriptors all taken for
# 500 ms (the interval snapshots lost), then peak_two (200 blocks, freed).
. "$(dirname "$0")/../lib/lib.sh"
MP_INTERVAL=0.1 LD_PRELOAD=$LIB MP_OUT=f.db "$B/tests/fd_exhaust" >out 2>err; rc=$?
assert_eq "$rc|$(cat out)" "0|out of descriptors" "the program's status and output"
lost=$(grep -c "^mallocprof: error: cannot write $T/f.db: .*(snapshot lost)$" err)
[ "$lost" -ge 2 ] || fail "expected interval snapshots lost while out of descriptors, $lost lines: $(head -c 300 err)"
echo "  ok: $lost interval snapshots lost"
assert_eq "$(q f.db "SELECT count(*), count(DISTINCT time) FROM snapshot WHERE reason = 'peak'")" "2|2" \
    "two peak snapshots, each time once"
# each peak's live bytes: its blocks and the array of their pointers (8
# bytes a block), and the functions that made them
assert_eq "$(q f.db "SELECT group_concat(t.memlive, ' ') FROM (SELECT * FROM snapshot WHERE reason = 'peak' ORDER BY seq) s
    JOIN totals t ON t.snapshot = s.id AND t.thread = 0")" "10000800 20001600" "the peaks' live bytes: peak_one's, then peak_two's"
assert_eq "$(q f.db "SELECT group_concat(f.function, ' ') FROM (SELECT * FROM snapshot WHERE reason = 'peak' ORDER BY seq) s
    JOIN sample a ON a.snapshot = s.id AND a.memlive = (SELECT max(memlive) FROM sample WHERE snapshot = s.id)
    JOIN stack_frames f ON f.stack = a.stack AND f.function GLOB 'peak_*'")" "peak_one peak_two" \
    "the largest live stack at each peak"
assert_eq "$(q f.db "SELECT count(DISTINCT seq) = count(*) FROM snapshot")" 1 "no seq twice"
