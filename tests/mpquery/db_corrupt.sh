#!/bin/bash
# Values and shapes no recorder writes are a corrupt file, refused on load
# with one line naming the file, the table and the row (exit 2): counters
# below 0 or above 2^62 (near 2^63 their sums overflowed: UBSan aborted, the
# release build printed wrapped totals), more frees than allocations, more
# bytes live than allocated, in samples, totals, snapshots, hist and
# stack_hist; stacks deeper than the recorder writes (tree --functions of a
# 100,000-deep one wrote 5.8 GB). Values up to 2^62 load, and sums of
# many saturate at 2^63-1 instead of wrapping (tests/mpquery/asan.sh runs
# this under UBSan).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

fixture basic >/dev/null
# variant DB SQL: basic.db changed by SQL
variant() {
    cp basic.db "$1" && sqlite3 "$1" "$2" || fail "cannot derive $1"
    NO_PROFILE_CHECK="$NO_PROFILE_CHECK $1"     # broken on purpose
}
R='out of range \(0 to 2\^62\)'

variant neg.db "UPDATE sample SET ncalls = -5 WHERE stack = 8 AND thread = 1"
for cmd in top leaks hist fold "top --functions"; do
    expect_fail 2 "^mpquery: neg\.db: corrupt profile \(table sample, row snapshot 1 stack 8 thread 1: ncalls -5 is $R\)$" \
        "$MPQ" $cmd neg.db
done
variant near.db "UPDATE sample SET memtot = 9223372036854775000, memlive = 0 WHERE stack = 13"
for cmd in top leaks hist fold; do
    expect_fail 2 "^mpquery: near\.db: corrupt profile \(table sample, row snapshot 1 stack 13 thread 1: memtot 9223372036854775000 is $R\)$" \
        "$MPQ" $cmd near.db
done
variant over.db "UPDATE sample SET time = 4611686018427387905 WHERE stack = 5"
expect_fail 2 "^mpquery: over\.db: corrupt profile \(table sample, row snapshot 1 stack 5 thread 1: time 4611686018427387905 is $R\)$" \
    "$MPQ" fold over.db
variant nfree.db "UPDATE sample SET nfree = 11 WHERE stack = 5"
expect_fail 2 '^mpquery: nfree\.db: corrupt profile \(table sample, row snapshot 1 stack 5 thread 1: nfree 11 > ncalls 10\)$' \
    "$MPQ" leaks nfree.db
variant memlive.db "UPDATE sample SET memlive = 6000 WHERE stack = 8 AND thread = 1"
expect_fail 2 '^mpquery: memlive\.db: corrupt profile \(table sample, row snapshot 1 stack 8 thread 1: memlive 6000 > memtot 5000\)$' \
    "$MPQ" top memlive.db
variant tot.db "UPDATE totals SET memlive = -1 WHERE thread = 0"
expect_fail 2 "^mpquery: tot\.db: corrupt profile \(table totals, row snapshot 1 thread 0: memlive -1 is $R\)$" "$MPQ" info tot.db
variant nostack.db "UPDATE totals SET nfree_unknown = 9223372036854775807 WHERE thread = 2"
expect_fail 2 "^mpquery: nostack\.db: corrupt profile \(table totals, row snapshot 1 thread 2: nfree_unknown 9223372036854775807 is $R\)$" \
    "$MPQ" top nostack.db
variant pmem.db "UPDATE snapshot SET profiler_memory = -1"
expect_fail 2 "^mpquery: pmem\.db: corrupt profile \(table snapshot, row 1: profiler_memory -1 is $R\)$" "$MPQ" info pmem.db
# several files: the one at fault is named (each is loaded to be merged)
expect_fail 2 "^mpquery: neg\.db: corrupt profile \(table sample, row snapshot 1 stack 8 thread 1: ncalls -5 is $R\)$" \
    "$MPQ" top basic.db neg.db
# hist and stack_hist, read by hist alone
variant hist.db "INSERT INTO hist VALUES (1, 16, 9000000000000000000, 9000000000000000000, 0, 0)"
expect_fail 2 "^mpquery: hist\.db: corrupt profile \(table hist, row snapshot 1 lo 16: ncalls 9000000000000000000 is $R\)$" \
    "$MPQ" hist hist.db
variant shist.db "INSERT INTO stack_hist VALUES (1, 8, 1, 16, 5, 100, 6, 50)"
expect_fail 2 '^mpquery: shist\.db: corrupt profile \(table stack_hist, row stack 8 thread 1 lo 16, at snapshot 1: nlive 6 > ncalls 5\)$' \
    "$MPQ" hist shist.db --stack 8
# a histogram row of a snapshot the file does not have is refused as a
# sample's is (hist counted a dangling stack_hist row before it was loaded)
variant dhist.db "INSERT INTO hist VALUES (77, 16, 1, 10, 0, 0)"
expect_fail 2 '^mpquery: dhist\.db: inconsistent profile \(hist row refers to missing snapshot 77\)$' "$MPQ" hist dhist.db
variant dshist.db "INSERT INTO stack_hist VALUES (77, 8, 1, 16, 1, 10, 0, 0)"
expect_fail 2 '^mpquery: dshist\.db: inconsistent profile \(stack_hist row refers to missing snapshot 77\)$' \
    "$MPQ" hist dshist.db --stack 8

