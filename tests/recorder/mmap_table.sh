# The mapping table (prof/snapshot/maps.c) at scale and under contention,
# tests/progs/mmap_kinds.c: 1000 stacks mapping 8 KB twice each, every
# other mapping unmapped (the tables grow; each row exact); four threads
# mapping and unmapping 16 KB 10000 times each while a fifth allocates
# (the lock keeps the table in the kernel's order: exact counts, 16 KB
# left mapped per thread); edges of munmap and mremap.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/mmap_kinds
mq() { $MPQ sql "$1" "$2" --format csv | tail -n +2; }

MP_QUIET=1 profile many.db "$P" many > out 2> err; rc=$?
assert_eq "$rc|$(cat out err)" "0|many" "many: the program ran"
assert_eq "$(mq many.db "SELECT count(*), sum(nmap), sum(mapped) FROM last_sample WHERE nmap > 0")" "1000,2000,8192000" \
    "many: 1000 rows, 2000 mappings, 1000 of them mapped"
# the mappings 2i were unmapped: stacks of even index lost both, the others none
assert_eq "$(mq many.db "SELECT nmap, mapped, maxmapped, count(*) FROM last_sample WHERE nmap > 0 GROUP BY 1, 2, 3 ORDER BY 2")" \
"2,0,16384,500
2,16384,16384,500" "many: each row exact"

MP_QUIET=1 profile race.db "$P" race > out 2> err; rc=$?
assert_eq "$rc|$(cat out err)" "0|race" "race: the program ran"
assert_eq "$(mq race.db "SELECT t.seq > 1, s.nmap, s.mapped, s.maxmapped FROM last_sample s JOIN thread t ON t.id = s.thread WHERE s.nmap > 0")" \
"1,10000,16384,16384
1,10000,16384,16384
1,10000,16384,16384
1,10000,16384,16384" "race: each thread's row exact"
assert_eq "$(mq race.db "SELECT mapped FROM tick ORDER BY time DESC LIMIT 1")" 65536 "race: the ticks' mapped at exit"

# edges: MAP_FIXED inside a reservation trims it; one munmap over three
# mappings takes them all; mremap shrinking in place; MREMAP_FIXED onto
# another mapping replaces it, the bytes staying with the moved one's stack
MP_QUIET=1 profile edges.db "$P" edges > out 2> err; rc=$?
assert_eq "$rc|$(cat out err)" "0|edges" "edges: the program ran"
assert_eq "$(mq edges.db "SELECT (SELECT group_concat(function, '<') FROM (SELECT function FROM stack_frames f
        WHERE f.stack = s.stack AND f.depth BETWEEN 1 AND 2 ORDER BY f.depth)) AS callers, nmap, mapped, maxmapped
    FROM last_sample s WHERE nmap > 0 ORDER BY 1")" \
"map_fixed_over<map_over_a,1,0,1048576
map_fixed_over<map_over_b,1,0,1048576
map_move_dst<edges,1,0,1048576
map_move_src<edges,1,1048576,1048576
map_reserve<edges,1,0,3145728
map_shrink<edges,1,1048576,2097152" "edges: each row exact"
