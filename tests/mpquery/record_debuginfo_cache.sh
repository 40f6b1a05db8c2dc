# The debug-info cache (common/debugcache.c): a compressed debug file
# (as Debian's -dbg/-dbgsym packages ship them) gets an uncompressed copy
# named by build-id, made by `mpquery record` after its run; the recorder
# reads the copy instead of inflating the file and writes nothing there
# itself. The names, inline chains and lines are the same either way. Both
# ways of finding a debug file: the build-id directory and .gnu_debuglink.
. "$(dirname "$0")/../lib/lib.sh"
stripped_prog                   # ./prog stripped, debug/.build-id/XX/YYYY.debug; $bid
orig=debug/.build-id/${bid:0:2}/${bid:2}.debug
objcopy --compress-debug-sections=zlib "$orig" || fail "objcopy --compress-debug-sections failed"
# compressed NAME: how many .debug_* sections of NAME are compressed (flag C)
compressed() { readelf -SW "$1" 2>/dev/null | grep -E '\] \.debug_' | grep -c ' C '; }
[ "$(compressed "$orig")" -ge 3 ] || fail "the debug file's sections are not compressed"
line_inner=$(grep -n 'char \*p = new char\[256\]' $ROOT/tests/progs/inline_opt.cc | cut -d: -f1)
line_middle=$(grep -n 'held\[i % 100\] = inner_alloc' $ROOT/tests/progs/inline_opt.cc | cut -d: -f1)
names="static_alloc(int) [clone .constprop.0]|50|2400|50|0
inner_alloc:$line_inner
middle(int):$line_middle"
# check_names DB WHAT: the static function and the inline chain named from the debug file
check_names() {
    assert_eq "$(by_function $1 'static_alloc*'
                 q $1 "SELECT function || ':' || line FROM stack_frames WHERE function IN ('inner_alloc', 'middle(int)')
                       AND stack IN (SELECT stack FROM sample) ORDER BY depth")" "$names" "$2: names, inline chain and lines"
}
mkdir home
export HOME=$T/home XDG_CACHE_HOME=$T/cache MP_DEBUGINFO_PATH=$T/debug
copy=$XDG_CACHE_HOME/mallocprof/debuginfo/$bid.debug
# opened NAME TRACE: how many times NAME was opened (by its path, or by its
# file name from its directory's descriptor)
opened() { grep -c "openat([^\"]*\"\([^\"]*/\)\?$(basename "$1")\"" "$2"; }

# 1. The recorder alone: names from the compressed file, nothing written.
MP_OUT=plain.db strace -f -qq -e trace=openat,mkdir,rename -o trace.plain -E LD_PRELOAD=$LIB ./prog >/dev/null 2>plain.err ||
    fail "program failed"
check_names plain.db "no copy yet"
assert_match "$(cat plain.err)" "resolved in [0-9.]+ s \(1 compressed debug file inflated: mpquery record or symbolize keeps an uncompressed copy for the next runs\), the ledger" \
    "the recorder's info line says the file was inflated, and what keeps a copy"
assert_eq "$(opened "$T/$orig" trace.plain)" 1 "the compressed file read"
assert_eq "$(grep -c 'mkdir(\|rename(' trace.plain)" 0 "the recorder makes no directory and renames nothing"
assert_eq "$(ls -A home; ls -A "$XDG_CACHE_HOME" 2>/dev/null)" "" "nothing written under \$HOME or the cache"

# 2. mpquery record makes the copy after the run: uncompressed, same build-id.
"$MPQ" record -q -o rec.db -- ./prog >/dev/null 2>rec.err || fail "record failed: $(cat rec.err)"
assert_eq "$(cat rec.err)" "" "record says nothing of the cache"
check_names rec.db "mpquery record"
[ -s "$copy" ] || fail "no copy at $copy: $(ls -R "$XDG_CACHE_HOME" 2>&1)"
assert_eq "$(compressed "$copy")" 0 "the copy has no compressed section"
assert_eq "$(readelf -n "$copy" | sed -n 's/.*Build ID: //p')" "$bid" "the copy's build-id"
assert_eq "$(readelf -SW "$copy" 2>/dev/null | grep -E '\] \.debug_' | awk '{print $2}')" \
          "$(readelf -SW "$orig" 2>/dev/null | grep -E '\] \.debug_' | awk '{print $2}')" "the copy has the file's debug sections"
