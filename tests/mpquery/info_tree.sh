#!/bin/bash
# mpquery info's process tree: a line a pid, under its parent, naming its
# role (the executable's basename), the programs it exec'd joined by
# arrows, and how its last program ended, in words; in JSON each process's
# "role" and the "tree" (flat, depth-first). On tests/progs/info_tree.c:
# children that exit(3), die of SIGTERM, die of SIGKILL unseen, and exec
# env, which execs a program whose child calls _exit(0).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

# tree_of ARGS...: the process tree section of mpquery info ARGS
tree_of() { "$MPQ" info "$@" | awk '/^process tree/ { f = 1 } f && /^$/ { exit } f'; }
# no_pids: each line's pid as PID
no_pids() { sed -E 's/^( *)[0-9]+ /\1PID /'; }

profile a.db $B/tests/info_tree 2>err; rc=$?
assert_eq "$rc" 0 "the tree ran"
info=$("$MPQ" info a.db) || fail "info failed"
tree=$(tree_of a.db)
assert_eq "$(printf '%s\n' "$tree" | no_pids)" \
"process tree: 6 processes, 1 exec'd, 1 killed by a signal, 1 without a final snapshot
  PID info_tree: returned from main with status 0
    PID info_tree: exited with status 3
    PID info_tree: killed by SIGTERM
    PID info_tree: still running or killed (no final snapshot)
    PID info_tree → env → info_tree: exited with status 0
      PID info_tree: _exit(0)" "info: the process tree section"
# pids in tree order are those of the database in start order (the
# children are started one at a time; the exec'd pid's child last)
assert_eq "$(printf '%s\n' "$tree" | awk 'NR > 1 { print $1 }' | paste -sd' ')" \
    "$(q a.db "SELECT pid FROM process GROUP BY pid ORDER BY MIN(start_time)" | paste -sd' ')" \
    "info: the tree's pids, in start order"
assert_match "$info" $'\n  ended: exit 3\n' "info: a process's section still says ended: exit 3"
assert_match "$info" $'\n  ended: return 0\n' "info: ... and a return from main, its status"

json=$("$MPQ" info a.db --format json) || fail "info --format json failed"
assert_eq "$(json_get "$json" '[(p["role"], p["ended"], p["depth"]) for p in j["processes"]]')" \
  "[('info_tree', 'return 0', 0), ('info_tree', 'exit 3', 1), ('info_tree', 'signal SIGTERM', 1), ('info_tree', '', 1), ('info_tree', 'exec', 1), ('env', 'exec', 1), ('info_tree', 'exit 0', 1), ('info_tree', '_exit 0', 2)]" \
  "info json: processes in tree order with role and ended"
assert_eq "$(json_get "$json" '[(t["depth"], t["roles"], t["ended"]) for t in j["tree"]]')" \
  "[(0, ['info_tree'], 'return 0'), (1, ['info_tree'], 'exit 3'), (1, ['info_tree'], 'signal SIGTERM'), (1, ['info_tree'], ''), (1, ['info_tree', 'env', 'info_tree'], 'exit 0'), (2, ['info_tree'], '_exit 0')]" \
  "info json: the tree, a pid an entry, depth-first"
assert_eq "$(json_get "$json" 'all(t["ppid"] == j["tree"][0]["pid"] for t in j["tree"][1:5]), j["tree"][5]["ppid"] == j["tree"][4]["pid"]')" \
  "(True, True)" "info json: each entry's ppid is its parent's pid"
assert_eq "$(json_get "$json" '[[p["id"] for p in j["processes"]].index(i) for t in j["tree"] for i in t["process_ids"]]')" \
  "[0, 1, 2, 3, 4, 5, 6, 7]" "info json: process_ids name the processes, in the same order"

# --pid: only that pid's images, as a root
pid=$(json_get "$json" 'j["tree"][4]["pid"]')
assert_eq "$(tree_of a.db --pid "$pid" | no_pids)" \
"process tree: 1 process, 1 exec'd
  PID info_tree → env → info_tree: exited with status 0" "info --pid: one pid, its exec chain"

# without an end recorded: a fixture (no final snapshot), a version-1 file
# (before process.ended)
fixture basic >/dev/null
assert_eq "$(tree_of basic.db)" "process tree: 1 process, 1 without a final snapshot
  100 app: still running or killed (no final snapshot)" "info: a process without a final snapshot"
old_fixture 1
assert_eq "$(tree_of v1.db)" "process tree: 1 process
  100 app: not recorded (a file of format version 1)" "info: a version-1 file records no end"
