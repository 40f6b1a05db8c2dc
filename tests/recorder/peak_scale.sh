# The stacks at the peak at scale (issue 24): tests/progs/peak_scale.c
# keeps 10 blocks from each of 300 stacks per thread, frees them (half by
# another thread), then churns on 300 stacks first seen after the peak.
# The peak (one 64 MiB block) must show the kept stacks as they were and
# none of the later ones: before the fix, the later stacks' slots, in
# chunks of slots that had no saved copy at the peak, read with their
# values at exit (1,420 calls with 1 thread, 5,640 with 4).
# Full capture and sampled, 1 thread (main alone) and 4 workers.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/peak_scale

for threads in 0 4; do
    w=$((threads ? threads : 1))
    for mode in full sampled; do
        db=$mode$threads.db
        what="$mode, $w thread(s)$([ $threads = 0 ] && echo ' (main alone)')"
        if [ $mode = full ]; then
            MP_QUIET=1 profile $db $P $threads || fail "the program failed ($what)"
        else
            MP_QUIET=1 MP_SAMPLE=4096 profile $db $P $threads || fail "the program failed ($what)"
        fi
        check_profile $db
        assert_eq "$(q $db "SELECT group_concat(reason || ':' || label, ' ') FROM (SELECT * FROM snapshot ORDER BY seq)")" \
            "peak: api:top peak: exit:" "$what: the snapshots"
        # the peak against the API snapshot just before it: the same rows,
        # and the big block (exact even sampled: a 64 MiB block is sampled
        # with weight 1)
        for by in ncalls memtot nfree memlive; do
            "$MPQ" fold $db --snapshot peak --by $by | grep -v ';big_block ' >peak.folded
            "$MPQ" fold $db --snapshot label:top --by $by >top.folded
            cmp -s peak.folded top.folded || { diff top.folded peak.folded | head; fail "$what: fold --by $by differs"; }
            case $by in ncalls|memtot) n=$((300 + 1 + (threads ? 1 : 0))) ;; nfree) n=1 ;; memlive) n=$((300 + (threads ? 1 : 0))) ;; esac
            if [ $mode = sampled ]; then        # the stacks sampled
                n=$(wc -l <top.folded)
                [ $by = nfree ] || [ "$(grep -c keep_end top.folded)" -ge 100 ] || fail "$what: few kept stacks sampled"
            fi
            assert_eq "$(wc -l <peak.folded)" $n "$what: fold --by $by at the peak is the 'top' snapshot's (lines)"
        done
        assert_eq "$("$MPQ" fold $db --snapshot peak --by ncalls | grep ';big_block ')" "main;main_part;big_block 1" \
            "$what: the big block at the peak"
        assert_eq "$("$MPQ" fold $db --snapshot peak --by ncalls | grep -c churn_end)" 0 \
            "$what: no stack first seen after the peak appears at it (fold)"
        assert_eq "$("$MPQ" top $db --snapshot peak --functions --format csv | grep -c churn_end)" 0 \
            "$what: top --functions at the peak"
        "$MPQ" flame $db --snapshot peak --by ncalls -o peak.svg || fail "flame --snapshot peak failed"
        assert_eq "$(grep -c churn_end peak.svg)" 0 "$what: flame --snapshot peak"
        assert_match "$(grep -c keep_end peak.svg)" "^[1-9]" "$what: the flame graph at the peak shows the kept stacks"
        [ $mode = full ] || continue
        # exact figures: per worker, 300 stacks of 10 blocks of 100 + s bytes
        kept_b=$((w * (3000 * 100 + 10 * 299 * 300 / 2)))
        dtv=$((threads ? 4 * 352 : 0)); ndtv=$((threads ? 4 : 0))     # glibc's thread vectors (modes_cheap.sh)
        assert_eq "$(q $db "SELECT ncalls, memtot, nfree, memlive FROM totals t JOIN peak_snapshot ps ON ps.id = t.snapshot
                            WHERE t.thread = 0")" \
            "$((w * 3100 + 1 + ndtv))|$((kept_b + w * 6400 + 67108864 + dtv))|$((w * 100))|$((kept_b + 67108864 + dtv))" \
            "$what: the totals at the peak"
        expect="self.ncalls,self.memtot,self.nfree,self.memlive,function
1,67108864,0,67108864,big_block
$((w * 3000)),$kept_b,0,$kept_b,keep_end
$((w * 100)),$((w * 6400)),$((w * 100)),0,handed_out"
        [ $threads = 0 ] || expect="$expect
4,1408,0,1408,allocate_dtv"
        assert_eq "$("$MPQ" top $db --snapshot peak --functions --format csv | cut -d, -f1-3,5,15)" "$expect" \
            "$what: top --snapshot peak --functions"
        assert_eq "$(q $db "SELECT count(*), SUM(ncalls) FROM peak_sample s JOIN stack_path p ON p.stack = s.stack WHERE p.leaf = 'keep_end'")" \
            "$((w * 300))|$((w * 3000))" "$what: 300 kept stacks per thread at the peak (view peak_sample)"
        assert_eq "$("$MPQ" leaks $db --snapshot peak --no-default-suppressions --format json | python3 -c 'import json,sys; s = json.load(sys.stdin)["summary"]; print(s["blocks"], s["bytes"], s["stacks"])')" \
            "$((w * 3000 + 1 + ndtv)) $((kept_b + 67108864 + dtv)) $((300 + 1 + (threads ? 1 : 0)))" \
            "$what: leaks --snapshot peak"
        assert_eq "$(q $db "SELECT SUM(ncalls), SUM(nfree) FROM last_sample s JOIN stack_path p ON p.stack = s.stack WHERE p.leaf = 'churn_end'")" \
            "$((w * 1500))|$((w * 1500))" "$what: the later stacks at exit"
    done
done
