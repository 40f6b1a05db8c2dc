# What a fork costs under the recorder, in pages (not in time: the counts
# are the kernel's, the same on every run of this machine).
# tests/progs/fork_bigmap.c keeps 300,000 blocks live, forks, and prints
# its own page faults from the fork on and the child's (which allocates 10
# blocks and exits, writing its snapshot). Without the recorder: the parent
# 6, the child 26.
# - The pointer map is not the child's: its shards are wiped on fork, its
#   tables not inherited, so neither process copies them on write (the
#   parent's unlock after the fork wrote 256 shared pages, the child's
#   reset the same 256 again).
# - The ledger reads the child's memory without pinning it (pinning a page
#   the parent still shares makes the kernel copy it): the child's fault
#   count was 2,824 in full capture, 1,144 in stats mode.
. "$(dirname "$0")/../lib/lib.sh"
for mode in MP_ENABLED=1 MP_ENABLED=0; do
    out=$(env $mode MP_QUIET=1 LD_PRELOAD=$LIB MP_OUT=$T/f.db $B/tests/fork_bigmap 300000) || fail "$mode: the program failed"
    child=$(printf '%s\n' "$out" | sed -n 's/.*the child.s \([0-9]*\)$/\1/p')
    [ -n "$child" ] && [ "$child" -lt 1200 ] || fail "$mode: the child's page faults: [$out], expected < 1200 (880 full, 315 stats on Debian 12)"
    echo "  ok: $mode: the child's page faults: $child < 1200"
    assert_eq "$(q f.db "SELECT count(*) FROM process")|$(q f.db "SELECT t.ncalls FROM process_totals t JOIN process p USING(pid) WHERE p.ppid IN (SELECT pid FROM process)")" \
        "2|10" "$mode: both processes, the child's 10 calls"
    rm -f f.db
done
