# The program's own mappings per stack (prof/snapshot/maps.c): each mapping counts
# in the (stack, thread) row of its stack below a '[mmap]' leaf naming its
# kind: nmap (mappings made), mapped (bytes mapped now), maxmapped, rss
# (resident at the snapshot, /proc/self/pagemap). tests/progs/mmap_kinds.c
# kinds: 64 MB anonymous, half touched; a 1 MB file read through; 4 MB
# whose middle MB is unmapped; 1 MB grown to 8 MB by mremap; 2 MB whose
# first MB is mapped over with MAP_FIXED; 1 MB shared anonymous, touched;
# the break grown by 1 MB and shrunk by 256 KB. malloc's own mappings
# (its large blocks, its arenas) are heap: no mapping rows.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/mmap_kinds
MB=1048576
# mq DB SQL: mpquery sql's rows, csv, without the header
mq() { $MPQ sql "$1" "$2" --format csv | tail -n +2; }
# each mapping row: its kind (the leaf), the function that called mmap,
# nmap, mapped, maxmapped, rss
ROWS="SELECT (SELECT module || ':' || function FROM stack_frames f WHERE f.stack = s.stack AND f.depth = 0) AS kind,
             (SELECT function FROM stack_frames f WHERE f.stack = s.stack AND f.depth = 1) AS caller,
             s.nmap, s.mapped, s.maxmapped, s.rss
      FROM last_sample s WHERE s.nmap > 0"

"$P" kinds "$T/plain.bin" > plain.out; plain_rc=$?
profile k.db "$P" kinds "$T/f.bin" > prof.out 2> err; rc=$?
assert_eq "$rc|$(cat prof.out)" "$plain_rc|$(cat plain.out)" "the program's output and status are its own"
assert_eq "$rc|$(cat prof.out)" "3|mapped" "the program ran through, errno and results as without the profiler"
assert_eq "$(mq k.db "$ROWS AND s.stack NOT IN (SELECT stack FROM stack_frames WHERE function IN ('map_anon', 'map_file', 'map_grow', 'map_shared')) ORDER BY 2")" \
"[mmap]:anonymous,check_errno,1,0,4096,0
[mmap]:brk,grow_break,1,$((MB - 262144)),$MB,0
[mmap]:anonymous,map_fixed_base,1,$MB,$((2 * MB)),0
[mmap]:anonymous,map_fixed_over,1,$MB,$MB,0
[mmap]:anonymous,map_split,1,$((3 * MB)),$((4 * MB)),0" \
    "untouched mappings: munmap of a part, MAP_FIXED over one, the break, exact"
