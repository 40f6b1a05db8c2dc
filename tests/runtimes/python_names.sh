#!/bin/bash
# Python frames (MP_PYTHON, Debian's python3.11) show no address in any
# view (issue 40, mpquery/names.c): their module is the .py file and their
# offset a hash of function and line, so top, --callers, --functions,
# show (text and csv), fold, flame and the exports (speedscope, pprof,
# massif, folded) name them by function (and file:line where the view
# has one), never py_names.py+0x… nor massif's 0x…: prefix; pprof gives
# their locations no address and no mapping (the interpreter's frames are
# folded: its mapping is there with --native).
source "$(dirname "$0")/../lib/runtime.sh"
source "$ROOT/tests/lib/views.sh"
need python3 python3 /usr/bin/python3
unset PYTHONMALLOC
S=$PROGS/py_names.py

native_and_profiled 1 /usr/bin/python3 -I "$S"
assert_eq "$(cat profiled.out)" 2000 "the script's output"
# the Python frames as stored: module = file = the .py file, no build id
py=$(q a.db "SELECT DISTINCT function || '|' || line FROM frame_info WHERE module = '$S' AND file = module AND build_id = ''
             AND function IN ('decode_all', 'JSONDecoder.raw_decode') ORDER BY 1")
line=$(grep -n 'return \[json.loads' "$S" | cut -d: -f1)
assert_eq "$(echo "$py" | grep -c '^decode_all|'"$line"'$')" 1 "decode_all's frame, line $line of py_names.py"
raw=$(q a.db "SELECT DISTINCT line FROM frame_info WHERE function = 'JSONDecoder.raw_decode' AND file LIKE '%/json/decoder.py'")
[ -n "$raw" ] || fail "no frame of JSONDecoder.raw_decode in json/decoder.py"
assert_eq "$(sed -n "${raw}p" /usr/lib/python3.11/json/decoder.py | grep -c 'scan_once')" 1 \
    "JSONDecoder.raw_decode's line $raw in decoder.py calls the C scanner"

views a.db --filter '^JSONDecoder\.raw_decode$'
in_every_view "JSONDecoder.raw_decode" "raw_decode"
in_every_view "decode_all" "decode_all"
# any address of a Python frame, in any form: FILE.py+0x…, <frozen …>+0x…,
# 0x…: NAME, an address in pprof, or a frame's offset from the database
# (hex, or decimal as show's csv wrote it)
hashes=$(q a.db "SELECT DISTINCT printf('%x|%d', f.offset, f.offset) FROM frame f JOIN module m ON m.id = f.module
                 JOIN file fl ON fl.id = f.file WHERE fl.path = m.path AND f.function IN
                 (SELECT id FROM function WHERE name IN ('decode_all', 'JSONDecoder.raw_decode', 'loads'))" | paste -sd'|')
in_no_view "\.py\+0x|>\+0x|0x[0-9A-F]+: (JSONDecoder|decode_all|loads)|$hashes|${hashes^^}" "no address for a Python frame"
assert_match "$(cat show.txt)" $'\n'"#[0-9]+ +JSONDecoder\.raw_decode  /usr/lib/python3\.11/json/decoder\.py:$raw"$'\n' \
    "show: raw_decode with its file and line, nothing after"
assert_match "$(cat show.txt)" $'\n'"#[0-9]+ +decode_all  $S:$line"$'\n' "show: decode_all with its file and line, nothing after"
assert_match "$(cat show.csv)" $'\n'"[0-9]+,JSONDecoder\.raw_decode,/usr/lib/python3\.11/json/decoder\.py,$raw,0,/usr/lib/python3\.11/json/decoder\.py,"$'\n' \
    "show --format csv: raw_decode's offset empty"
assert_match "$(cat massif.txt)" " n1: [0-9]+ JSONDecoder\.raw_decode \(decoder\.py:$raw\)"$'\n' "massif: raw_decode (decoder.py:$raw)"
assert_eq "$(grep -E ' (JSONDecoder\.raw_decode|decode_all)$' pprof.txt | sort -u)" "0 - JSONDecoder.raw_decode
0 - decode_all" "pprof: Python frames' locations without address or mapping"
assert_eq "$(grep -c '^mapping .*\.py$' pprof.txt)" 0 "pprof: no mapping for a .py file"
# Python first (mpquery/view_python.c): the interpreter's frames are
# folded, the C scanner's (_json) stay; --native keeps the interpreter's
assert_eq "$(grep '^mapping ' pprof.txt | sed 's,.*/,,')" "_json.cpython-311-x86_64-linux-gnu.so" \
    "pprof: the mapping of the C scanner's module, not the interpreter's"
"$MPQ" export a.db --native --filter '^JSONDecoder\.raw_decode$' --format pprof -o native.pb.gz -q || fail "export --native"
$PY3 "$ROOT/tests/lib/pprof_locations.py" native.pb.gz >native.txt || fail "pprof_locations.py cannot read the --native pprof"
assert_match "$(grep -c '^mapping /usr/bin/python3\.11$' native.txt)" '^1$' "pprof --native: the interpreter's mapping"
