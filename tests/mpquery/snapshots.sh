#!/bin/bash
# Sample selection: latest run by default, --run N|all, --pid, and
# --snapshot last|N|id:N|label:TEXT, where a snapshot stores only changed
# rows (the value at S is the newest row at or before S).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture snapshots >/dev/null
s=snapshots.db
f() { "$MPQ" fold "$s" --by ncalls "$@" | tr '\n' ' '; }

assert_eq "$(f)" "main;fx 7 main;fy 2 " "default: the latest run (2), both processes"
assert_eq "$(f --run 1)" "main;fx 3 main;fy 5 " "--run 1: last snapshot, unchanged row carried from seq 2"
assert_eq "$(f --run all)" "main;fx 10 main;fy 7 " "--run all"
assert_eq "$(f --run latest --pid 21)" "main;fy 2 " "--pid 21"
assert_eq "$(f --run 1 --snapshot 1)" "main;fx 1 " "--snapshot 1 (seq)"
assert_eq "$(f --run 1 --snapshot 2)" "main;fx 3 " "--snapshot 2"
assert_eq "$(f --run 1 --snapshot 3)" "main;fx 3 main;fy 5 " "--snapshot 3: the last one"
assert_eq "$(f --run all --snapshot 3)" "main;fx 10 main;fy 7 " "--run all --snapshot 3: the last of each process, 3 of run 1's, 1 of run 2's"
# N past the last snapshot of every selected process: refused with their range (info lists the same)
assert_eq "$(q $s "SELECT min(s.seq), max(s.seq) FROM snapshot s JOIN process p ON p.id = s.process WHERE p.run = 1")" "1|3" \
  "run 1's process has snapshots 1 to 3 (the database)"
assert_eq "$("$MPQ" info $s --run 1 --all | sed -n '/^  snapshots (/,$p' | grep -cE '^ +\*?[123] ')" 3 "info lists its 3 snapshots"
for cmd in top leaks tree fold flame info rss hist report "export --format folded" "show" "live --once"; do
    args="$s"; [ "$cmd" = show ] && args="$s 1"
    expect_fail 2 "^mpquery: [^ ]*: --snapshot 4: the selected process has snapshots 1 to 3 \\(see mpquery info\\)$" \
      "$MPQ" $cmd $args --run 1 --snapshot 4
done
expect_fail 2 "^mpquery: snapshots.db: --snapshot 99: the selected process has snapshots 1 to 3 \(see mpquery info\)$" \
  "$MPQ" diff $s $s --run 1 --b-snapshot 99
expect_fail 2 "^mpquery: snapshots.db: --snapshot 2: the selected processes have only snapshot 1 \(see mpquery info\)$" \
  "$MPQ" top $s --snapshot 2
assert_eq "$(f --run 1 --snapshot label:mid)" "main;fx 3 " "--snapshot label:mid"
assert_eq "$(f --run all --snapshot id:1)" "main;fx 1 " "--snapshot id:1 (that process only)"
assert_eq "$(f --run all --snapshot 1)" "main;fx 8 main;fy 2 " "--run all --snapshot 1: seq 1 of every process"
expect_fail 2 '^mpquery: snapshots.db: no snapshot with id 1 in the selected processes$' "$MPQ" top $s --snapshot id:1
expect_fail 2 '^mpquery: snapshots.db: no run 7 in this profile \(see mpquery info\)$' "$MPQ" top $s --run 7
expect_fail 2 "^mpquery: snapshots.db: no snapshot labelled 'nope' in the selected processes$" "$MPQ" fold $s --snapshot label:nope
expect_fail 2 "^mpquery: top: bad value '0' for --snapshot \(expected .*\) \(see mpquery top --help\)$" "$MPQ" top $s --snapshot 0
expect_fail 2 "^mpquery: top: bad value 'x' for --run \(expected a run id, latest or all\)" "$MPQ" top $s --run x

# info: runs listed, the process tree, per-process totals
info=$("$MPQ" info $s)
assert_match "$info" '\*? run 2 ' "info lists the runs"
assert_match "$info" $'\n''make -j2'$'\n'"|  make -j2" "info shows the parent"
assert_eq "$(printf '%s\n' "$info" | grep -c '    cc -c x.c$')" 1 "info indents the child under its parent"
json=$("$MPQ" info $s --run 1 --snapshot 2 --format json)
assert_eq "$(json_get "$json" 'j["totals"]["ncalls"], j["processes"][0]["snapshot"], len(j["runs"]), j["run"]')" \
  "(3, 2, 2, 1)" "info --snapshot 2: totals as of that snapshot"
json=$("$MPQ" info $s --format json)
assert_eq "$(json_get "$json" '[(p["pid"], p["depth"], p["totals"]["memtot"]) for p in j["processes"]], j["totals"]["memtot"], j["totals"]["maxlive"]')" \
  "([(20, 0, 700), (21, 1, 20)], 720, 720)" "info --format json: processes with their totals, summed"
