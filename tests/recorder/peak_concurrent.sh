# Peaks written while the threads go on (the clean-clone CI of 2026-11-25
# failed on it: clickhouse_push's interval profile had a peak whose rows
# summed to 62 calls more than its totals). An interval, signal or API
# snapshot writes the latest peak too, while the program runs:
#  - each record was read at the epoch of the moment, not the one the
#    snapshot started with (a capture during the read mixed two peaks);
#  - a record not yet saved was read current while its owner saved and
#    changed it (no check after the read);
#  - the second thread_touch of an allocation re-read the epoch: a capture
#    by another thread between the slot's update and the thread's counted
#    the call in the slot's row and not in the thread's totals at the peak;
#  - another thread's operation found by the capture in its middle was
#    read half done.
# tests/progs/peak_race.c: workers climbing through capture points on 300
# stacks while MP_INTERVAL=0.002 writes peaks; every peak must add up
# exactly (tests/lib/invariants.py), in full capture and sampled, 1 and 4
# threads, two runs each (the old recorder failed every one).
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/peak_race

for threads in 0 4; do
    w=$((threads ? threads : 1))
    for mode in full sampled; do
        for run in 1 2; do
            db=$mode$threads-$run.db
            what="$mode, $w thread(s), run $run"
            if [ $mode = full ]; then
                MP_QUIET=1 MP_INTERVAL=0.002 profile $db $P $threads || fail "the program failed ($what)"
            else
                MP_QUIET=1 MP_INTERVAL=0.002 MP_SAMPLE=4096 profile $db $P $threads || fail "the program failed ($what)"
            fi
            check_profile $db
            # peaks written by interval flushes, while the workers ran
            early=$(q $db "SELECT count(*) FROM snapshot WHERE reason = 'peak'
                           AND seq < (SELECT max(seq) FROM snapshot WHERE reason = 'interval')")
            [ "$early" -ge 1 ] || fail "$what: no peak written during the run (the test did not test)"
            [ $run = 1 ] && echo "# $what: $(q $db "SELECT count(*) FROM snapshot WHERE reason = 'peak'") peaks, $early while running"
            # exact at exit: every worker's 199,998 blocks from the 300 stacks, all freed
            if [ $mode = full ]; then
                assert_eq "$("$MPQ" fold $db --by ncalls | grep ';deep' | awk '{n += $NF} END {print n}')" $((w * 199998)) \
                    "$what: the workers' blocks at exit"
                assert_eq "$(q $db "SELECT count(DISTINCT stack) FROM last_sample s JOIN stack_frames f USING (stack)
                                    WHERE f.function GLOB 'leaf[0-4]' AND s.ncalls > 0")" 300 "$what: 300 stacks"
                assert_eq "$("$MPQ" fold $db --by memlive | grep ';deep' | awk '{n += $NF} END {print n + 0}')" 0 \
                    "$what: none of them live at exit"
            fi
        done
    done
done
echo "ok"
