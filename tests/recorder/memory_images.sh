# The profiler gives back the pages of the files it read (issue 44 item 2):
# libdw maps a module's file, or its debug file, whole and privately to
# read unwind rules and symbols, and every page a reading touched (64 KiB a
# touch, with the kernel's fault-around) stayed resident in the program:
# 7.4 MiB in this program's 7 images (libc's debug file, its .eh_frame and
# symbols), 24 MB in clang's. After a snapshot, /proc/self/smaps (the
# program's own reading, tests/progs/file_images.c) shows them given back;
# the ledger of that snapshot (its second source) puts the profiler within
# a bound.
. "$(dirname "$0")/../lib/lib.sh"
KiB=1024 MiB=1048576
MP_QUIET=1 profile a.db "$B/tests/file_images" >out 2>err || fail "the program failed: $(cat err)"
read -r word images word2 kib <out
assert_eq "$word $word2" "images resident" "the program's line: $(cat out)"
# libc, libc's debug file (where installed) and the program, each read by
# the symbols' session, the rules' and the rules' table of .eh_frame
[ "$images" -ge 3 ] || fail "$images private file images, expected libc's and the program's (3 each)"
[ "$kib" -le $((images * 64)) ] || fail "$kib KiB resident in $images images after the snapshot, expected <= 64 KiB each"
echo "  ok: $images images, $kib KiB resident after the snapshot (<= 64 KiB each)"
prof=$(q a.db "SELECT l.bytes FROM ledger l JOIN snapshot s ON s.id = l.snapshot WHERE s.label = 'after' AND l.line = 'profiler'")
[ -n "$prof" ] || fail "no profiler line in the snapshot 'after''s ledger"
[ "$prof" -le $((8 * MiB)) ] || fail "the profiler holds $prof bytes resident at 'after', expected <= 8 MiB"
echo "  ok: the profiler's line at 'after': $prof bytes resident (<= 8 MiB)"
