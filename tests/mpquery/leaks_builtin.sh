#!/bin/bash
# mpquery leaks' built-in suppressions (filters/suppressions.rules): the
# one-time buffers of glibc, ld.so and libstdc++ are not leaks of the
# program; they are counted apart ("suppressed: ... by the built-in
# list"), --no-default-suppressions shows them. Hello-worlds in C
# (stdout's buffer, _IO_file_doallocate) and C++ (also libstdc++'s
# emergency exception pool, 71 KiB allocated by its static constructor
# under _dl_init) recorded with the real recorder leak nothing; a real
# leak (hello_stdio leak: 3 blocks of 100 bytes in leak_some) still shows.
source "$(dirname "$0")/../lib/lib.sh"

# stdout a pipe: its buffer is a page (st_blksize of a pipe)
rec() { local db=$1; shift; "$MPQ" record -o "$db" -- "$@" 2>rec.err | cat >/dev/null || fail "record $*: $(cat rec.err)"; }
# the stack column (ids the recorder gives) as '#'
ids() { sed -E 's/^( +[0-9]+ +[0-9.]+( [A-Za-z]+)?  )[0-9]+ +/\1# /'; }
rec c.db "$B/tests/hello_stdio"
rec cc.db "$B/tests/hello_iostream"
rec leak.db "$B/tests/hello_stdio" leak

assert_eq "$("$MPQ" leaks c.db)" \
"0 leaked blocks (0 B) in 0 stacks
suppressed: 1 block (4.00 KiB) by the built-in list" "C hello-world: no leak, stdout's buffer suppressed"
assert_eq "$("$MPQ" leaks cc.db)" \
"0 leaked blocks (0 B) in 0 stacks
suppressed: 2 blocks (75.0 KiB) by the built-in list" "C++ hello-world: no leak, the pool and stdout's buffer suppressed"
assert_eq "$("$MPQ" leaks cc.db --format json | python3 -c 'import json,sys; s = json.load(sys.stdin)["summary"]; print(s["blocks"], s["suppressed_stacks"], s["suppressed_blocks"], s["suppressed_bytes"])')" \
  "0 2 2 76800" "json: suppressed_* (the pool, 72704 bytes, and the buffer, 4096)"

assert_eq "$("$MPQ" leaks c.db --no-default-suppressions | ids)" \
"blocks     bytes  stack  where
     1  4.00 KiB  # _IO_file_doallocate < __GI__IO_doallocbuf < _IO_doallocbuf < _IO_file_overflow < … < main
1 leaked block (4.00 KiB) in 1 stack" \
  "--no-default-suppressions: the buffer shown, no suppressed line"
assert_eq "$("$MPQ" leaks cc.db --no-default-suppressions --bytes | ids | sed -E 's/0x[0-9a-f]+/0xOFF/')" \
"blocks  bytes  stack  where
     1  72704  # libstdc++.so.6+0xOFF < call_init < call_init < _dl_init < _dl_start_user
     1   4096  # _IO_file_doallocate < __GI__IO_doallocbuf < _IO_doallocbuf < _IO_file_overflow < … < main
2 leaked blocks (76800 bytes) in 2 stacks" \
  "--no-default-suppressions: the pool (libstdc++ without symbols, under _dl_init) and the buffer"

assert_eq "$("$MPQ" leaks leak.db | ids)" \
"blocks  bytes  stack  where
     3  300 B  # leak_some < main
3 leaked blocks (300 B) in 1 stack
suppressed: 1 block (4.00 KiB) by the built-in list" "a real leak still shows"
assert_eq "$(COLUMNS=80 PAGER=cat script -qec "$MPQ leaks leak.db --callers" /dev/null | tr -d '\r' | ids)" \
"blocks  bytes  stack  where
     3  300 B  # leak_some < main
    leak_some (hello_stdio.c:13)
    main (hello_stdio.c:19)
3 leaked blocks (300 B) in 1 stack
suppressed: 1 block (4.00 KiB) by the built-in list" "80 columns, --callers"
assert_eq "$(COLUMNS=200 PAGER=cat script -qec "$MPQ leaks leak.db" /dev/null | tr -d '\r' | ids)" \
"blocks  bytes  stack  where
     3  300 B  # leak_some < main
3 leaked blocks (300 B) in 1 stack
suppressed: 1 block (4.00 KiB) by the built-in list" "200 columns"
"$MPQ" leaks leak.db --format csv >out.csv 2>err.txt
assert_eq "$(cut -d, -f1,2,5 out.csv)" "blocks,bytes,where
3,300,leak_some < main" "csv: the leak"
assert_eq "$(cat err.txt)" "suppressed: 1 block (4096 bytes) by the built-in list" "csv: the suppressed line on stderr, raw"
printf 'drop ^leak_some$\n' > mine.supp
assert_eq "$("$MPQ" leaks leak.db --suppressions mine.supp | tail -2)" \
"0 leaked blocks (0 B) in 0 stacks; ignored 1 stacks (3 blocks, 300 B) with 1 filters
suppressed: 1 block (4.00 KiB) by the built-in list" "the user's suppressions counted apart from the built-in list"
h=$("$MPQ" leaks --help)
assert_match "$h" "--no-default-suppressions" "leaks --help names --no-default-suppressions"
