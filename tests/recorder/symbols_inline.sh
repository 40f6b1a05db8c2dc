# Optimized C++ (-O2 -g): a frame inlined into its caller appears with its
# own name and line, marked inlined, and its caller's line is the call's;
# the lines agree with addr2line -i on the same binary. Static functions are
# named. Prints how many addresses were resolved and how long it took.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/inline_opt
profile a.db $P 2>err || fail "program failed"
stack=$(q a.db "SELECT stack FROM stack_frames WHERE function = 'inner_alloc' AND stack IN (SELECT stack FROM sample)")
[ -n "$stack" ] || fail "no stack with inner_alloc"
src=$ROOT/tests/progs/inline_opt.cc
alloc_line=$(grep -n 'char \*p = new char\[256\]' $src | cut -d: -f1)
call_line=$(grep -n 'held\[i % 100\] = inner_alloc' $src | cut -d: -f1)
assert_eq "$(q a.db "SELECT function, file, line, inline_depth FROM stack_frames WHERE stack = $stack AND depth IN (1, 2) ORDER BY depth")" \
"inner_alloc|$src|$alloc_line|1
middle(int)|$src|$call_line|0" "inlined frame and its caller, with lines"
# the same return address, resolved by addr2line at address - 1
offset=$(q a.db "SELECT offset FROM stack_frames WHERE stack = $stack AND depth = 1")
a2l=$(addr2line -i -e $P $(printf '0x%x' $((offset - 1))) | sed 's/ (discriminator.*//')
assert_eq "$a2l" "$src:$alloc_line
$src:$call_line" "addr2line -i agrees"
assert_eq "$(by_function a.db 'static_alloc*')" "static_alloc(int) [clone .constprop.0]|50|2400|50|0" "static function named"
assert_eq "$(q a.db "SELECT count(*) FROM stack_frames WHERE function = 'inner_alloc' AND inline_depth = 0")" 0 "inlined frames are never depth 0"
