#!/bin/bash
# mpquery show: one stack in full, leaf first, with file:line, [inlined]
# and module+offset; counters of the stack on the header line.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"
fixture basic >/dev/null

# (compared with diff: run.sh echoes log lines starting with '#')
"$MPQ" show basic.db 5 > bt.txt || fail "show failed"
diff bt.txt - <<'TXT' || fail "show 5: unexpected backtrace"
stack 5: ncalls 10 memtot 1000 B nfree 10 nlive 0 memlive 0 B maxlive 300 B ntemp 0
#0   malloc  (/lib/x86_64-linux-gnu/libc.so.6+0x1000)
#1   helper  /src/app/main.cc:41 [inlined]  (/usr/bin/app+0x600)
#2   load  /src/app/main.cc:40  (/usr/bin/app+0x600)
#3   main  /src/app/main.cc:10  (/usr/bin/app+0x100)
#4   __libc_start_main  (/lib/x86_64-linux-gnu/libc.so.6+0x200)
TXT
echo "  ok: show: a backtrace, leaf first, nothing dropped, [inlined] marked"
assert_eq "$("$MPQ" show basic.db 15 | sed -n 3p | cut -c2-)" "1   app+0x999  (/usr/bin/app+0x999)" "a frame without a symbol is module+0xOFFSET, as in top"
assert_eq "$("$MPQ" show basic.db 8 --bytes | head -1)" "stack 8: ncalls 6 memtot 5100 nfree 2 nlive 4 memlive 3100 maxlive 3100 ntemp 0" "counters summed over threads (--bytes)"
assert_eq "$("$MPQ" show basic.db 8 | head -1)" "stack 8: ncalls 6 memtot 4.98 KiB nfree 2 nlive 4 memlive 3.03 KiB maxlive 3.03 KiB ntemp 0" "sizes in units"
assert_eq "$("$MPQ" show basic.db 8 --thread 101 | head -1)" "stack 8: ncalls 1 memtot 100 B nfree 0 nlive 1 memlive 100 B maxlive 100 B ntemp 0" "--thread"
assert_eq "$("$MPQ" show basic.db 8 --signatures | sed -n 4p | cut -c2-)" "2   parse(std::string const&)  /src/app/parse.cc:30  (/usr/bin/app+0x500)" "replace rules apply"
assert_eq "$("$MPQ" show basic.db 8 | sed -n 3,4p | cut -c2-)" "1   operator new  (/usr/lib/libstdc++.so.6+0x2000)
2   parse  /src/app/parse.cc:30  (/usr/bin/app+0x500)" "text: no parameter lists (as top)"
assert_eq "$("$MPQ" show basic.db 8 --raw | sed -n 4p | cut -c2-40)" "2   parse(std::__cxx11::basic_string<ch" "--raw: names as stored"
assert_eq "$("$MPQ" show basic.db 13 --raw | sed -n 3p | cut -c2-)" "1   foo(int)  /src/app/main.cc:50  (/usr/bin/app+0x700)" "mangled names are demangled"
json=$("$MPQ" show basic.db 5 --format json)
assert_eq "$(json_get "$json" 'j["stack"], j["maxlive"], [(f["function"], f["inline_depth"]) for f in j["frames"]][:3]')" \
  "(5, 300, [('malloc', 0), ('helper', 1), ('load', 0)])" "show --format json"
assert_eq "$("$MPQ" show basic.db 5 --format csv | sed -n 3p)" "1,helper,/src/app/main.cc,41,1,/usr/bin/app,1536" "show --format csv"
assert_eq "$("$MPQ" show basic.db 8 --format csv | sed -n 4p)" "2,parse(std::string const&),/src/app/parse.cc,30,0,/usr/bin/app,1280" \
  "csv: whole names (after the replace rules)"
assert_eq "$("$MPQ" show basic.db 15 --format csv | sed -n 3p)" "1,app+0x999,,0,0,/usr/bin/app,2457" "csv: a frame without a symbol is module+0xOFFSET too"
expect_fail 2 '^mpquery: basic.db: no stack 999$' "$MPQ" show basic.db 999
expect_fail 2 "^mpquery: show: bad stack id 'x' \(see mpquery show --help\)$" "$MPQ" show basic.db x
