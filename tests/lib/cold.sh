# Shared by tests/recorder/cold_*.sh (tests/progs/cold_cache.c under
# MP_COLD=1, MP_INTERVAL=0.2).
# cold_run DB ARGS...: the program with MP_COLD=1; its stderr in err.txt;
# the test is skipped (exit 0, one SKIP line) where the kernel tracks no
# written pages (no soft-dirty bits, no userfaultfd write-protection).
cold_run() {
    local db=$1; shift
    MP_COLD=1 MP_INTERVAL=0.2 MP_QUIET=1 profile "$db" "$B/tests/cold_cache" "$@" >out.txt 2>err.txt
    local rc=$?
    if grep -q "does not tell which pages were written" err.txt; then
        echo "SKIP: this kernel tells no written pages: $(cat err.txt)"
        exit 0
    fi
    assert_eq "$rc|$(cat out.txt)|$(cat err.txt)" "0|done|" "exit status, output unchanged, nothing on stderr"
}
# cold_of DB [WHERE]: "function|memlive|memcold|coldage" of buffer_fill's and
# cache_fill's stacks as of the latest snapshot, one line each (WHERE: a
# condition on s.process, s.thread)
cold_of() {
    "$MPQ" sql "$1" "SELECT f.function, SUM(s.memlive), SUM(s.memcold), MAX(s.coldage)
        FROM last_sample s JOIN stack_frames f ON f.stack = s.stack
        WHERE f.function IN ('buffer_fill', 'cache_fill') AND (${2:-1})
        GROUP BY f.function ORDER BY 1" --format csv | tail -n +2 | tr , '|'
}
# cache_at_intervals DB [WHERE]: "memcold|coldage", the largest of cache_fill's
# rows in the interval snapshots (each interval holds 4 of its writes; the
# exit snapshot is left out: an interval snapshot may come between the
# cache's last write and the exit)
cache_at_intervals() {
    "$MPQ" sql "$1" "SELECT MAX(s.memcold), MAX(s.coldage)
        FROM (SELECT sa.*, sn.process, sn.reason FROM sample sa JOIN snapshot sn ON sn.id = sa.snapshot) s
        JOIN stack_frames f ON f.stack = s.stack
        WHERE f.function = 'cache_fill' AND s.reason = 'interval' AND (${2:-1})" --format csv | tail -n 1 | tr , '|'
}
# cold_check DB WHERE BUFFER_BYTES WHAT: buffer_fill's memcold at the end the
# buffer's size and coldage >= 3 (about 7 intervals after it was written, 3
# at least even on a busy machine); cache_fill's 0 and 0 in every interval
cold_check() {
    local lines buf
    lines=$(cold_of "$1" "$2")
    buf=$(printf '%s\n' "$lines" | grep '^buffer_fill|')
    echo "# $(echo $lines)"
    assert_eq "$(echo "$buf" | cut -d'|' -f2-3)" "$3|$3" "$4: the buffer's live bytes, all cold"
    [ "$(echo "$buf" | cut -d'|' -f4)" -ge 3 ] || fail "$4: the buffer's coldage is below 3: $buf"
    echo "  ok: $4: the buffer stayed cold 3 snapshots at least"
    assert_eq "$(cache_at_intervals "$1" "$2")" "0|0" "$4: the cache (rewritten every 50 ms) is never cold"
}
