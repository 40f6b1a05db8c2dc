# The stack tree written ahead of the exit (issue 31, flush_ahead): once
# 32,768 new stack nodes have gathered, the background thread writes them
# and their symbols in a transaction of their own, so that the exit
# snapshot of a program of many stacks (clang++: 500,000 nodes) writes
# only those made since. tests/progs/stacks_ahead makes 32,768 stacks
# (98,316 nodes with the frames above main and inlined ones) and waits for the file to appear while it
# runs. The profile is the one written at the exit alone (MP_TICK=0: no
# background thread, nothing ahead): the same stacks and counts, every
# leaf a sample's stack, the invariants.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/stacks_ahead
MP_QUIET=1 profile a.db "$P" >a.out || fail "stacks_ahead failed"
assert_eq "$(cat a.out)" "32768 paths, checksum 4411648, written ahead: yes" "the file is written while the program runs"
MP_QUIET=1 MP_TICK=0 profile b.db "$P" 15 0 >b.out || fail "stacks_ahead failed (MP_TICK=0)"
assert_eq "$(cat b.out)" "32768 paths, checksum 4411648, written ahead: no" "MP_TICK=0: no background thread, nothing ahead"

leaves="SELECT count(*) FROM stack WHERE id NOT IN (SELECT parent FROM stack) AND id NOT IN (SELECT stack FROM sample)"
for db in a b; do
    assert_eq "$(q $db.db "SELECT count(*) FROM stack")|$(q $db.db "$leaves")" "98316|0" \
        "$db.db: 98,316 stack nodes, each leaf a sample's stack"
done
"$MPQ" fold a.db | sort >a.fold && "$MPQ" fold b.db | sort >b.fold || fail "mpquery fold failed"
assert_eq "$(wc -l <a.fold)" 32769 "fold: a stack per path, and stdout's buffer"
cmp -s a.fold b.fold || fail "the stacks written ahead fold differently from those written at the exit"
echo "  ok: the same folded stacks and counts as the exit alone writes"
check_profile a.db