assert_eq "$(ls "$XDG_CACHE_HOME/mallocprof/debuginfo" | grep -vc '\.debug$')" 0 "no temporary file left"

# 3. The recorder uses the copy: the same names, the copy opened, nothing written.
stamp=$(stat -c %Y.%s "$copy")
MP_OUT=cached.db strace -f -qq -e trace=openat,mkdir,rename -o trace.cached -E LD_PRELOAD=$LIB ./prog >/dev/null 2>cached.err ||
    fail "program failed"
check_names cached.db "from the copy"
assert_eq "$(grep -c 'resolved in .* s, the ledger' cached.err)|$(grep -c inflated cached.err)" "1|0" "from the copy: nothing inflated, nothing said"
assert_eq "$(opened "$copy" trace.cached)" 1 "the copy read"
assert_eq "$(grep -c 'mkdir(\|rename(' trace.cached)" 0 "the recorder makes no directory and renames nothing"
assert_eq "$(stat -c %Y.%s "$copy")" "$stamp" "the copy left as it was"
assert_eq "$(ls -A home)" "" "nothing under \$HOME"

# 4. MP_DEBUGINFO_CACHE=0: the copy is not looked for.
MP_DEBUGINFO_CACHE=0 MP_OUT=off.db strace -f -qq -e trace=openat -o trace.off -E LD_PRELOAD=$LIB ./prog >/dev/null 2>&1 ||
    fail "program failed"
check_names off.db "MP_DEBUGINFO_CACHE=0"
assert_eq "$(grep -c "$XDG_CACHE_HOME" trace.off)" 0 "MP_DEBUGINFO_CACHE=0: the cache not opened"

# 5. A damaged copy (cut short, or another file's) is not used by the
#    recorder, which names the frames from the compressed file, and is
#    replaced by the next mpquery record.
for damage in short other; do
    if [ $damage = short ]; then head -c 100 "$orig" >"$copy.new"; else cp /bin/true "$copy.new"; fi
    mv "$copy.new" "$copy"
    MP_OUT=$damage.db LD_PRELOAD=$LIB ./prog >/dev/null 2>$damage.err || fail "program failed"
    check_names $damage.db "$damage copy"
    assert_eq "$(grep -v 'info:' $damage.err)" "" "$damage copy: nothing said"
    [ "$damage" = short ] && assert_eq "$(stat -c %s "$copy")" 100 "the recorder did not touch the short copy"
    "$MPQ" record -q -o rec.db -- ./prog >/dev/null 2>rec.err || fail "record failed: $(cat rec.err)"
    assert_eq "$(readelf -n "$copy" 2>/dev/null | sed -n 's/.*Build ID: //p')" "$bid" "$damage copy replaced by record"
    assert_eq "$(compressed "$copy")" 0 "$damage copy: the new one is uncompressed"
done

# 6. Found by .gnu_debuglink instead (no build-id directory on the path).
mkdir linked && cp prog linked/prog && cp "$orig" linked/prog.debug && rm -rf "$XDG_CACHE_HOME"
(cd linked && objcopy --add-gnu-debuglink=prog.debug prog) || fail "objcopy --add-gnu-debuglink failed"
export MP_DEBUGINFO_PATH=:.debug
"$MPQ" record -q -o link.db -- linked/prog >/dev/null 2>rec.err || fail "record failed: $(cat rec.err)"
check_names link.db "debuglink, record"
[ -s "$copy" ] || fail "debuglink: no copy made"
assert_eq "$(compressed "$copy")" 0 "debuglink: the copy made, uncompressed"
MP_OUT=link2.db strace -f -qq -e trace=openat -o trace.link -E LD_PRELOAD=$LIB linked/prog >/dev/null 2>&1 ||
    fail "program failed"
