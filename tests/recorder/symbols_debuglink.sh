# Separate debug info found by .gnu_debuglink (next to the program, and in
# its .debug directory), with DEBUGINFOD_URLS set: names, inline chains and
# lines come from the local file, and no debuginfod server is asked (no
# connect(), libdebuginfod never opened, nothing written under $HOME).
. "$(dirname "$0")/../lib/lib.sh"
cp "$B/tests/inline_opt" prog
objcopy --only-keep-debug prog prog.debug && strip --strip-all prog && objcopy --add-gnu-debuglink=prog.debug prog || fail "objcopy failed"
assert_eq "$(nm prog 2>&1 | grep -c middle)" 0 "the binary has no symbols"
line_inner=$(grep -n 'char \*p = new char\[256\]' $ROOT/tests/progs/inline_opt.cc | cut -d: -f1)
line_middle=$(grep -n 'held\[i % 100\] = inner_alloc' $ROOT/tests/progs/inline_opt.cc | cut -d: -f1)
mkdir home
for where in here dotdebug; do
    [ $where = dotdebug ] && mkdir -p .debug && mv prog.debug .debug/
    HOME=$T/home DEBUGINFOD_URLS=http://127.0.0.1:9 MP_OUT=$where.db \
        strace -f -qq -e trace=connect,openat -o trace.$where -E LD_PRELOAD=$LIB ./prog >/dev/null 2>&1 || fail "$where: program failed"
    assert_eq "$(by_function $where.db 'static_alloc*')" "static_alloc(int) [clone .constprop.0]|50|2400|50|0" "$where: static function named from the debug file"
    assert_eq "$(q $where.db "SELECT function || ':' || line FROM stack_frames WHERE function IN ('inner_alloc', 'middle(int)') AND stack IN (SELECT stack FROM sample) ORDER BY depth")" \
"inner_alloc:$line_inner
middle(int):$line_middle" "$where: inline chain and lines"
    assert_eq "$(grep -c 'connect(' trace.$where)" 0 "$where: no connect()"
    assert_eq "$(grep -c debuginfod trace.$where)" 0 "$where: libdebuginfod not even looked for"
done
assert_eq "$(ls -A home)" "" "nothing under \$HOME"
