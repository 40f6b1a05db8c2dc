# The stack tree as runs (format 6, issue 44 item 4): tests/progs/deep_paths's
# 5 stacks (1, 10, 50, 100 and 150 frames of recursion; MP_DEPTH=256 keeps
# them whole) are 164 nodes on 5 paths sharing their outer frames: the
# recorder writes each path's new nodes as one stack_run row, the runs tile
# the ids 1..164 (no gap, no node twice); the view `stack` gives back each
# node, stack_frames (a run at a time) the same frames as a walk of the
# view node by node, and mpquery and merge read and write the same tree.
. "$(dirname "$0")/../lib/lib.sh"
MP_QUIET=1 MP_DEPTH=256 profile d.db $B/tests/deep_paths || fail "the program failed"

assert_eq "$(q d.db 'SELECT count(*), min(id), max(id), count(DISTINCT id) FROM stack')" "164|1|164|164" \
    "the view stack: nodes 1 to 164, each once"
assert_eq "$(q d.db 'SELECT count(*), sum(json_array_length(frames)) FROM stack_run')" "5|164" \
    "5 runs of 164 nodes in all: one a stack"
assert_eq "$(q d.db 'SELECT count(*) FROM stack_run r WHERE r.id != 1 AND r.id != (SELECT p.id + json_array_length(p.frames)
                     FROM stack_run p WHERE p.id < r.id ORDER BY p.id DESC LIMIT 1)')" 0 \
    "each run starts where the one before ended"
assert_eq "$(q d.db 'SELECT count(*) FROM stack WHERE id > 1 AND parent != id - 1')" 4 \
    "4 nodes hang below a node of an earlier run (the paths' branches), the others below the node before"

# stack_frames, a run at a time, against a walk of the view node by node
walk="WITH RECURSIVE w(stack, depth, node) AS (
          SELECT DISTINCT stack, 0, stack FROM sample
          UNION ALL SELECT w.stack, w.depth + 1, s.parent FROM w JOIN stack s ON s.id = w.node WHERE s.parent != 0)
      SELECT w.stack, w.depth, s.frame FROM w JOIN stack s ON s.id = w.node ORDER BY 1, 2"
by_runs=$(q d.db 'SELECT stack, depth, frame FROM stack_frames ORDER BY 1, 2')
assert_eq "$(wc -l <<<"$by_runs")" 341 "stack_frames: 7 + 16 + 56 + 106 + 156 rows"
assert_eq "$by_runs" "$(q d.db "$walk")" "stack_frames: the frames of a node-by-node walk, at the same depths"
assert_eq "$(q d.db 'SELECT group_concat(n) FROM (SELECT count(*) AS n FROM stack_frames GROUP BY stack ORDER BY stack)')" \
    "7,16,56,106,156" "each stack's depth"

# mpquery's loader reads the same tree; merge writes it as runs again
assert_match "$("$MPQ" info d.db)" "the stack tree: 164 nodes" "mpquery info: 164 nodes"
"$MPQ" merge -q -o m.db d.db || fail "merge failed"
assert_eq "$(q m.db 'SELECT count(*), sum(json_array_length(frames)) FROM stack_run')" "5|164" "merge: 5 runs of 164 nodes"
assert_eq "$("$MPQ" fold m.db)" "$("$MPQ" fold d.db)" "merge: the same stacks"