# touched ones: rss within two pages of what the program touched
assert_eq "$(mq k.db "$ROWS AND s.rss > 0 ORDER BY 2" | while IFS=, read kind fn nmap mapped max rss; do
    echo "$kind,$fn,$nmap,$mapped,$max,$rss" | sed 's/,[0-9]*$//'; echo "$fn $rss" >> rss.txt; done)" \
"[mmap]:anonymous,map_anon,1,$((64 * MB)),$((64 * MB))
[mmap]:$T/f.bin,map_file,1,$MB,$MB
[mmap]:anonymous,map_grow,1,$((8 * MB)),$((8 * MB))
[mmap]:anonymous shared,map_shared,1,$MB,$MB" "touched mappings: kinds, file path, mremap's bytes in the first stack"
while read fn rss; do
    case $fn in map_anon) want=$((32 * MB)) ;; *) want=$MB ;; esac
    d=$((rss - want)); d=${d#-}
    [ $d -le 8192 ] || fail "$fn: rss $rss, expected $want within two pages"
    echo "  ok: $fn: rss $rss (touched $want)"
done < rss.txt
# mpquery top --mmap reads the same: the stacks by mapped bytes, exact
assert_eq "$("$MPQ" top k.db --mmap --format csv | cut -d, -f1-3,7)" \
"nmap,mapped,maxmapped,where
1,$((64 * MB)),$((64 * MB)),mmap anonymous < map_anon < kinds < main
1,$((8 * MB)),$((8 * MB)),mmap anonymous < map_grow < kinds < main
1,$((3 * MB)),$((4 * MB)),mmap anonymous < map_split < kinds < main
1,$MB,$MB,mmap $T/f.bin < map_file < kinds < main
1,$MB,$((2 * MB)),mmap anonymous < map_fixed_base < kinds < main
1,$MB,$MB,mmap anonymous < map_fixed_over < kinds < main
1,$MB,$MB,mmap anonymous shared < map_shared < kinds < main
1,$((MB - 262144)),$MB,mmap brk < grow_break < kinds < main" "top --mmap: every mapping stack by mapped bytes"
# a '[mmap]' frame: offset = 48 bits of the name's FNV-1a, like a tag's
assert_eq "$(mq k.db "SELECT DISTINCT printf('%x', offset) FROM stack_frames WHERE module = '[mmap]' AND function = 'anonymous'")" \
    "$(printf '%x' $(( $($PY3 -c "
h = 0xcbf29ce484222325
for c in b'anonymous': h = ((h ^ c) * 1099511628211) % 2**64
print(h)") & 0xffffffffffff )))" "the kind's frame offset is its name's hash"
# heap counters 0 on mapping rows, mapping counters 0 on heap rows
assert_eq "$(mq k.db "SELECT count(*) FROM sample WHERE nmap + mapped + maxmapped + rss > 0 AND ncalls + memtot + nfree + memlive + maxlive > 0")" 0 \
    "no row has both heap and mapping counters"
# the ticks' mapped: every mapping, at exit (64 + 1 + 3 + 8 + 1 + 1 + 1 MB + 768 KB)
assert_eq "$(mq k.db "SELECT mapped FROM tick ORDER BY time DESC LIMIT 1")" $((79 * MB + 786432)) "the last tick's mapped"

# malloc's mappings are heap: 64 MB, realloc'd to 96 MB, two threads' arenas
profile h.db "$P" heap > out 2> err; rc=$?
assert_eq "$rc|$(cat out)" "0|heap" "heap: the program ran"
assert_eq "$(mq h.db "SELECT count(*), coalesce(max(maxmapped), 0) FROM sample WHERE nmap + mapped + maxmapped + rss > 0")|$(mq h.db "SELECT max(mapped) FROM tick")" \
    "0,0|0" "heap: no mapping rows, nothing mapped in the ticks"
assert_eq "$(mq h.db "SELECT count(*) FROM frame_info WHERE module = '[mmap]'")" 0 "heap: no '[mmap]' frame"

# MP_MMAP=0: nothing recorded, the program unchanged
MP_MMAP=0 profile off.db "$P" kinds "$T/g.bin" > out 2> err; rc=$?
assert_eq "$rc|$(cat out)" "3|mapped" "MP_MMAP=0: the program ran"
assert_eq "$(mq off.db "SELECT count(*) FROM sample WHERE nmap + mapped + maxmapped + rss > 0")|$(mq off.db "SELECT max(mapped) FROM tick")|$(mq off.db "SELECT settings LIKE '%MP_MMAP=0%' FROM process")" \
    "0|0|1" "MP_MMAP=0: no mapping rows, settings say so"

# MP_ENABLED=0: the profiler inactive, mappings not recorded
MP_ENABLED=0 profile inactive.db "$P" kinds "$T/i.bin" > out 2> err; rc=$?
assert_eq "$rc|$(mq inactive.db "SELECT count(*) FROM sample WHERE nmap > 0")" "3|0" "inactive: no mapping recorded"

# MP_STACKS=tags: a mapping's stack is its kind's frame (no tags pushed)
MP_STACKS=tags profile tags.db "$P" kinds "$T/j.bin" > out 2> err
assert_eq "$(mq tags.db "SELECT f.function, s.nmap, s.mapped FROM last_sample s JOIN stack_frames f ON f.stack = s.stack AND f.depth = 0
    WHERE s.nmap > 0 AND NOT EXISTS (SELECT 1 FROM stack_frames g WHERE g.stack = s.stack AND g.depth = 1) ORDER BY 1")" \
"$T/j.bin,1,$MB
anonymous,6,$((77 * MB))
anonymous shared,1,$MB
brk,1,$((MB - 262144))" "MP_STACKS=tags: one row per kind, no frames under it"
