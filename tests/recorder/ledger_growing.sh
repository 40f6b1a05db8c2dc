# The ledger (prof/snapshot/ledger.c attribute) of a VMA claimed in part while a
# thread makes its pages resident (tests/progs/ledger_cases.c growing): a
# 4 MiB block written whole, in one VMA with a 16 MiB mapping right below
# its chunk that a thread keeps touching. 'heap live' is resident whole at
# each of 5 snapshots: smaps's Rss of the VMA is of an earlier moment, and
# the pages the mapping gained since were taken off the block (15 to 40
# pages short at every snapshot before; under load, the ledger_mix 'set
# up' snapshot 1 or 2 pages short by an 8 KiB table of the profiler's).
. "$(dirname "$0")/../lib/lib.sh"
KiB=1024 MiB=1048576
MP_QUIET=1 profile a.db "$B/tests/ledger_cases" growing >out 2>err || fail "the program failed ($?): $(cat err)"
vma=$(sed -n 's/^both rss=[0-9]* size=\([0-9]*\)$/\1/p' out)
[ -n "$vma" ] && [ "$vma" -ge $((16 * KiB + 4100)) ] || fail "smaps: the block's VMA is $vma KiB, expected the mapping's 16 MiB and the chunk's 4100 KiB in one"
echo "  ok: smaps: one VMA of $vma KiB holds the mapping and the block"
assert_eq "$(q a.db "SELECT count(*) FROM snapshot WHERE label = 'growing'")" 5 "snapshots labelled growing"
assert_eq "$(q a.db "SELECT count(*) FROM ledger l JOIN snapshot s ON s.id = l.snapshot
    WHERE s.label = 'growing' AND l.line = 'heap live' AND l.size >= $((4 * MiB)) AND l.bytes = l.size")" 5 \
    "snapshots whose 'heap live' (4 MiB and more) is resident whole"
assert_eq "$(q a.db "SELECT count(*) FROM ledger l JOIN snapshot s ON s.id = l.snapshot
    WHERE s.label = 'growing' AND l.line = 'mmap anonymous' AND l.bytes BETWEEN 4096 AND $((16 * MiB))")" 5 \
    "snapshots whose 'mmap anonymous' holds some of the mapping, at most its 16 MiB"
assert_eq "$(q a.db "SELECT count(DISTINCT snapshot) FROM ledger GROUP BY snapshot
    HAVING sum(CASE WHEN line = 'rss' THEN -bytes ELSE bytes END) != 0")" "" "snapshots whose lines do not add up to rss"
