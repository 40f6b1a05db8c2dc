# Size histograms per stack: mpquery hist --stack ID (the stack_hist
# table). tests/progs/cheap_modes.c: grow's realloc makes one block of each
# class 16 .. 4096 from one stack; tagged_work's inner scope 200 x 70 bytes,
# 100 kept. tests/progs/threads_cross_free.c: thread k allocates 1000 x
# (k+1)*16 bytes from one stack and another thread frees them (the free
# counts in the freeing thread's table: the sum is what matters).
. "$(dirname "$0")/../lib/lib.sh"
. "$ROOT/tests/lib/fixtures.sh"
MP_QUIET=1 profile c.db $B/tests/cheap_modes || fail "cheap_modes failed"
stack_of() { q "$1" "SELECT DISTINCT s.stack FROM last_sample s JOIN stack_path sp USING (stack) WHERE $2"; }
grow=$(stack_of c.db "sp.leaf = 'grow'")
classes=lo,hi,ncalls,memtot,nlive,memlive
for lo in 16 32 64 128 256 512 1024 2048 4096; do classes+=$'\n'"$lo,$((2 * lo)),1,$lo,0,0"; done
assert_eq "$("$MPQ" hist c.db --stack "$grow" --format csv)" "$classes" "grow's stack: one block of each class (of its low bound), all freed"
inner=$(stack_of c.db "sp.path LIKE '%inner%'")
assert_eq "$("$MPQ" hist c.db --stack "$inner" --format json | tr -d '\n')" '{"rows": [ {"lo": 64, "hi": 128, "ncalls": 200, "memtot": 14000, "nlive": 100, "memlive": 7000}]}' \
    "the inner tag's stack: 200 of 70 bytes, 100 live (json)"
# rows only for the stacks with several classes: the others are their sample rows
assert_eq "$(q c.db "SELECT COUNT(DISTINCT stack), COUNT(*) FROM stack_hist")|$(q c.db "SELECT DISTINCT stack FROM stack_hist")" \
    "1|9|$grow" "stack_hist: only grow's stack, its 9 classes"
sum=0
for s in $(q c.db "SELECT DISTINCT stack FROM last_sample"); do
    n=$("$MPQ" hist c.db --stack "$s" --format csv | tail -n +2 | awk -F, '{ n += $3; b += $4 } END { print n "|" b }')
    sum=$(echo "$sum $n" | awk -F'[ |]' '{ split($1, a, "/"); print (a[1] + $2) "/" (a[2] + $3) }')
done
assert_eq "$sum" "$(q c.db "SELECT SUM(ncalls) || '/' || SUM(memtot) FROM last_sample")" \
    "every stack's classes (from stack_hist or its one class) add up to the stacks' calls and bytes"
# the tags mode: every tagged allocation counted exactly, no unwinding
MP_QUIET=1 MP_STACKS=tags profile t.db $B/tests/cheap_modes || fail "cheap_modes failed (tags)"
inner=$(stack_of t.db "sp.path = 'outer;inner'")
assert_eq "$("$MPQ" hist t.db --stack "$inner" --format csv | tail -n 1)" "64,128,200,14000,100,7000" "MP_STACKS=tags: the same"

MP_QUIET=1 profile x.db $B/tests/threads_cross_free || fail "threads_cross_free failed"
ta=$(stack_of x.db "sp.leaf = 'thread_alloc'")
assert_eq "$(echo "$ta" | wc -l)" 1 "one thread_alloc stack, four threads"
assert_eq "$("$MPQ" hist x.db --stack "$ta" --format csv)" "lo,hi,ncalls,memtot,nlive,memlive
16,32,1000,16000,0,0
32,64,2000,80000,0,0
64,128,1000,64000,0,0" "threads: 16, 32 and 48, 64 bytes, each freed by another thread"
tid=$(q x.db "SELECT th.tid FROM last_sample s JOIN thread th ON th.id = s.thread WHERE s.stack = $ta AND s.memtot = 64000")
assert_eq "$("$MPQ" hist x.db --stack "$ta" --thread "$tid" --format csv | tail -n +2)" "64,128,1000,64000,0,0" \
    "--thread: the blocks of the thread that allocated 64-byte ones"
# text: the bars
assert_match "$("$MPQ" hist x.db --stack "$ta" --by ncalls --bytes)" "\[32, 64\) +2000 +80000 +0 +0  #{40}" "text: the largest class has the full bar"

# errors, one line each
MP_QUIET=1 profile p.db $B/tests/peak_mix || fail "peak_mix failed"
expect_fail 2 "^mpquery: p.db: --stack: no per-stack histogram at the peak \(snapshot 3 of process [0-9]+\); select another snapshot$" \
    "$MPQ" hist p.db --stack 5 --snapshot peak
expect_fail 2 '^mpquery: p.db: no stack 99999$' "$MPQ" hist p.db --stack 99999
expect_fail 2 '^mpquery: hist: --stack x: a stack id' "$MPQ" hist p.db --stack x
expect_fail 2 '^mpquery: hist: the histogram is per process: --thread applies only with --stack' "$MPQ" hist p.db --thread 1
old_fixture 2
expect_fail 2 '^mpquery: v2.db: no per-stack histograms in this profile \(format version 2: recorded before them\)$' \
    "$MPQ" hist v2.db --stack 1
# --thread by name (tests/progs/tags_threads.c: worker-K makes K blocks of
# 10000 bytes from in_work; the stack's classes over the threads matched)
MP_QUIET=1 profile w.db $B/tests/tags_threads >/dev/null || fail "tags_threads failed"
work=$(stack_of w.db "sp.leaf = 'in_work'")
assert_eq "$("$MPQ" hist w.db --stack "$work" --thread 'worker-[12]' --format csv | tail -n +2)" "8192,16384,3,30000,3,30000" \
    "--thread 'worker-[12]': workers 1 and 2, 3 blocks of 10000 bytes"
assert_eq "$("$MPQ" hist w.db --stack "$work" --format csv | tail -n +2)" "8192,16384,10,100000,10,100000" "every thread: 10 blocks"
expect_fail 2 "^mpquery: hist: the histogram is per process: --thread applies only with --stack" "$MPQ" hist w.db --thread 'worker-.*'
