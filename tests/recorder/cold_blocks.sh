# MP_COLD=1: per stack, the live bytes on pages not written since the
# previous snapshot (memcold) and for how many snapshots (coldage).
# tests/progs/cold_cache.c keeps a 4 MB buffer it never writes again
# (buffer_fill) beside a cache it rewrites every 50 ms (cache_fill), for
# 1.5 s with a snapshot every 0.2 s. Without MP_COLD the columns are 0.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/cold.sh"
cold_run c.db
cold_check c.db 1 4194304 "MP_COLD=1"
# the snapshots before: the buffer turns cold from the first interval after
# it was written, its age grows by one a snapshot; none in a peak snapshot
# that the scan did not see (a peak repeats the previous snapshot's values)
ages=$("$MPQ" sql c.db "SELECT group_concat(s.coldage, ' ') FROM (SELECT s.coldage FROM sample s
    JOIN snapshot sn ON sn.id = s.snapshot JOIN stack_frames f ON f.stack = s.stack
    WHERE f.function = 'buffer_fill' AND sn.reason != 'peak' ORDER BY sn.seq) s" --format csv | tail -n 1)
echo "# the buffer's coldage, snapshot by snapshot: $ages"
assert_match "$ages" "^0 1 2 3( [0-9]+)*$" "coldage: 0 at the first snapshot, then one more each"
assert_eq "$("$MPQ" sql c.db "SELECT COUNT(*) FROM sample WHERE memcold > memlive" --format csv | tail -n 1)" 0 \
    "memcold never above memlive"
# mpquery leaks --cold: the buffer's stack (cold 3 snapshots and more), not the cache's
assert_match "$("$MPQ" leaks c.db --cold --format csv 2>/dev/null | cut -d, -f1,3,6)" \
"^memcold,memlive,where
4194304,4194304,buffer_fill < keep < main$" "leaks --cold: the untouched buffer's stack alone"
# without MP_COLD: the columns 0, the program's output and status unchanged
MP_INTERVAL=0.2 MP_QUIET=1 profile n.db "$B/tests/cold_cache" >out.txt 2>err.txt
assert_eq "$?|$(cat out.txt)|$(cat err.txt)" "0|done|" "without MP_COLD: exit status, output, stderr"
assert_eq "$(q n.db "SELECT SUM(memcold), SUM(coldage) FROM sample")" "0|0" "without MP_COLD: memcold and coldage 0"
assert_match "$(q n.db "SELECT settings FROM process")" "MP_COLD=0" "the settings row says MP_COLD=0"
assert_match "$(q c.db "SELECT settings FROM process")" "MP_COLD=1" "the settings row says MP_COLD=1"
