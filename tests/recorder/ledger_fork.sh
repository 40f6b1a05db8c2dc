# The ledger of a fork child (tests/progs/ledger_cases.c fork): the 32 MiB
# block and the 64 MiB mapping its parent wrote are the child's memory as
# well (shared until written, resident in both for the kernel): 'heap
# live' and 'mmap anonymous', as resident as the child's own smaps says,
# not 'heap overhead' and 'unexplained' (issue 41 item 12: 62 %
# unexplained). The parent's ledger stays as it was.
. "$(dirname "$0")/../lib/lib.sh"
KiB=1024 MiB=1048576
MP_QUIET=1 profile a.db "$B/tests/ledger_cases" fork >out 2>err || fail "the program failed: $(cat err)"
child=$(sed -n 's/^child \([0-9]*\)$/\1/p' out)
block_rss=$(sed -n 's/^child block rss=\([0-9]*\) .*/\1/p' out)
map_rss=$(sed -n 's/^child mapping rss=\([0-9]*\) .*/\1/p' out)
assert_eq "$block_rss|$map_rss" "32772|65536" "smaps in the child: the block's chunk and the mapping all resident (KiB)"
assert_eq "$(q a.db "SELECT count(*) FROM process WHERE pid = $child AND ppid != 0")" 1 "the child has its process row"
for pid in $child $(q a.db "SELECT pid FROM process WHERE pid != $child"); do
    csv=$("$MPQ" rss a.db --pid "$pid" --format csv -n 0) || fail "mpquery rss --pid $pid failed"
    line() { printf '%s\n' "$csv" | awk -F, -v l="$1" -v c="$2" '$3 == l && $4 == "" { print $c }'; }
    who=$([ "$pid" = "$child" ] && echo child || echo parent)
    live=$(line 'heap live' 5)
    [ "$live" -ge $((32 * MiB)) ] && [ "$live" -le $((block_rss * KiB + 64 * KiB)) ] ||
        fail "$who: heap live resident $live, expected the 32 MiB block (its chunk $((block_rss * KiB)) resident)"
    echo "  ok: $who: heap live resident $live"
    assert_eq "$(line 'mmap anonymous' 5)|$(line 'mmap anonymous' 6)" "$((map_rss * KiB))|$((64 * MiB))" \
        "$who: mmap anonymous: the mapping, resident as smaps says, and its size"
    [ "$(line 'heap overhead' 5)" -lt $((8 * MiB)) ] || fail "$who: heap overhead $(line 'heap overhead' 5): the block in it"
    [ "$(line unexplained 5)" -lt $((1 * MiB)) ] || fail "$who: unexplained $(line unexplained 5), expected < 1 MiB"
    echo "  ok: $who: heap overhead $(line 'heap overhead' 5), unexplained $(line unexplained 5)"
done
