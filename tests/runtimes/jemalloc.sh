# Another allocator preloaded (Debian's libjemalloc2). After libmallocprof.so
# in LD_PRELOAD, mallocprof records on top of it, exactly. Before it,
# jemalloc owns malloc and nothing can be recorded: the recorder says so
# once, naming the library and the order to use, instead of writing an
# empty profile in silence.
source "$(dirname "$0")/../lib/runtime.sh"
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
need jemalloc libjemalloc2 "$JE"
P=$B/tests/getattr_first
LD_PRELOAD=$LIB:$JE MP_OUT=a.db $P >out 2>err; rc=$?
assert_eq "$rc:$(cat out)" "0:ok" "mallocprof first: exit status and stdout"
assert_eq "$(by_function a.db getattr_alloc)" "getattr_alloc|500|12000|500|0" "mallocprof first: exact counts on jemalloc"
assert_eq "$(grep -c warning err)" 0 "mallocprof first: no warning"
LD_PRELOAD=$JE:$LIB MP_OUT=b.db $P >out 2>err; rc=$?
assert_eq "$rc:$(cat out)" "0:ok" "jemalloc first: exit status and stdout"
assert_eq "$(grep warning err)" "mallocprof: warning: malloc is defined by $JE, loaded before libmallocprof.so: nothing will be recorded; put libmallocprof.so first in LD_PRELOAD" "jemalloc first: one warning naming the library"
