# The debug-info cache under hostile conditions, as root (mpquery and
# preloaded programs often run as root with a user's HOME): nothing in it
# is followed across a link, opened when not a regular file, or used,
# written or removed when a directory or file is another user's or
# writable by others (common/debugcache.c). Planted by the user
# mp_test_other. Every run is bounded (SIGKILL), so a hang fails the test:
# a FIFO at <build-id>.debug kept a preloaded program waiting at its first
# flush with SIGTERM blocked.
. "$(dirname "$0")/../lib/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (files of another user)"; exit 0; }
other=mp_test_other
id -u $other >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin $other || fail "useradd $other failed"
uid_other=$(id -u $other)
as_other() { setpriv --reuid=$other --regid=$other --clear-groups "$@"; }
chmod 755 "$T"
stripped_prog                   # ./prog stripped, debug/.build-id/XX/YYYY.debug; $bid
orig=debug/.build-id/${bid:0:2}/${bid:2}.debug
objcopy --compress-debug-sections=zlib "$orig" || fail "objcopy --compress-debug-sections failed"
prog_sum=$(sha256sum <prog)
line_inner=$(grep -n 'char \*p = new char\[256\]' $ROOT/tests/progs/inline_opt.cc | cut -d: -f1)
# named DB: the static function and the inline function named (from the debug file)
named() { q "$1" "SELECT count(DISTINCT function) FROM stack_frames WHERE function IN
                  ('static_alloc(int) [clone .constprop.0]', 'inner_alloc') AND stack IN (SELECT stack FROM sample)"; }
# run_prog DB: ./prog preloaded as root, at most 30 s (SIGKILL); its status
run_prog() {
    MP_OUT=$1 timeout -s KILL 30 env LD_PRELOAD=$LIB ./prog >/dev/null 2>$1.err; local rc=$?
    [ $rc = 137 ] && fail "$1: the preloaded program still running after 30 s (killed)"
    return $rc
}
# record DB: mpquery record of ./prog, at most 60 s; stderr in DB.err
record() {
    timeout -s KILL 60 "$MPQ" record -q -o $1 -- ./prog >/dev/null 2>$1.err; local rc=$?
    [ $rc = 137 ] && fail "$1: mpquery record still running after 60 s (killed)"
    assert_eq "$rc" 0 "$1: record's exit status"
}
export MP_DEBUGINFO_PATH=$T/debug
unset XDG_CACHE_HOME

# 1. A FIFO at <build-id>.debug in root's own cache: the preloaded program
#    ends, its names from the compressed file; record replaces the FIFO by
#    a regular copy, which the next run uses.
export HOME=$T/root
d=$HOME/.cache/mallocprof/debuginfo
mkdir -p "$d" && mkfifo "$d/$bid.debug" || fail "mkfifo failed"
on_exit "rm -f '$d/$bid.debug'"            # the profile check at the end opens every file
run_prog fifo.db || fail "fifo: the program failed"
assert_eq "$(named fifo.db)" 2 "FIFO in the cache: the program's names from the compressed file"
record fifo_rec.db
assert_eq "$(stat -c %F "$d/$bid.debug")" "regular file" "FIFO in the cache: replaced by a copy"
MP_OUT=after.db timeout -s KILL 30 strace -f -qq -e trace=openat -o trace.after -E LD_PRELOAD=$LIB ./prog >/dev/null 2>&1 ||
    fail "the program failed, or still ran after 30 s"
assert_eq "$(grep -c "openat([^\"]*\"$bid.debug\"" trace.after)|$(named after.db)" "1|2" "the copy read, the names from it"

# 2. A symbolic link of $other at <build-id>.debug, to a root-owned file
#    with the same build-id (the stripped program itself: no names): not
#    followed; record replaces the link, the program it named unchanged.
rm -f "$d/$bid.debug" && ln -s "$T/prog" "$d/$bid.debug" && chown -h $other "$d/$bid.debug" || fail "ln failed"
run_prog link.db || fail "link: the program failed"
assert_eq "$(named link.db)" 2 "$other's link in the cache: not followed, the names kept"
record link_rec.db
assert_eq "$(stat -c '%F %U' "$d/$bid.debug")" "regular file root" "$other's link replaced by root's copy"
assert_eq "$(sha256sum <prog)" "$prog_sum" "the file the link named is unchanged"

# 3. HOME is $other's, and so is .cache/mallocprof, with a link to the
#    stripped program at <build-id>.debug: the cache is not used (one line
#    from record), nothing written there.
export HOME=$T/uhome
mkdir "$HOME" && chown $other: "$HOME" || fail "mkdir failed"
dd=$HOME/.cache/mallocprof/debuginfo
as_other mkdir -p "$dd" && as_other ln -s "$T/prog" "$dd/$bid.debug" || fail "$other's cache not made"
run_prog uhome.db || fail "the program failed"
assert_eq "$(named uhome.db)" 2 "$other's cache: the link not used, the names kept"
record uhome_rec.db
assert_eq "$(cat uhome_rec.db.err)" "mpquery: warning: record: debug-info cache not used: $HOME/.cache/mallocprof: owned by uid $uid_other" \
    "$other's cache: one line"
assert_eq "$(cd "$dd" && ls -A)" "$bid.debug" "$other's cache: nothing written"

# 4. mallocprof/debuginfo a link of $other's to a root-owned directory with
#    a root-owned copy 2 hours old and one of a copy being written: none is
#    removed, no copy made there (MP_DEBUGINFO_CACHE_SIZE forces room to be
#    made), whether mallocprof/ is $other's or root's.
mkdir elsewhere && head -c 102400 /dev/zero >elsewhere/old.debug && head -c 1000 /dev/zero >elsewhere/x.debug.AAAAAA &&
    touch -d '2 hours ago' elsewhere/old.debug elsewhere/x.debug.AAAAAA || fail "setup failed"
listing() { (cd "$1" && ls -l --time-style=+%s | sort); }
before=$(listing elsewhere)
for owner in $other root; do
    rm -rf "$HOME/.cache/mallocprof"
    if [ $owner = root ]; then mkdir "$HOME/.cache/mallocprof"; else as_other mkdir "$HOME/.cache/mallocprof"; fi
    ln -s "$T/elsewhere" "$HOME/.cache/mallocprof/debuginfo" && chown -h $other "$HOME/.cache/mallocprof/debuginfo" ||
        fail "ln failed"
    MP_DEBUGINFO_CACHE_SIZE=100K record dir_$owner.db
    why="$HOME/.cache/mallocprof: owned by uid $uid_other"
    [ $owner = root ] && why="$HOME/.cache/mallocprof/debuginfo: a symbolic link"
    assert_eq "$(cat dir_$owner.db.err)" "mpquery: warning: record: debug-info cache not used: $why" \
        "a linked debuginfo directory, mallocprof/ $owner's: one line"
    assert_eq "$(listing elsewhere)" "$before" "a linked debuginfo directory, mallocprof/ $owner's: nothing removed or written there"
    cp fifo.db sym_$owner.db
    timeout -s KILL 60 "$MPQ" symbolize sym_$owner.db --debuginfo-path "$T/debug" >/dev/null 2>sym_$owner.err
    assert_eq "$?|$(cat sym_$owner.err)" "0|mpquery: warning: symbolize: debug-info cache not used: $why" \
        "symbolize, a linked debuginfo directory, mallocprof/ $owner's: one line"
    assert_eq "$(listing elsewhere)" "$before" "symbolize: nothing removed or written there"
done

# 5. A cache directory root's but writable by others: not used.
rm -rf "$HOME/.cache/mallocprof" && mkdir -p "$HOME/.cache/mallocprof/debuginfo" && chmod 777 "$HOME/.cache/mallocprof/debuginfo"
record open.db
assert_eq "$(cat open.db.err)" "mpquery: warning: record: debug-info cache not used: $HOME/.cache/mallocprof/debuginfo: writable by others (mode 0777)" \
    "a cache directory writable by others: one line"
assert_eq "$(ls -A "$HOME/.cache/mallocprof/debuginfo")" "" "a cache directory writable by others: nothing written"
