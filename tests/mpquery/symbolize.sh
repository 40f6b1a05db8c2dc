# mpquery symbolize: a profile of a stripped program, named again offline
# once its debug info is there, equals the profile recorded with the debug
# info (names, lines, inline frames); a second run changes nothing; a file
# with another build-id is refused without writing; a missing one is kept.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"    # expect_fail
stripped_prog
DI=":.debug:/usr/lib/debug:$T/debug"
MP_DEBUGINFO_PATH=$DI profile with.db ./prog 2>err || fail "program failed"
echo "# recorder: $(sed -n 's/.*snapshot, \([0-9]* new addresses resolved in [0-9.]* s\).*/\1/p' err)"
profile without.db ./prog 2>/dev/null || fail "program failed"
assert_eq "$(q without.db "SELECT count(*) FROM frame_info WHERE function = 'middle(int)'")" 0 "recorded without debug info: no inline names"
cp without.db a.db
"$MPQ" symbolize a.db --debuginfo-path "$DI" >out 2>err || fail "symbolize failed: $(cat err)"
echo "# symbolize: $(head -n 1 out)"
assert_match "$(head -n 1 out)" "^a.db: [0-9]+ addresses of [0-9]+ modules resolved in [0-9.]+ s" "symbolize reports what it resolved"
assert_match "$(sed -n 2p out)" "inline frames added; .*stack tree rebuilt" "the inline frames reshape the stacks"
assert_eq "$(cat err)" "" "no warning"
assert_eq "$(q a.db 'PRAGMA integrity_check')" ok "integrity_check"
assert_eq "$(q a.db 'SELECT count(*) FROM sample WHERE stack NOT IN (SELECT id FROM stack)')
$(q a.db 'SELECT count(*) FROM stack WHERE frame NOT IN (SELECT id FROM frame) OR (parent != 0 AND parent NOT IN (SELECT id FROM stack))')" "0
0" "no dangling stack or frame"
assert_eq "$(q a.db 'SELECT sum(ncalls), sum(memtot), sum(memlive) FROM sample')" \
          "$(q without.db 'SELECT sum(ncalls), sum(memtot), sum(memlive) FROM sample')" "counters unchanged"
# the same profile as if recorded with the debug info: paths, lines, values
# (top without its column 8, the stack id: ids differ)
for view in "fold" "fold --lines" "top --lines -n 0 --format csv"; do
    "$MPQ" $view with.db | cut -d, -f1-7,9- > expected
    "$MPQ" $view a.db | cut -d, -f1-7,9- > actual
    [ -s expected ] || fail "$view: empty output"
    assert_eq "$(cat actual)" "$(cat expected)" "$view as recorded with debug info"
done
assert_eq "$(q a.db "SELECT function || ':' || line || ':' || inline_depth FROM stack_frames
                     WHERE function IN ('inner_alloc', 'middle(int)') ORDER BY depth")" \
"inner_alloc:$(grep -n 'char \*p = new char\[256\]' $ROOT/tests/progs/inline_opt.cc | cut -d: -f1):1
middle(int):$(grep -n 'held\[i % 100\] = inner_alloc' $ROOT/tests/progs/inline_opt.cc | cut -d: -f1):0" "inline chain with lines"
# again: nothing to do, nothing written
sum=$(sha1sum < a.db)
"$MPQ" symbolize a.db --debuginfo-path "$DI" >out || fail "second symbolize failed"
assert_match "$(sed -n 2p out)" "^0 addresses changed" "a second run changes nothing"
assert_eq "$(sha1sum < a.db)" "$sum" "the database is unchanged"
# another file at the recorded path: refused, nothing written
cp without.db b.db
sum=$(sha1sum < b.db)
cp prog prog.orig
cp $B/tests/cxx_alloc prog
expect_fail 2 "^mpquery: symbolize: $T/prog: build-id [0-9a-f]{40} on disk, $bid recorded: not the file that was profiled; nothing written" \
    "$MPQ" symbolize b.db --debuginfo-path "$DI"
assert_eq "$(sha1sum < b.db)" "$sum" "refused: the database is unchanged"
"$MPQ" symbolize b.db --skip-mismatched >out 2>err || fail "--skip-mismatched failed"
assert_match "$(cat err)" "^mpquery: warning: symbolize: $T/prog: build-id .* skipped$" "--skip-mismatched says what it skipped"
assert_eq "$(q b.db "SELECT count(*) FROM frame_info WHERE module = '$T/prog' AND function != ''")" 0 "the mismatched module keeps its (no) names"
rm prog
"$MPQ" symbolize b.db >out 2>err || fail "symbolize with a missing file failed"
assert_match "$(cat err)" "^mpquery: warning: symbolize: $T/prog: No such file or directory; its frames keep their names$" "a missing file is said"
expect_fail 2 "^mpquery: symbolize: needs DB" "$MPQ" symbolize
expect_fail 2 "^mpquery: nothere.db: No such file or directory" "$MPQ" symbolize nothere.db
