# MP_ENABLED=0 plus mp_activate/mp_deactivate records exactly the region; the
# API snapshot is labelled; without the preload the program runs unchanged.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/api_region
assert_eq "$($P 2>&1)" "active=0 snapshot=-1" "do-nothing API library without the preload"
MP_ENABLED=0 profile a.db $P 2>err
assert_match "$(cat err)" "active=1 snapshot=0" "API active under the preload"
assert_eq "$(by_function a.db '*_region')" "in_region|200|4000|200|0" "only the region has stacks"
assert_eq "$(q a.db 'SELECT ncalls, memtot, ncalls_nostack, memtot_nostack FROM process_totals')" "600|14000|400|10000" "totals exact"
assert_eq "$(q a.db "SELECT seq, reason, label FROM snapshot ORDER BY seq")" "1|peak|
2|api|region
3|exit|" "snapshots: api (labelled, after the peak's) then exit"