check_names link2.db "debuglink, from the copy"
assert_eq "$(opened "$copy" trace.link)" 1 "debuglink: the copy read"

# 7. A cache that cannot be written: record's run and exit status are unchanged, nothing said.
XDG_CACHE_HOME=/proc/self/none "$MPQ" record -q -o ro.db -- ./prog >/dev/null 2>rec.err
assert_eq "$?" 0 "unwritable cache: record's exit status"
assert_eq "$(cat rec.err)" "" "unwritable cache: nothing said"

# 8. The cache's size (MP_DEBUGINFO_CACHE_SIZE): the oldest copies go to make
#    room for a new one; one larger than the whole cache is not made.
export MP_DEBUGINFO_PATH=$T/debug
d=$XDG_CACHE_HOME/mallocprof/debuginfo
copy_blocks=$(($(stat -c %b "$copy") * 512))
rm -rf "$XDG_CACHE_HOME" && mkdir -p "$d"
for k in 1 2 3; do
    head -c 102400 /dev/zero >"$d/old$k.debug" && touch -d "2026-01-0$k 12:00" "$d/old$k.debug"
done
MP_DEBUGINFO_CACHE_SIZE=$((2 * 102400 + copy_blocks + 4096)) "$MPQ" record -q -o size.db -- ./prog >/dev/null 2>rec.err ||
    fail "record failed: $(cat rec.err)"
assert_eq "$(cd "$d" && ls | sort | tr '\n' ' ')" "$bid.debug old2.debug old3.debug " "the oldest copy removed to make room"
rm "$copy"
MP_DEBUGINFO_CACHE_SIZE=1K "$MPQ" record -q -o size.db -- ./prog >/dev/null 2>rec.err || fail "record failed: $(cat rec.err)"
assert_eq "$(cd "$d" && ls | sort | tr '\n' ' ')" "old2.debug old3.debug " "a copy larger than the cache not made, nothing removed"

# 9. record --debuginfo-cache 0: no copy made; a size that is not one: one
#    line naming the variable, exit 2, the program not run.
rm -rf "$XDG_CACHE_HOME"
"$MPQ" record -q -o off2.db --debuginfo-cache 0 -- ./prog >/dev/null 2>rec.err || fail "record failed: $(cat rec.err)"
assert_eq "$(ls -A "$XDG_CACHE_HOME" 2>/dev/null)" "" "--debuginfo-cache 0: no copy made"
MP_DEBUGINFO_CACHE_SIZE=12Q "$MPQ" record -q -o bad.db -- sh -c 'echo ran > ran' 2>rec.err
assert_eq "$?" 2 "a cache size that is not one: exit status"
assert_eq "$(cat rec.err)" "mpquery: record: MP_DEBUGINFO_CACHE_SIZE=12Q is not a size (bytes, or K, M, G)" "one line naming the variable"
assert_eq "$(ls ran bad.db 2>&1 | grep -c 'No such file')" 2 "the program not run, nothing written"
MP_DEBUGINFO_CACHE_SIZE=12Q "$MPQ" symbolize rec.db 2>rec.err
assert_eq "$?" 2 "symbolize, a cache size that is not one: exit status"

# 10. A copy left half-written by a killed mpquery (NAME.debug.XXXXXX): an
#     hour old, removed when room is made; younger (another mpquery may be
#     writing it), kept.
rm -rf "$XDG_CACHE_HOME" && mkdir -p "$d"
head -c 1000 /dev/zero >"$d/$bid.debug.AAAAAA" && touch -d '2 hours ago' "$d/$bid.debug.AAAAAA"
head -c 1000 /dev/zero >"$d/$bid.debug.BBBBBB"
"$MPQ" record -q -o tmp.db -- ./prog >/dev/null 2>rec.err || fail "record failed: $(cat rec.err)"
assert_eq "$(cd "$d" && ls | sort | tr '\n' ' ')" "$bid.debug $bid.debug.BBBBBB " "the old temporary file removed, the young one kept"
