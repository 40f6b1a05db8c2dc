# A thread's first allocation inside pthread_getattr_np (Rust's runtime,
# HotSpot) used to deadlock the recorder's thread init: it must complete,
# with exact counts, and the threads' stacks walked by the cfi unwinder.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/getattr_first
LD_PRELOAD=$LIB MP_OUT=a.db timeout 60 $P >out 2>err; rc=$?
assert_eq "$rc" 0 "exit status (124 = hung)"
assert_eq "$(cat out)" "ok" "stdout"
assert_eq "$(by_function a.db 'getattr_alloc')" "getattr_alloc|500|12000|500|0" "5 threads x 100 blocks of 24 bytes"
assert_eq "$(q a.db "SELECT count(DISTINCT thread) FROM last_sample s JOIN stack_path p ON p.stack = s.stack WHERE p.leaf = 'getattr_alloc'")" 5 "one row per thread"
assert_eq "$(q a.db "SELECT DISTINCT p.path FROM last_sample s JOIN stack_path p ON p.stack = s.stack WHERE p.leaf = 'getattr_alloc' ORDER BY 1")" \
"__clone3;start_thread;first_thing;getattr_alloc
_start;__libc_start_main;__libc_start_call_main;main;first_thing;getattr_alloc" "whole stacks, no frame of the recorder's thread start"
# the recorder's own block per pthread_create is not the program's (it was
# charged to main, the caller, as a 16-byte leak per thread)
assert_eq "$(q a.db "SELECT count(*) FROM last_sample s JOIN stack_path p ON p.stack = s.stack WHERE p.leaf = 'main'")" 0 "nothing allocated by main itself"
