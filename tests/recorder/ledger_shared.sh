# The ledger of a MAP_SHARED|MAP_ANONYMOUS mapping (16 MiB, 8 touched) and
# a memfd mapping (32 MiB, 4 touched), tests/progs/ledger_cases.c shared:
# 'mmap anonymous' and 'mmap file', resident as smaps says, sized as
# mapped; 'modules' (their VMAs are files for the kernel: /dev/zero,
# /memfd:) not grown by their sizes (issue 41 item 12: +48 MiB): the same
# size as a run without them (ledger_cases untouched, the same libraries).
. "$(dirname "$0")/../lib/lib.sh"
KiB=1024 MiB=1048576
MP_QUIET=1 profile a.db "$B/tests/ledger_cases" shared >out 2>err || fail "the program failed: $(cat err)"
MP_QUIET=1 profile b.db "$B/tests/ledger_cases" untouched >/dev/null 2>err || fail "the program failed: $(cat err)"
assert_eq "$(sed -n 's/^shared rss=\([0-9]*\) size=\([0-9]*\)/\1 \2/p' out)|$(sed -n 's/^memfd rss=\([0-9]*\) size=\([0-9]*\)/\1 \2/p' out)" \
    "8192 16384|4096 32768" "smaps: the mappings' resident and sizes (KiB)"
csv=$("$MPQ" rss a.db --format csv -n 0) || fail "mpquery rss failed"
line() { printf '%s\n' "$1" | awk -F, -v l="$2" -v c="$3" '$3 == l && $4 == "" { print $c }'; }
assert_eq "$(line "$csv" 'mmap anonymous' 5)|$(line "$csv" 'mmap anonymous' 6)" "$((8 * MiB))|$((16 * MiB))" "mmap anonymous: the shared mapping"
assert_eq "$(line "$csv" 'mmap file' 5)|$(line "$csv" 'mmap file' 6)" "$((4 * MiB))|$((32 * MiB))" "mmap file: the memfd mapping"
base=$("$MPQ" rss b.db --format csv -n 0) || fail "mpquery rss failed"
m=$(line "$csv" modules 6) mb=$(line "$base" modules 6)
d=$((m > mb ? m - mb : mb - m))
[ "$d" -lt $((1 * MiB)) ] || fail "modules' size: $m, without the mappings $mb: $d apart (the mappings' 48 MiB in it?)"
echo "  ok: modules' size: $m, without the mappings $mb"
assert_eq "$(q a.db "SELECT sum(CASE WHEN line = 'rss' THEN -bytes ELSE bytes END) FROM ledger")" 0 "the lines add up to rss"
