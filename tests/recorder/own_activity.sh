# A profile holds the program's allocations and nothing else: with interval
# and API snapshots, a C program that frees all it allocates has no frees of
# unknown blocks (the recorder's environment array, libraries it would load
# with exit handlers), the recorder leaves no dlerror() behind, loads no
# library into the process (libstdc++ for demangling, libdebuginfod and its
# libcurl/OpenSSL even with DEBUGINFOD_URLS set), and writes no file but its
# database.
. "$(dirname "$0")/../lib/lib.sh"
P=$B/tests/own_activity
mkdir home
HOME=$T/home DEBUGINFOD_URLS=http://127.0.0.1:9 MP_INTERVAL=0.01 MP_OUT=a.db \
    strace -f -qq -e trace=connect,openat -o trace -E LD_PRELOAD=$LIB $P >out 2>err; rc=$?
assert_eq "$rc" 0 "exit status"
assert_eq "$(cat out)" "dlerror: none
done" "stdout: no dlerror of the recorder's"
assert_eq "$(q a.db "SELECT t.nfree_unknown FROM totals t JOIN snapshot s ON s.id = t.snapshot WHERE t.thread = 0 AND s.reason = 'exit'")" 0 "no frees of unknown blocks"
assert_eq "$(by_function a.db own_alloc)" "own_alloc|5000|500000|5000|0" "exact counts"
assert_eq "$(q a.db "SELECT count(*) FROM snapshot WHERE reason = 'api'")" 5 "5 API snapshots"
assert_eq "$(q a.db "SELECT DISTINCT function FROM stack_frames WHERE function LIKE '%mangled%'")" "_Z7mangledv" "a C program's mangled name is stored as it is (mpquery demangles)"
assert_eq "$(grep -c 'connect(' trace)" 0 "no connect()"
assert_eq "$(grep -E 'libstdc\+\+|libdebuginfod|libcurl|libssl|libcrypto' trace | grep -vc ENOENT)" 0 "no library loaded for the recorder"
assert_eq "$(grep -E 'O_CREAT|O_WRONLY|O_RDWR' trace | grep -v ENOENT | grep -v "$T/a.db" | sed 's/^[0-9]* *//')" "" "no file written but the database"
assert_eq "$(ls -A home)" "" "nothing under \$HOME"
