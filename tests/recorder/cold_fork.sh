# MP_COLD=1 in a fork child: its own blocks only (the parent's 4 MB buffer,
# inherited, is not the child's block), its own pages' history (the kernel's
# write tracking is per process). tests/progs/cold_cache.c fork: the parent
# keeps a 4 MB buffer and a cache, the child a 2 MB buffer and a cache.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/cold.sh"
cold_run c.db fork
assert_eq "$(q c.db "SELECT COUNT(*) FROM process")" 2 "two processes"
child=$(q c.db "SELECT c.id FROM process c JOIN process p ON c.ppid = p.pid")
parent=$(q c.db "SELECT id FROM process WHERE id != $child")
cold_check c.db "s.process = $parent" 4194304 "the parent"
cold_check c.db "s.process = $child" 2097152 "the child"
