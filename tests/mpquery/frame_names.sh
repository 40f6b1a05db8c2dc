#!/bin/bash
# One name a frame in every view (issue 40, mpquery/names.c): a frame left
# without a name in a stripped shared library reads MODULE+0xOFFSET with
# the library's file name (libnames.so+0x…, never libnames+0x…) in top's
# where column, show, --callers, --functions, fold, flame and the exports
# (speedscope, pprof, massif, folded); tags (demos/request_loop) show no
# address in any of them ([tag]+0x…, 0x…: [tag] …, a pprof location's
# address); an [unknown] frame whose address is unknown reads [unknown].
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/views.sh"
source "$ROOT/tests/lib/fixtures.sh"

echo "# a stripped library: names_alloc without a name"
cc -std=gnu11 -O0 -g -fPIC -shared -o libnames.so "$ROOT/tests/progs/libnames.c" || fail "cannot build libnames.so"
cp libnames.so libnames.full.so
strip --strip-all libnames.so || fail "cannot strip libnames.so"
assert_eq "$(nm libnames.so 2>&1 | grep -c names_alloc)" 0 "the library has no symbol table"
profile a.db "$B/tests/dl_plugin" "$T/libnames.so" >/dev/null 2>&1 || fail "dl_plugin failed"
off=$(q a.db "SELECT DISTINCT printf('%x', offset) FROM frame_info WHERE module = '$T/libnames.so' AND function = ''")
# the offset is a return address inside names_alloc, as the unstripped
# library's symbol table says
read -r start size <<<"$(nm -S libnames.full.so | awk '$4 == "names_alloc" { print $1, $2 }')"
[ -n "$off" ] && (( 16#$off > 16#$start && 16#$off <= 16#$start + 16#$size )) ||
    fail "the nameless frame's offset [$off] is not inside names_alloc ($start, size $size)"
echo "  ok: the nameless frame is names_alloc's call at 0x$off"
L="libnames.so+0x$off"
views a.db --filter plugin_run
VIEW_FILES="$VIEW_FILES leaks.txt" in_every_view "$L" "the library's frame"
VIEW_FILES="$VIEW_FILES leaks.txt" in_no_view 'libnames\+0x' "no other name for the library"
assert_match "$(cat top.txt)" $'\n'" +16 +15\.6 KiB .*  $L < plugin_run < run_once < main"$'\n' \
    "top: 16 calls, 16000 bytes (2 loads x 8 x 1000) at $L"
assert_match "$(cat callers.txt)" $'\n'"    $L"$'\n'"    plugin_run \[libnames\.so\]"$'\n' "top --callers: $L, its caller's module"
assert_match "$(cat functions.txt)" $'\n'" +16 +15\.6 KiB .*  $L"$'\n' "top --functions: $L"
assert_match "$(cat leaks.txt)" $'\n'" +16 +15\.6 KiB .*  $L < plugin_run < run_once < main"$'\n' "leaks: the 16 blocks at $L"
assert_match "$(cat show.txt)" $'\n'"#0   $L  \($T/libnames\.so\+0x$off\)"$'\n' "show: $L, then its module's path"
assert_eq "$(grep ";$L " fold.txt)" "main;run_once;plugin_run;$L 16000" "fold: $L, 16000 bytes"
assert_eq "$(cat folded.txt)" "$(cat fold.txt)" "export folded: fold's lines"
assert_match "$(cat massif.txt)" " n1: 16000 0x${off^^}: $L \(in $T/libnames\.so\)"$'\n' \
    "massif: valgrind's form of an address, the same name, the 16000 bytes live at exit"
assert_match "$(cat pprof.txt)" $'\n'"[0-9a-f]+$off libnames\.so $L"$'\n' "pprof: the location's address in libnames.so's mapping, named $L"

echo "# tags: no address"
profile t.db "$B/demos/request_loop" >/dev/null 2>&1 || fail "request_loop failed"
views t.db
VIEW_FILES="$VIEW_FILES leaks.txt"
in_every_view "[tag] request" "tag request"
in_every_view "[tag] cache" "tag cache (its 500 blocks leak)"
for tag in parse log; do        # their blocks are freed: not in leaks nor (at exit) massif
    VIEW_FILES=$(echo $VIEW_FILES | sed 's/ massif.txt//; s/ leaks.txt//') in_every_view "[tag] $tag" "tag $tag"
done
hash=$(q t.db "SELECT printf('%x', offset) FROM frame_info WHERE module = '[tag]' AND function = 'cache'")
assert_match "$hash" '^[0-9a-f]{6,}$' "the tag's offset is its name's hash ($hash)"
in_no_view "\[tag\][^<;]*(\+0x|\(\[tag\])|0x[0-9A-Fa-f]+: \[tag\]|$hash|${hash^^}|$((16#$hash))" "no address for a tag"
assert_eq "$(grep -c '^#[0-9]* *\[tag\] [a-z]*$' show.txt)" 6 "show: 3 stacks, each a line per tag: '#N   [tag] NAME' alone"
assert_eq "$(grep -c ',\[tag\] [a-z]*,,0,0,\[tag\],$' show.csv)" 6 "show --format csv: a tag's offset empty"
assert_eq "$(grep -F '[tag]' pprof.txt | sort)" "0 - [tag] cache
0 - [tag] log
0 - [tag] parse
0 - [tag] request" "pprof: a tag's location without address or mapping"
assert_eq "$(grep -c '^ *n[0-9]*: [0-9]* \[tag\] [a-z]*$' massif.txt)" "$(grep -c '\[tag\]' massif.txt)" \
    "massif: a tag by its name alone"

echo "# [unknown]: its address, when known"
stacks_db u.db <<S
100	main	{[unknown]}@0x0
200	main	{[unknown]}@0x7f0012345678
S
assert_eq "$("$MPQ" fold u.db)" "main;[unknown] 100
main;[unknown]+0x7f0012345678 200" "fold: [unknown] without an address, [unknown]+0x… with one"
assert_eq "$("$MPQ" show u.db 2 --format csv | sed -n 2p)" "0,[unknown],,0,0,[unknown]," "show --format csv: no offset for an unknown address"
