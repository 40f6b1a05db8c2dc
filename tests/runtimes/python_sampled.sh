#!/bin/bash
# Sampling counts pymalloc's blocks (issue 40, prof/entry/pymalloc.c): Debian's
# python3.11 keeps 300,000 bytes objects of pymalloc's 80-byte class
# (tests/progs/runtimes/py_sampled.py) under full capture and under
# MP_SAMPLE=16384. The sampled run's exact totals (calls, bytes, frees) are
# full capture's exactly (the two runs' environments hold the same strings:
# MP_SAMPLE and PYSAMPLED_PAD swap "0" and "16384"); its peak is near full capture's; the
# sampled stacks of keep_objects estimate its calls and bytes within the
# bound stated below; info and top say which figures are estimates.
source "$(dirname "$0")/../lib/runtime.sh"
need python3 python3 /usr/bin/python3
unset PYTHONMALLOC
P=$PROGS/py_sampled.py
N=300000

run_native native /usr/bin/python3 -I "$P" $N
assert_eq "$(cat native.out)" "$N $((N * 47))" "native: $N objects of 47 bytes"
run_profiled full "$T/full.db" MP_SAMPLE=0 PYSAMPLED_PAD=16384 /usr/bin/python3 -I "$P" $N
same_as_native native full "$T/full.db" 1
run_profiled sampled "$T/samp.db" MP_SAMPLE=16384 PYSAMPLED_PAD=0 /usr/bin/python3 -I "$P" $N
same_as_native native sampled "$T/samp.db" 1
assert_match "$(q samp.db "SELECT settings FROM process")" ' MP_SAMPLE=16384 ' "the sampled run sampled"
assert_match "$(q full.db "SELECT settings FROM process")" ' MP_SAMPLE=0 ' "the full run did not"

# full capture: the objects exactly, each in pymalloc's 80-byte blocks
assert_eq "$(q full.db "SELECT SUM(ncalls), SUM(memtot) FROM stack_totals
                        WHERE path LIKE '%;keep_objects;%' AND memtot = 80 * ncalls")" "$N|$((N * 80))" \
    "full: keep_objects' $N blocks of 80 bytes"

# exact totals: the same in both modes (nothing in them is estimated)
totals="SELECT ncalls, memtot, nfree FROM process_totals"
IFS='|' read -r tc tb tf <<<"$(q full.db "$totals")"
[ "$tc" -gt "$N" ] || fail "full: $tc calls, fewer than the $N objects"
assert_eq "$(q samp.db "$totals")" "$tc|$tb|$tf" "sampled: exact calls, bytes and frees as full capture's"
assert_eq "$(q samp.db "SELECT SUM(ncalls - ncalls_nostack) > 0 FROM process_totals")" 1 "sampled: some blocks sampled"

# the peak: full's in requested bytes, sampled's in the allocator's (the
# objects' 80 bytes are both; Python's other blocks round up to 16 bytes)
fm=$(q full.db "SELECT maxlive FROM process_totals")
sm=$(q samp.db "SELECT maxlive FROM process_totals")
[ "$fm" -gt $((N * 80)) ] || fail "full: peak $fm bytes, less than the objects' $((N * 80))"
[ "$sm" -ge "$fm" ] && [ "$sm" -le $((fm * 11 / 10)) ] || fail "sampled: peak $sm bytes, full capture's $fm (expected 1.0x to 1.1x)"
echo "  ok: peak: sampled $sm bytes, full capture $fm (1.0x to 1.1x)"

# live bytes at exit: the same blocks in both runs, each counted at its
# free as at its allocation (its pool's class, or malloc's size), so the
# allocator's bytes are full capture's requested ones plus at most 32 a block
# (+ 64 KiB for mapped blocks' pages); pymalloc's blocks left out of either
# side would leave megabytes
IFS='|' read -r fl nl <<<"$(q full.db "SELECT memlive, ncalls - nfree FROM process_totals")"
sl=$(q samp.db "SELECT memlive FROM process_totals")
[ "$sl" -ge "$fl" ] && [ "$sl" -le $((fl + 32 * nl + 65536)) ] ||
    fail "sampled: $sl bytes live at exit, full capture $fl requested in $nl blocks"
echo "  ok: live at exit: sampled $sl bytes, full capture $fl in $nl blocks"

