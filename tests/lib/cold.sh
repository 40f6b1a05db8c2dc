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
# cold_check LINES BUFFER_BYTES WHAT: buffer_fill's memcold the buffer's size
# and coldage >= 3 (about 7 intervals after it was written, 3 at least even
# on a busy machine), cache_fill's 0 and 0
cold_check() {
    local buf cache
    buf=$(printf '%s\n' "$1" | grep '^buffer_fill|') cache=$(printf '%s\n' "$1" | grep '^cache_fill|')
    echo "# $buf / $cache"
    assert_eq "$(echo "$buf" | cut -d'|' -f2-3)" "$2|$2" "$3: the buffer's live bytes, all cold"
    [ "$(echo "$buf" | cut -d'|' -f4)" -ge 3 ] || fail "$3: the buffer's coldage is below 3: $buf"
    echo "  ok: $3: the buffer stayed cold 3 snapshots at least"
    assert_eq "$(echo "$cache" | cut -d'|' -f3-4)" "0|0" "$3: the cache (rewritten every 50 ms) is not cold"
}
