# Every entry point of the malloc family, from named functions: exact
# counters per function and in the totals; output and exit status unchanged;
# the database is sound and every frame has a name.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/alloc_functions

$P >plain.out 2>plain.err; plain_rc=$?
profile a.db $P >prof.out 2>prof.err; prof_rc=$?
assert_eq "$prof_rc" "$plain_rc" "exit status unchanged"
assert_eq "$prof_rc" 7 "exit status"
assert_eq "$(cat prof.out)" "$(cat plain.out)" "stdout unchanged"
assert_match "$(cat prof.err)" "^mallocprof: info: wrote $T/a.db: 8 stacks" "one stderr line with path and stacks"
assert_eq "$(wc -l < prof.err)" 1 "exactly one stderr line"

assert_eq "$(by_function a.db 'do_*')" "do_aligned_alloc|40|5120|40|0
do_calloc|50|10000|50|0
do_leak|7|7000|0|7000
do_malloc|1000|100000|1000|0
do_memalign|10|5120|10|0
do_posix_memalign|30|7680|30|0
do_realloc|20|21000|20|0
do_valloc|5|500|5|0" "counters per function"
assert_eq "$(q a.db 'SELECT ncalls, memtot, nfree, memlive, maxlive, ncalls_nostack, nfree_unknown FROM process_totals')" \
    "1162|156420|1155|7000|7000|0|0" "process totals"
# peak: 7000 leaked + the largest transient block (realloc to 2000 while 1900 is... moved)
assert_eq "$(q a.db 'SELECT maxlive FROM stack_totals WHERE leaf = "do_realloc"')" 2000 "maxlive of the realloc stack"
assert_eq "$(q a.db 'PRAGMA integrity_check')" ok "integrity_check"
assert_eq "$(q a.db 'PRAGMA user_version')" 5 "schema version"
assert_eq "$(q a.db 'SELECT count(*) FROM stack_frames WHERE function = "" AND module NOT LIKE "[%"')" 0 "every frame has a function name"
assert_eq "$(q a.db 'SELECT count(*) FROM stack_frames WHERE stack IN (SELECT stack FROM sample) AND function = "main" AND file LIKE "%alloc_functions.c" AND line > 0')" 8 "main's frames have file:line"
assert_eq "$(q a.db 'SELECT line FROM stack_frames WHERE function = "do_leak" AND depth = 0')" \
    "$(grep -n 'leaked\[i\] = malloc' $ROOT/tests/progs/alloc_functions.c | cut -d: -f1)" "line of the allocation"
assert_eq "$(q a.db 'SELECT count(*) FROM process')" 1 "one process row"
