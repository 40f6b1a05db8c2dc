# Every MP_* variable with a bad value: one warning line naming it and the
# default used; the program runs on, unchanged.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/alloc_functions
check() {   # VAR VALUE DEFAULT
    env "$1=$2" LD_PRELOAD=$LIB MP_OUT=${4:-$T/x.db} $P >out 2>err; rc=$?
    assert_eq "$rc" 7 "$1=$2: exit status"
    assert_eq "$(grep -c warning err)" 1 "$1=$2: one warning"
    assert_match "$(grep warning err)" "^mallocprof: warning: $1=$2 is not valid .*; using the default $3\$" "$1=$2: names the variable and default"
}
check MP_INTERVAL abc 0
check MP_INTERVAL -1 0
check MP_DEPTH 0 256
check MP_DEPTH 99999 256
check MP_THRESHOLD 12x 0
check MP_SAMPLE -5 0
check MP_SAMPLE 1Q 0
check MP_STACKS frames unwind
check MP_ENABLED maybe 1
check MP_SIGNAL NOPE '\(none\)'
check MP_SIGNAL 9 '\(none\)'
check MP_UNWIND dwarf cfi
check MP_MAX_MEMORY 1K 4G
check MP_FATAL_TIMEOUT 0 10
check MP_FINAL sometimes 1
check MP_QUIET loud 0
check MP_NEAR_LIMIT 100 80,90,95
check MP_NEAR_LIMIT 80,80 80,90,95
check MP_NEAR_LIMIT 80, 80,90,95
check MP_NEAR_LIMIT 1,2,3,4,5,6,7,8,9 80,90,95
assert_eq "$(q x.db 'SELECT ncalls FROM process_totals ORDER BY process DESC LIMIT 1')" 1162 "defaults in force"
assert_eq "$(q x.db "SELECT settings FROM process ORDER BY id DESC LIMIT 1")" \
  "MP_INTERVAL=0 MP_TICK=0.01 MP_DEPTH=256 MP_THRESHOLD=0 MP_SAMPLE=0 MP_STACKS=unwind MP_ENABLED=1 MP_SIGNAL=none MP_UNWIND=cfi MP_MAX_MEMORY=4G MP_DEBUGINFO_PATH=:.debug:/usr/lib/debug MP_DEBUGINFO_CACHE=1 MP_FATAL_TIMEOUT=10 MP_FINAL=1 MP_SYNC=0 MP_QUIET=0 MP_TIME=0 MP_MMAP=1 MP_LEDGER=1 MP_COLD=0 MP_PYTHON=1 MP_NEAR_LIMIT=80,90,95" "settings recorded"