# up to 2^62 a value loads; sums of several saturate at 2^63-1: B's two
# rows (threads 1 and 2) and every total, where they wrapped to -2^63
E=4611686018427387904
variant max.db "UPDATE sample SET ncalls = $E, memtot = $E, nfree = $E / 2, memlive = $E, maxlive = $E;
                UPDATE totals SET ncalls = $E, memtot = $E, nfree = 0, memlive = $E, maxlive = $E;
                INSERT INTO hist VALUES (1, 16, $E, $E, $E, $E), (1, 17, $E, $E, 0, 0)"
S=9223372036854775807
assert_eq "$("$MPQ" fold max.db --no-default-rules --by memtot | sort)" \
"__libc_start_main;main;app+0x999;malloc $E
__libc_start_main;main;foo(int);malloc $E
__libc_start_main;main;load;helper;malloc $E
__libc_start_main;main;parse(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&);operator new(unsigned long);malloc $S
__libc_start_main;main;parse(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&);parse(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&);operator new(unsigned long);malloc $E
__libc_start_main;main;std::vector<int, std::allocator<int> >::push_back(int const&);operator new(unsigned long);malloc $E" \
    "fold: one row 2^62, B's two rows 2^63-1"
assert_eq "$("$MPQ" leaks max.db --format csv | tail -n +2 | cut -d, -f1-3 | sort)" \
"2305843009213693952,$E,11
2305843009213693952,$E,13
2305843009213693952,$E,15
2305843009213693952,$E,18
2305843009213693952,$E,5
4611686018427387904,$S,8" "leaks: blocks and bytes per stack"
assert_eq "$("$MPQ" leaks max.db --bytes | tail -n 1 | cut -d' ' -f1-6)" "$S leaked blocks ($S bytes) in" "leaks: the total saturates"
assert_eq "$("$MPQ" hist max.db --format csv)" "lo,hi,ncalls,memtot,nlive,memlive
16,32,$S,$S,$E,$E" "hist: two classes of one bin summed, saturated"
cp max.db max2.db && sqlite3 max2.db "UPDATE run SET token = 'tok2'" || fail "cannot derive max2.db"
NO_PROFILE_CHECK="$NO_PROFILE_CHECK max2.db"
assert_eq "$("$MPQ" top max.db max2.db --format csv --by ncalls | sed -n 2p | cut -d, -f1-4,8)" "$S,$S,$E,$E,5" \
    "top of two files: A's two rows, saturated where they add up beyond 2^63-1"

# stacks: the recorder writes at most MP_DEPTH (1024) addresses of 32 inline
# levels, the [truncated] marker and 16 tags: 32785 frames; one more is corrupt
# deep DB N: one stack of N frames, each its own function
deep() {
    { cat "$ROOT/schema/profile.sql"; echo "$STACK_IN"; cat <<EOF
INSERT INTO run VALUES (1, 'deep', 1000.0);
INSERT INTO process(id, run, pid, ppid, exe, cmdline, host, start_time, end_time, settings)
    VALUES (1, 1, 4242, 1, '/usr/bin/app', 'app', 'h', 1000.0, 1001.0, 'MP_DEPTH=1024');
INSERT INTO thread VALUES (1, 1, 1, 4242, 'main');
INSERT INTO module VALUES (1, '/usr/bin/app', '');
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $2)
    INSERT INTO function SELECT i, 'f' || i FROM c;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $2)
    INSERT INTO frame SELECT i, 1, 16 * i, 0, i, NULL, 0 FROM c;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $2)
    INSERT INTO stack SELECT i, i - 1, i FROM c;
INSERT INTO snapshot VALUES (1, 1, 1, 1001.0, 'exit', '', 0);
INSERT INTO sample(snapshot, stack, thread, ncalls, memtot, nfree, memlive, maxlive) VALUES (1, $2, 1, 1, 100, 0, 100, 100);
INSERT INTO totals VALUES (1, 0, 1, 100, 0, 100, 100, 0, 0, 0);
EOF
    echo "$STACK_OUT"; } | sqlite3 -batch "$1" || fail "cannot build $1"
    NO_PROFILE_CHECK="$NO_PROFILE_CHECK $1"
}
deep max_depth.db 32785
deep too_deep.db 32786
assert_eq "$("$MPQ" fold max_depth.db --no-default-rules | tr -cd ';' | wc -c)" 32784 "32785 frames: the deepest the recorder writes, read"
for cmd in "tree --functions" top fold; do
    expect_fail 2 '^mpquery: too_deep\.db: corrupt profile \(table stack, row 32786: 32786 frames deep, the recorder writes at most 32785\)$' \
        timeout 60 "$MPQ" $cmd too_deep.db
done
