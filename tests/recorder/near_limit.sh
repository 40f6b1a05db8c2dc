# Snapshots before the OOM killer (issue 44, item 5; MP_NEAR_LIMIT): the
# first time the memory reaches 80, 90 and 95 % of one of the process's
# limits, the background thread writes a snapshot (reason near-limit).
#  - The real thing: a process in a memory cgroup (v1) of 200 MiB leaking
#    from one function, 120 MiB at once then 1 MiB every 40 ms (a snapshot
#    of it takes 0.13-0.2 s here, most of it the ledger's; at 20 ms, 1 run
#    in 6 had its 90 % snapshot still unwritten when killed), is killed by
#    the kernel's OOM killer (SIGKILL); its profile's last snapshot is a
#    near-limit one and names that function holding >= 80 % of the limit. Needs root and a
#    cgroup v1 memory hierarchy where a child cgroup can be made: else
#    that part is skipped (SKIP line), and the RLIMIT parts still test the
#    snapshots.
#  - cgroup v2 (memory.current against memory.max), read from files the test
#    writes, mounted over the hierarchies in a mount namespace of its own
#    (unshare -m): a percentage already passed at start is not a crossing,
#    two passed between looks make one snapshot (the higher one's label),
#    MP_NEAR_LIMIT=off none.
#  - RLIMIT_AS (ulimit -v) and RLIMIT_DATA (ulimit -d): the program's malloc
#    fails; it frees its last 32 MiB (room for the exit snapshot, which
#    otherwise fails for want of memory 1 run in 2) and exits with status
#    3, as without the recorder; the 80 % snapshot comes first.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/near_limit
LIMIT=209715200
LEAK="SELECT sum(x.memlive) FROM last_sample x JOIN stack_path sp ON sp.stack = x.stack WHERE sp.leaf = 'leak_here'"
LAST="SELECT reason || '|' || label FROM snapshot WHERE reason != 'peak' ORDER BY seq DESC LIMIT 1"
labels() { q "$1" "SELECT group_concat(label, ';') FROM (SELECT label FROM snapshot WHERE reason = 'near-limit' ORDER BY seq)"; }

# ---- the kernel's OOM killer in a cgroup v1 of 200 MiB
own=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' /proc/self/cgroup)
CG=/sys/fs/cgroup/memory${own%/}/mp-near-limit-$$
if [ -n "$own" ] && mkdir "$CG" 2>/dev/null; then
    on_exit "rmdir $CG 2>/dev/null"
    echo $LIMIT > "$CG/memory.limit_in_bytes" || fail "cannot set $CG/memory.limit_in_bytes"
    [ -f "$CG/memory.memsw.limit_in_bytes" ] && echo $LIMIT > "$CG/memory.memsw.limit_in_bytes"    # no swapping instead
    sh -c "echo \$\$ > $CG/cgroup.procs && exec env LD_PRELOAD=$LIB MP_OUT=$T/oom.db MP_QUIET=1 $P 40 120" 2>err
    assert_eq "$?" 137 "cgroup of 200 MiB: the leaking process is killed (SIGKILL)"
    kills=$(sed -n 's/^oom_kill //p' "$CG/memory.oom_control")
    [ -z "$kills" ] || assert_eq "$kills" 1 "cgroup of 200 MiB: by the OOM killer (memory.oom_control's oom_kill)"
    assert_eq "$(q oom.db 'PRAGMA integrity_check')" ok "cgroup of 200 MiB: the profile is sound"
    assert_match "$(labels oom.db)" "^80% of memory.limit_in_bytes \($LIMIT bytes\)(;9[05]% of memory.limit_in_bytes \($LIMIT bytes\))*$" \
        "cgroup of 200 MiB: near-limit snapshots at 80 % first, then 90 or 95 %"
    assert_match "$(q oom.db "$LAST")" "^near-limit\|9[05]% of memory.limit_in_bytes \($LIMIT bytes\)$" \
        "cgroup of 200 MiB: the last snapshot is a near-limit one, at 90 or 95 %"
    leaked=$(q oom.db "$LEAK")
    [ "$leaked" -ge $((LIMIT * 8 / 10)) ] && [ "$leaked" -lt $LIMIT ] ||
        fail "cgroup of 200 MiB: leak_here's memlive in the last snapshot: $leaked, not >= 80 % of $LIMIT"
    echo "  ok: cgroup of 200 MiB: leak_here holds $leaked bytes in the last snapshot (>= 80 % of $LIMIT)"
    assert_match "$("$MPQ" top oom.db --by memlive -n 1 | tail -n 1)" "leak_here < main$" \
        "cgroup of 200 MiB: mpquery top's first stack is leak_here's"
    assert_eq "$(cat err)" "" "cgroup of 200 MiB: nothing on stderr"
