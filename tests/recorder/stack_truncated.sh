# Stacks deeper than MP_DEPTH are said (issue 24): tests/progs/deep_paths
# allocates 1000 blocks at each of 5 depths (1, 10, 50, 100, 150 frames
# of recursion); with MP_DEPTH=64 the two deepest are cut: their root is
# the [truncated] frame in stacks and folds, and every listing says under
# its table (text) or on stderr (csv, json, fold, flame) how many stacks
# and calls, why the outer functions' inclusive figures are low, and what
# to record with. Before, `main` showed 3000 calls inclusive of 5000 with
# no word why.
. "$(dirname "$0")/../lib/lib.sh"
MP_QUIET=1 MP_DEPTH=64 profile d.db $B/tests/deep_paths || fail "the program failed"
NOTE="2 stacks (2000 calls) were deeper than MP_DEPTH=64: inclusive figures of outer functions are low; record with MP_DEPTH=256"

assert_eq "$("$MPQ" fold d.db | sed 's/;.*\( [0-9]*\)$/\1/' | sort | uniq -c | sed 's/^ *//')" "2 [truncated] 24000
3 main 24000" "fold: the cut stacks start at [truncated]"
assert_eq "$("$MPQ" fold d.db 2>&1 >/dev/null)" "$NOTE" "fold: the note on stderr"
assert_eq "$("$MPQ" top d.db --no-pager | tail -n 1)" "$NOTE" "top: the note under the table"
assert_eq "$("$MPQ" top d.db --functions --inclusive --no-pager --format csv 2>&1 >/dev/null)" "$NOTE" "top --format csv: on stderr"
assert_eq "$("$MPQ" top d.db --functions --inclusive --format csv 2>/dev/null | grep ',main$' | cut -d, -f8)" 3000 \
    "main's inclusive calls: the 3000 of the stacks not cut"
assert_eq "$("$MPQ" top d.db --format json 2>&1 >/dev/null)" "$NOTE" "top --format json: on stderr"
assert_eq "$("$MPQ" top d.db --format json --exclude nothing_matches 2>&1 >/dev/null)" "$NOTE" "top --format json with filters: on stderr"
assert_eq "$("$MPQ" diff d.db d.db --no-pager | tail -n 2)" "${NOTE/ were/ in a were}
${NOTE/ were/ in b were}" "diff: one note per side"
"$MPQ" flame d.db -o d.svg -q 2>err.txt || fail "flame failed"       # -q: no "wrote" line
assert_eq "$(cat err.txt)" "$NOTE" "flame: the note on stderr"
assert_match "$(cat d.svg)" "\[truncated\]" "flame: the [truncated] frame drawn"

# leaks: only the leaking stacks count
MP_QUIET=1 MP_DEPTH=8 profile l.db $B/tests/peak_scale || fail "peak_scale failed"
assert_eq "$("$MPQ" leaks l.db | tail -n 1)" "0 leaked blocks (0 B) in 0 stacks" \
    "leaks: no leaking stack, no note"
assert_match "$("$MPQ" leaks l.db --snapshot label:top | tail -n 1)" \
    "^75 stacks \(3000 calls\) were deeper than MP_DEPTH=8: .*record with MP_DEPTH=32$" "leaks at 'top': the 300 kept paths, cut to 75 stacks of 8 frames"

# nothing cut, nothing said
MP_QUIET=1 MP_DEPTH=512 profile full.db $B/tests/deep_paths || fail "the program failed"
assert_eq "$("$MPQ" top full.db --no-pager 2>&1 | grep -c deeper)" 0 "MP_DEPTH=512: nothing cut, nothing said"
assert_eq "$("$MPQ" fold full.db | grep -c truncated)" 0 "MP_DEPTH=512: no [truncated] frame"
