# The program's own mappings across threads, processes and signals
# (prof/snapshot/maps.c), tests/progs/mmap_kinds.c: each thread's mappings are its
# own rows; a fork child has its own process rows and forgets the
# parent's mappings (as it does the parent's heap blocks: its munmap of
# one is an unknown range, ignored); a signal handler's mmap is recorded
# with the handler's stack; exec starts anew. Snapshots store only the
# mapping rows that changed since the process's previous one, peak
# snapshots none; the ticks' mapped follows the mappings.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/mmap_kinds
MB=1048576
mq() { $MPQ sql "$1" "$2" --format csv | tail -n +2; }
# each mapping row: process (1 = the first started), thread seq, the three callers
# above the kind's frame, nmap, mapped, maxmapped
ROWS="SELECT (SELECT count(*) FROM process q, process p WHERE p.id = s.process AND q.start_time <= p.start_time) AS proc, t.seq,
             (SELECT group_concat(function, '<') FROM (SELECT function FROM stack_frames f
                  WHERE f.stack = s.stack AND f.depth BETWEEN 1 AND 3 ORDER BY f.depth)) AS callers,
             s.nmap, s.mapped, s.maxmapped
      FROM last_sample s JOIN thread t ON t.id = s.thread WHERE s.nmap > 0 ORDER BY 1, 2"

run() {     # run DB MODE: the program's output and status as without the profiler
    local db=$1 mode=$2
    "$P" $mode > plain.out; local plain_rc=$?
    MP_QUIET=1 profile $db "$P" $mode > prof.out 2> err; local rc=$?
    assert_eq "$rc|$(cat prof.out err)" "$plain_rc|$(cat plain.out)" "$mode: output and status unchanged"
}

run t.db threads
assert_eq "$(mq t.db "$ROWS")" "1,1,map_in_thread<threads<main,1,$MB,$MB
1,2,map_in_thread<thread_main<start_thread,1,$((2 * MB)),$((2 * MB))
1,3,map_in_thread<thread_main<start_thread,1,$((4 * MB)),$((4 * MB))" "threads: each thread's own row"

run f.db fork
assert_eq "$(mq f.db "$ROWS")" "1,1,map_in_thread<map_before_fork<forking,1,$MB,$MB
2,1,map_in_thread<map_in_child<forking,1,$((3 * MB)),$((3 * MB))" \
    "fork: the child's own rows; its munmap of the parent's mapping leaves the parent's row alone"
assert_eq "$(mq f.db "SELECT (SELECT count(*) FROM process q, process p WHERE p.id = t.process AND q.start_time <= p.start_time), max(t.mapped) FROM tick t GROUP BY t.process ORDER BY 1")" \
    "1,$MB
2,$((3 * MB))" "fork: each process's ticks count its own mappings"

run s.db signal
assert_eq "$(mq s.db "$ROWS" | cut -d, -f1-2,4-)" "1,1,1,$MB,$MB" "signal: the handler's mapping"
assert_eq "$(mq s.db "SELECT count(*) FROM last_sample s JOIN stack_frames f ON f.stack = s.stack WHERE s.nmap > 0 AND f.function = 'map_in_handler'")" 1 \
    "signal: under the handler's frame"

MP_QUIET=1 profile e.db "$P" exec > out 2> err; rc=$?
assert_eq "$rc|$(cat out err)" "0|signal" "exec: the program ran"
assert_eq "$(mq e.db "$ROWS" | cut -d, -f1-2,4-)" "1,1,1,$MB,$MB
2,1,1,$MB,$MB" "exec: each image its own mapping"
assert_eq "$(mq e.db "SELECT count(*) FROM last_sample s JOIN stack_frames f ON f.stack = s.stack WHERE s.nmap > 0 AND f.function IN ('map_before_exec', 'map_in_handler')")" 2 \
    "exec: the mapping before exec, the new image's handler's"

# interval snapshots: a row is written when its values change, never at a peak
MP_QUIET=1 MP_INTERVAL=0.05 profile i.db "$P" steps > out 2> err || fail "steps: the program failed"
assert_eq "$(mq i.db "SELECT count(*) FROM sample sa JOIN snapshot sn ON sn.id = sa.snapshot WHERE sn.reason = 'peak' AND sa.nmap + sa.mapped + sa.maxmapped + sa.rss > 0")" 0 \
    "steps: no mapping row in a peak snapshot"
$PY3 - i.db <<'PY' || fail "steps: a mapping row repeats its previous values"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("""SELECT sa.stack, sa.thread, sa.nmap, sa.mapped, sa.maxmapped, sa.rss FROM sample sa
    JOIN snapshot sn ON sn.id = sa.snapshot WHERE sn.reason != 'peak' AND sa.nmap > 0 ORDER BY sn.seq""").fetchall()
prev = {}
for r in rows:
    assert prev.get(r[:2]) != r[2:], r
    prev[r[:2]] = r[2:]
print("  ok: %d mapping rows, none repeating its previous values" % len(rows))
PY
assert_eq "$(mq i.db "$ROWS" | cut -d, -f3-)" "map_in_thread<map_step_one<steps,1,0,$MB
map_in_thread<map_step_two<steps,1,$((2 * MB)),$((2 * MB))" "steps: the latest values"
assert_eq "$(mq i.db "SELECT s.rss FROM last_sample s JOIN stack_frames f ON f.stack = s.stack WHERE s.nmap > 0 AND f.function = 'map_step_two'")" \
    $((2 * MB)) "steps: the touched mapping's rss"
# (the first point may come before or after the first mapping: the
# background thread starts as the program runs)
assert_eq "$(mq i.db "SELECT mapped FROM tick ORDER BY time" | uniq | paste -sd ' ' | sed 's/^0 //')" "$MB $((3 * MB)) $((2 * MB))" \
    "steps: the ticks' mapped: 1 MB, 3 MB, 2 MB"