# keep_objects' sampled estimates: its inclusive calls and bytes (the 300,000
# objects and the list's reallocations) against full capture's exact ones.
# An 80-byte block is sampled with p = 1 - exp(-80/16384) = 0.00487: about
# 1,460 samples, a relative standard deviation of 1/sqrt(1460) = 2.6 %; the
# bound, 15 %, is more than 5 of them.
incl() {
    "$MPQ" top "$1" --functions --inclusive --format csv -n 0 |
        awk -F, -v f="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                           $NF == f { print $c["inclusive.ncalls"] "|" $c["inclusive.memtot"] }'
}
IFS='|' read -r fn fb <<<"$(incl full.db keep_objects)"
IFS='|' read -r sn sb <<<"$(incl samp.db keep_objects)"
[ "${fn:-0}" -ge "$N" ] || fail "full: keep_objects made ${fn:-no} calls, expected $N or more"
within() {      # WHAT ESTIMATE EXACT: |ESTIMATE - EXACT| <= 15 % of EXACT
    local d=$(($2 - $3))
    [ "${d#-}" -le $(($3 * 15 / 100)) ] || fail "$1: estimated $2, exact $3 (more than 15 % off)"
    echo "  ok: $1: estimated $2, exact $3 ($(echo "scale=1; 100 * $d / $3" | bc) %)"
}
within "keep_objects' calls" "${sn:-0}" "$fn"
within "keep_objects' bytes" "${sb:-0}" "$fb"

# the sum of the sampled stacks: an estimate of the exact totals, as near
IFS='|' read -r en eb <<<"$(q samp.db "SELECT SUM(ncalls), SUM(memtot) FROM stack_totals")"
within "all stacks' calls" "$en" "$tc"
within "all stacks' bytes" "$eb" "$tb"

# top --functions: each stack counted once per function, so no function's
# inclusive calls pass the total row's
"$MPQ" top samp.db --functions --inclusive --format csv -n 0 >f.csv
max=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
               $c["inclusive.ncalls"] > m { m = $c["inclusive.ncalls"] } END { print m }' f.csv)
[ "$max" -le "$en" ] || fail "top --functions: a function's inclusive calls $max pass the stacks' sum $en"
echo "  ok: top --functions: the largest inclusive calls $max, not above the stacks' sum $en"

# the labels: which figures are exact, which estimated
"$MPQ" info samp.db >info.txt
assert_match "$(cat info.txt)" '^totals: exact \(MP_SAMPLE: the stacks.? counters are estimates' "info: the totals exact, the stacks' estimates"
assert_match "$(grep '^  ncalls ' info.txt)" "^  ncalls  $tc allocations \([0-9]+ not sampled\)" "info: the calls not sampled"
"$MPQ" top samp.db -n 1 --by ncalls >top.txt
assert_match "$(sed -n 2p top.txt)" "^ *$en +100\.0 +\(estimated total, from samples: [0-9]+ stacks in [0-9]+ rows; exact totals: mpquery info\)$" \
    "top: the total row an estimate, the stacks' sum"
"$MPQ" top samp.db --functions -n 1 --by ncalls >topf.txt
assert_match "$(sed -n 2p topf.txt)" "^ *$en +100\.0 +$en +100\.0 +\(estimated total, from samples: [0-9]+ functions; exact totals: mpquery info\)$" \
    "top --functions: the total row an estimate"
"$MPQ" info full.db >finfo.txt
assert_match "$(cat finfo.txt)" $'\ntotals:\n' "info, full capture: totals as before"
assert_match "$(sed -n 2p <("$MPQ" top full.db -n 1))" '\(total: [0-9]+ stacks in [0-9]+ rows\)$' "top, full capture: its total row as before"

# PYTHONMALLOC chosen at start-up replaces the wrappers: malloc's
# allocator is counted as malloc (no warning); pymalloc's, sampled, is not
# counted, and one warning says so
run_profiled pm "$T/pm.db" MP_SAMPLE=16384 PYTHONMALLOC=malloc /usr/bin/python3 "$P" 1000
assert_eq "$(cat pm.rc)|$(grep -c 'mallocprof: warning' pm.err)" "0|0" "PYTHONMALLOC=malloc: no warning"
run_profiled pp "$T/pp.db" MP_SAMPLE=16384 PYTHONMALLOC=pymalloc /usr/bin/python3 "$P" 1000
assert_eq "$(cat pp.rc)|$(grep 'mallocprof: warning' pp.err)" \
    "0|mallocprof: warning: pymalloc: PYTHONMALLOC or -X dev replaced the recorder's wrappers at start-up: the blocks of Python's allocator, unless malloc's, are not counted in this mode (full capture counts them)" \
    "PYTHONMALLOC=pymalloc, sampled: one warning"
