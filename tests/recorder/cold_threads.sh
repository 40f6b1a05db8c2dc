# MP_COLD=1 with two threads, each keeping its own buffer and cache
# (tests/progs/cold_cache.c threads): each thread's buffer row all cold,
# each thread's cache row not.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/cold.sh"
cold_run c.db threads
threads=$(q c.db "SELECT DISTINCT s.thread FROM last_sample s JOIN stack_frames f ON f.stack = s.stack
                  WHERE f.function = 'buffer_fill' ORDER BY 1")
assert_eq "$(echo "$threads" | wc -l)" 2 "the buffers of two threads"
for t in $threads; do cold_check c.db "s.thread = $t" 4194304 "thread $t"; done