else
    echo "SKIP: no child memory cgroup (v1) could be made under /sys/fs/cgroup/memory${own%/} (not root, or no v1" \
        "memory hierarchy): the OOM kill is not tested, the RLIMIT and v2 parts below still are"
fi

# ---- cgroup v2, from files the test writes (a mount namespace of its own)
cat > v2.sh <<EOF
mount -t tmpfs none /sys/fs/cgroup/memory 2>/dev/null     # no v1 memory hierarchy, if there is one
mount -t tmpfs none /sys/fs/cgroup/unified || exit 9
cd /sys/fs/cgroup/unified
echo max > memory.max; echo 190000000 > memory.current
LD_PRELOAD=$LIB MP_OUT=$T/none.db MP_QUIET=1 $B/tests/alloc_functions >/dev/null   # no limit: no looks
echo $LIMIT > memory.max
MP_NEAR_LIMIT=off LD_PRELOAD=$LIB MP_OUT=$T/off.db MP_QUIET=1 $B/tests/alloc_functions >/dev/null
mkfifo $T/go
echo 170000000 > memory.current     # 81 %: 80 passed before the start
MP_NEAR_LIMIT=\$1 LD_PRELOAD=$LIB MP_OUT=$T/v2.db MP_QUIET=1 cat $T/go &
for step in \$2; do     # each one crosses a percentage: its snapshot waited for
    sleep 0.1
    n=\$(sqlite3 $T/v2.db "SELECT count(*) FROM snapshot WHERE reason = 'near-limit'" 2>/dev/null)
    echo \$step > memory.current
    for i in \$(seq 200); do
        [ "\$(sqlite3 $T/v2.db "SELECT count(*) FROM snapshot WHERE reason = 'near-limit'" 2>/dev/null)" != "\$n" ] && break
        sleep 0.05
    done
done
echo 209000000 > memory.current     # 99.7 %: past the last percentage, nothing more
sleep 0.1
echo > $T/go
wait
rm $T/go     # the profile check at exit would open it, and wait
EOF
if unshare -m true 2>/dev/null; then
    unshare -m sh v2.sh 80,90,95 "190000000 199229440"     # 90.6 %, 95 %
    assert_eq "$?" 0 "cgroup v2: the run in a mount namespace"
    assert_eq "$(q none.db "SELECT count(*) FROM snapshot WHERE reason = 'near-limit'")" 0 "cgroup v2: memory.max 'max': none"
    assert_eq "$(q off.db "SELECT count(*) FROM snapshot WHERE reason = 'near-limit'")" 0 "cgroup v2: MP_NEAR_LIMIT=off: none"
    assert_eq "$(labels v2.db)" "90% of memory.max ($LIMIT bytes);95% of memory.max ($LIMIT bytes)" \
        "cgroup v2: 90 and 95 % (80 % passed before the start; 99.7 % is past the last)"
    rm -f v2.db
    unshare -m sh v2.sh 50,95 199229440
    assert_eq "$(labels v2.db)" "95% of memory.max ($LIMIT bytes)" "cgroup v2: MP_NEAR_LIMIT=50,95: 50 passed at start, 95"
    assert_eq "$(q v2.db "SELECT reason FROM snapshot WHERE reason != 'peak' ORDER BY seq")" "near-limit
exit" "cgroup v2: then the exit snapshot"
else
    echo "SKIP: unshare -m refused (not root): the cgroup v2 part is not tested"
fi

# ---- RLIMIT_AS and RLIMIT_DATA: malloc fails, as it does without the recorder
for lim in "v 400000 RLIMIT_AS" "d 300000 RLIMIT_DATA"; do
    set -- $lim
    native=$(ulimit -$1 $2; $P 0 >/dev/null 2>&1; echo $?)
    assert_eq "$native" 3 "ulimit -$1 $2: the program's malloc fails"
    rc=$(ulimit -$1 $2; LD_PRELOAD=$LIB MP_OUT=$T/$3.db MP_QUIET=1 $P 10 150 2>err; echo $?)
    assert_eq "$rc" 3 "ulimit -$1 $2: the exit status is the program's own"
    assert_match "$(labels $3.db)" "^80% of $3 \($(($2 * 1024)) bytes\)(;9[05]% of $3 \($(($2 * 1024)) bytes\))*$" \
        "ulimit -$1 $2: near-limit snapshots at 80 % first, then 90 or 95 %"
    assert_eq "$(q $3.db "$LAST")" "exit|" "ulimit -$1 $2: then the exit snapshot"
    assert_eq "$(cat err)" "" "ulimit -$1 $2: nothing on stderr"
done
