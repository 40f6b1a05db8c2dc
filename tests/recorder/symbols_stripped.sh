# The test program stripped, its debug info split into a .debug file under a
# build-id directory: names and lines are still found (MP_DEBUGINFO_PATH).
. "$(dirname "$0")/../lib/lib.sh"
stripped_prog
assert_eq "$(nm prog 2>&1 | grep -c middle)" 0 "the binary has no symbols"
MP_DEBUGINFO_PATH=":.debug:$T/debug" profile a.db ./prog 2>err || fail "program failed"
assert_eq "$(by_function a.db 'static_alloc*')" "static_alloc(int) [clone .constprop.0]|50|2400|50|0" "static function named from the debug file"
assert_eq "$(q a.db "SELECT function || ':' || line FROM stack_frames WHERE function IN ('inner_alloc', 'middle(int)') AND stack IN (SELECT stack FROM sample) ORDER BY depth")" \
"inner_alloc:$(grep -n 'char \*p = new char\[256\]' $ROOT/tests/progs/inline_opt.cc | cut -d: -f1)
middle(int):$(grep -n 'held\[i % 100\] = inner_alloc' $ROOT/tests/progs/inline_opt.cc | cut -d: -f1)" "inline chain and lines from the debug file"
# without the debug file: the stripped program's frames fall back to module+offset
profile b.db ./prog 2>/dev/null
assert_eq "$(q b.db "SELECT count(*) FROM stack_frames WHERE function = 'middle(int)'")" 0 "no name without debug info"
assert_match "$(q b.db "SELECT module FROM stack_frames WHERE function = '' AND module LIKE '%/prog' LIMIT 1")" "/prog$" "unnamed frames keep module and offset"
