# mpquery leaks --cold[=N]: the stacks whose live blocks stayed unwritten
# for N snapshots or more (coldage >= N, default 3), by cold bytes, on the
# hand-computed fixture tests/lib/fixtures/maps.sql (MP_COLD=1): leak_buf
# (cold for 3 snapshots in one thread, 1 in another: coldage 3) is listed,
# the cache rewritten now and then (cache_fill, coldage 1) only from N = 1;
# text at 80 and 200 columns, csv, json, --snapshot, filters, --callers; a
# profile recorded without MP_COLD=1 is refused (exit 2), as are bad N.
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"
fixture maps >/dev/null
fixture basic >/dev/null
tty() { COLUMNS=$1 PAGER=cat script -qc "$2" /dev/null | tr -d '\r'; }

assert_eq "$(tty 80 "$MPQ leaks maps.db --cold")" \
" memcold  coldage   memlive  stack  where
1.00 MiB        3  1.00 MiB  7      leak_buf < main
1 stack cold for 3 snapshots or more: 1.00 MiB cold of 1.00 MiB live" \
    "80 columns: the untouched buffer, not the cache"
assert_eq "$(tty 200 "$MPQ leaks maps.db --cold=1 --bytes")" \
"memcold  coldage  memlive  stack  where
1052672        3  1052672  7      leak_buf < main
 204800        1   409600  6      cache_fill < main
2 stacks cold for 1 snapshot or more: 1257472 bytes cold of 1462272 bytes live" \
    "200 columns, --cold=1: the cache too, by memcold"
assert_eq "$("$MPQ" leaks maps.db --cold=3)" "$("$MPQ" leaks maps.db --cold)" "N is 3 by default"
assert_eq "$("$MPQ" leaks maps.db --cold --format csv)" "memcold,coldage,memlive,stack,stacks,where
1052672,3,1052672,7,1,leak_buf < main" "csv"
assert_eq "$("$MPQ" leaks maps.db --cold=1 --format json)" \
'{"summary": {"stacks": 2, "rows": 2, "snapshots": 1, "memcold": 1257472, "memlive": 1462272, "ignored_stacks": 0, "ignored_blocks": 0, "ignored_bytes": 0, "filters": 0, "suppressed_stacks": 0, "suppressed_blocks": 0, "suppressed_bytes": 0}, "cold": [
 {"stack": 7, "memcold": 1052672, "coldage": 3, "memlive": 1052672, "frames": ["leak_buf", "main"]},
 {"stack": 6, "memcold": 204800, "coldage": 1, "memlive": 409600, "frames": ["cache_fill", "main"]}
]}' "json"
assert_eq "$("$MPQ" leaks maps.db --cold=4)" "0 stacks cold for 4 snapshots or more: 0 B cold of 0 B live" \
    "nothing cold for 4 snapshots: the summary alone (exit 0)"
assert_eq "$("$MPQ" leaks maps.db --cold=1 --snapshot 2)" \
" memcold  coldage   memlive  stack  where
1.00 MiB        1  1.00 MiB  7      leak_buf < main
1 stack cold for 1 snapshot or more: 1.00 MiB cold of 1.00 MiB live" "--snapshot 2: as it was then"
assert_eq "$("$MPQ" leaks maps.db --cold=1 --exclude leak_buf)" \
"memcold  coldage  memlive  stack  where
200 KiB        1  400 KiB  6      cache_fill < main
1 stack cold for 1 snapshot or more: 200 KiB cold of 400 KiB live; ignored 1 stacks (2 blocks, 1.00 MiB) with 1 filters" \
    "filters leave stacks out, said as for leaks"
assert_eq "$("$MPQ" leaks maps.db --cold --callers)" \
" memcold  coldage   memlive  stack  where
1.00 MiB        3  1.00 MiB  7      leak_buf < main
    leak_buf [app]
    main [app]
1 stack cold for 3 snapshots or more: 1.00 MiB cold of 1.00 MiB live" "--callers"
assert_eq "$("$MPQ" leaks maps.db)" \
"blocks     bytes  stack  where
     2  1.00 MiB  7      leak_buf < main
   100   400 KiB  6      cache_fill < main
102 leaked blocks (1.39 MiB) in 2 stacks" "without --cold: the leaks, mapping stacks aside (no live blocks)"

# recorded with MP_COLD=1 but nothing cold: an empty list, not an error
fixture maps warm.db >/dev/null
q warm.db "UPDATE sample SET memcold = 0, coldage = 0"
assert_eq "$("$MPQ" leaks warm.db --cold)" "0 stacks cold for 3 snapshots or more: 0 B cold of 0 B live" \
    "MP_COLD=1 and nothing cold: the summary"
expect_fail 2 '^mpquery: basic.db: recorded without MP_COLD=1: no cold blocks to list$' "$MPQ" leaks basic.db --cold
q warm.db "UPDATE process SET settings = 'MP_INTERVAL=1'"
expect_fail 2 '^mpquery: warm.db: recorded without MP_COLD=1: no cold blocks to list$' "$MPQ" leaks warm.db --cold=2
expect_fail 2 "^mpquery: leaks: bad value '0' for --cold \(expected a count of snapshots >= 1\) \(see mpquery leaks --help\)$" \
    "$MPQ" leaks maps.db --cold=0
expect_fail 2 "^mpquery: leaks: bad value 'x' for --cold \(expected a count of snapshots >= 1\)" "$MPQ" leaks maps.db --cold=x
assert_match "$("$MPQ" leaks --help)" "--cold\[=N\] +instead, the stacks whose live blocks stayed unwritten for" "--help: --cold[=N]"
echo PASS
