#!/bin/bash
# Hostile databases: truncated at many sizes and randomly corrupted copies
# of a real-size profile. mpquery answers (exit 0) or reports one line
# (exit 2); it never crashes, hangs or writes.
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

# ~3000 stacks over 120 functions: enough pages for corruption to hit data
python3 - > stacks.txt <<'PY'
import random
random.seed(7)
names = ["ns%d::func%d(std::vector<int, std::allocator<int> > const&)" % (i % 7, i) for i in range(120)]
for i in range(3000):
    depth = random.randint(2, 12)
    print("%d,%d,%d,%d,%d\t" % (i + 1, 100 * (i + 1), i // 2, 50 * i, 60 * i) + "main\t" + "\t".join(random.choice(names) for _ in range(depth)))
PY
stacks_db big.db < stacks.txt
size=$(stat -c %s big.db)
echo "# profile of $size bytes"
"$MPQ" top big.db >/dev/null || fail "the intact profile does not load"

check() {   # check WHAT DB: exit 0 or 2, one stderr line when 2, no signal
    local what=$1 db=$2 rc
    for cmd in "top $db" "fold $db" "info $db" "top $db --functions" "diff $db big.db"; do
        timeout 20 "$MPQ" $cmd >/dev/null 2>err.txt; rc=$?
        [ $rc = 0 ] || [ $rc = 2 ] || fail "$what: mpquery $cmd: exit $rc: $(head -c 300 err.txt)"
        [ $rc = 0 ] || [ "$(wc -l < err.txt)" = 1 ] || fail "$what: mpquery $cmd: stderr not one line: $(head -c 300 err.txt)"
    done
}

for n in 100 1024 4096 5000 16384 $((size / 3)) $((size / 2)) $((size - 4096)) $((size - 1)); do
    head -c $n big.db > cut.db
    check "truncated to $n bytes" cut.db
done
echo "  ok: truncated copies: clean errors"

RANDOM=42
NO_PROFILE_CHECK="$NO_PROFILE_CHECK bad.db cut.db hdr.db"   # broken on purpose
for i in $(seq 1 40); do
    cp big.db bad.db
    off=$(( (RANDOM * 32768 + RANDOM) % size ))
    len=$(( 1 + RANDOM % 64 ))
    head -c $len /dev/urandom | dd of=bad.db bs=1 seek=$off conv=notrunc status=none
    check "corrupted at $off ($len bytes)" bad.db
done
echo "  ok: 40 randomly corrupted copies: answers or clean errors"

# corruption of the header page in a way SQLite notices
cp big.db hdr.db
printf '\xff\xff' | dd of=hdr.db bs=1 seek=16 conv=notrunc status=none
expect_fail 2 '^mpquery: hdr.db: not a mallocprof profile \(' "$MPQ" top hdr.db
