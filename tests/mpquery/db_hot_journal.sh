#!/bin/bash
# A hot journal (a write killed midway: the recorder during its flush, or
# stopped by RLIMIT_FSIZE) beside a profile: where mpquery may write,
# SQLite rolls it back in place; where it may not (a read-only mount, a
# directory of another user), mpquery reads a private copy rolled back in
# $TMPDIR, says so once, and leaves the files as they were. Either way the
# answers are the committed data, never the half-written pages (the old
# build said "not a mallocprof profile (attempt to write a readonly
# database)" in both cases).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

fixture basic >/dev/null
cp basic.db other.db && sqlite3 other.db "UPDATE run SET token = 'other'" || fail "cannot make other.db"
top=$("$MPQ" top basic.db --format csv) || fail "top basic.db failed"
fold=$("$MPQ" fold basic.db) || fail "fold basic.db failed"

# hot DB: basic.db with a hot journal (lib.sh hot_journal)
hot() { hot_journal basic.db "$1"; }

# the file without its journal holds pages of the write that never committed
hot torn.db
cp torn.db torn-alone.db
NO_PROFILE_CHECK="$NO_PROFILE_CHECK torn-alone.db"
assert_eq "$(q torn-alone.db 'SELECT sum(ncalls) FROM sample')" 7000042 "the killed write reached the file (42 committed)"

# writable: rolled back in place, as SQLite does
hot w.db
assert_eq "$("$MPQ" top w.db --format csv 2>err.txt)" "$top" "writable: top answers the committed data"
assert_eq "$(cat err.txt)" "" "... silently"
[ -e w.db-journal ] && fail "writable: the journal is still there"
assert_eq "$(q w.db 'SELECT sum(ncalls) FROM sample')" 42 "... rolled back in place"

# CMD...: checks that a read of the hot profile ro/a.db (the directory not
# writable) answers as the committed data, says once why, leaves the
# files as they were and no temporary file behind
check_readonly() {
    local how=$1 why=$2; shift 2
    local warn="mpquery: warning: ro/a.db: an interrupted write left ro/a.db-journal, which this process cannot roll back ($why): read as last committed, from a private copy"
    local sums
    sums=$(sha256sum ro/a.db ro/a.db-journal)
    assert_eq "$("$@" "$MPQ" top ro/a.db --format csv 2>err.txt)" "$top" "$how: top answers the committed data"
    assert_eq "$(cat err.txt)" "$warn" "$how: ... and says once why"
    assert_eq "$("$@" "$MPQ" fold ro/a.db 2>/dev/null)" "$fold" "$how: fold too"
    assert_eq "$("$@" "$MPQ" sql ro/a.db 'SELECT (SELECT sum(ncalls) FROM sample) AS n, (SELECT count(*) FROM function) AS f' \
                 --format csv 2>/dev/null)" "n,f
42,9" "$how: sql too"
    # hist opens the database again after the load: the same copy, said once
    "$@" "$MPQ" hist ro/a.db --stack 8 >/dev/null 2>err.txt || fail "$how: hist failed: $(cat err.txt)"
    assert_eq "$(cat err.txt)" "$warn" "$how: hist reads the same copy (said once)"
    # several files: the merge reads the copy
    assert_eq "$("$@" "$MPQ" top ro/a.db other.db --format csv 2>/dev/null | sed -n 2p | cut -d, -f1-2)" "12,10200" \
        "$how: with another file (B's rows twice)"
    assert_eq "$(sha256sum ro/a.db ro/a.db-journal)" "$sums" "$how: the database and its journal unchanged"
    assert_eq "$(ls tmp)" "" "$how: no temporary file left"
}
mkdir ro tmp
chmod 777 tmp
export TMPDIR=$T/tmp

# a read-only bind mount (root writes anywhere else)
hot ro/a.db
if unshare -m true 2>/dev/null; then
    in_ro_mount() {
        unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"' \
            sh "$T/ro" "$@"
    }
    check_readonly "read-only mount" "the directory: Read-only file system" in_ro_mount
else
    echo "SKIP: unshare -m is not permitted here (the read-only mount case)"
fi

# another user's directory, read by nobody (the old build: "attempt to
# write a readonly database")
chmod 755 "$T" ro
chmod 644 ro/a.db ro/a.db-journal
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
if as_nobody true 2>/dev/null; then
    check_readonly "nobody" "the directory: Permission denied" as_nobody
    # a journal it cannot read: the committed data cannot be rebuilt
    chmod 600 ro/a.db-journal
    expect_fail 2 '^mpquery: ro/a\.db: an interrupted write left ro/a\.db-journal, which cannot be read \(Permission denied\)$' \
        as_nobody "$MPQ" top ro/a.db
    assert_eq "$(ls tmp)" "" "an unreadable journal: no temporary file left"
else
    echo "SKIP: setpriv cannot run as nobody here (the unprivileged case)"
fi
