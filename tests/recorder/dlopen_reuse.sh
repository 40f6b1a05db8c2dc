# dlopen/dlclose of two libraries of the same layout, alternately, so that
# each is mapped where the other was (same return addresses), with interval
# snapshots: no snapshot lost, alpha's frames named alpha and beta's beta,
# exact counts, each module with its absolute path and build-id although
# both were loaded by a relative name.
. "$(dirname "$0")/../lib/lib.sh"
cat > a.c <<'C'
#include <stdlib.h>
__attribute__((noinline)) void *alpha_alloc(int n) { void *p = malloc(n); __asm__ volatile("" ::: "memory"); return p; }
C
sed 's/alpha_alloc/beta_alloc/' a.c > b.c
gcc -O0 -g -fPIC -shared -Wl,--build-id -o liba.so a.c && gcc -O0 -g -fPIC -shared -Wl,--build-id -o libb.so b.c || fail "cannot build the libraries"
P=$B/tests/dl_reuse
MP_INTERVAL=0.001 LD_PRELOAD=$LIB MP_OUT=a.db $P 30 >out 2>err; rc=$?
assert_eq "$rc" 0 "exit status"
assert_eq "$(cat out)" "ok" "stdout"
assert_eq "$(grep -c 'snapshot lost' err)" 0 "no snapshot lost"
assert_eq "$(by_function a.db '*_alloc')" "alpha_alloc|300|30000|300|0
beta_alloc|300|60000|300|0" "each library's counts under its own name"
assert_eq "$(q a.db "SELECT DISTINCT function || ' ' || module FROM stack_frames WHERE function GLOB '*_alloc' ORDER BY 1")" \
"alpha_alloc $T/liba.so
beta_alloc $T/libb.so" "absolute module paths"
for l in a b; do
    bid=$(readelf -n lib$l.so | sed -n 's/.*Build ID: //p')
    assert_eq "$(q a.db "SELECT DISTINCT build_id FROM module WHERE path = '$T/lib$l.so'")" "$bid" "lib$l.so: build-id"
done
assert_eq "$(q a.db "SELECT count(*) FROM (SELECT snapshot, stack, thread FROM sample GROUP BY 1, 2, 3 HAVING count(*) > 1)")" 0 "one row per (snapshot, stack, thread)"
assert_eq "$(q a.db "SELECT count(DISTINCT address) FROM (SELECT f.module || '+' || f.offset AS address FROM stack_frames f WHERE f.function GLOB '*_alloc')")" 2 "one frame per function"
# LD_LIBRARY_PATH=. : a needed library found by a relative directory is named too
cat > main.c <<'C'
#include <stdlib.h>
void *alpha_alloc(int n);
int main(void) { for (int i = 0; i < 7; i++) free(alpha_alloc(50)); return 0; }
C
gcc -O0 -g -o linked main.c -L. -la || fail "cannot build the linked program"
LD_LIBRARY_PATH=. LD_PRELOAD=$LIB MP_OUT=b.db ./linked 2>/dev/null || fail "linked program failed"
assert_eq "$(by_function b.db 'alpha_alloc')" "alpha_alloc|7|350|7|0" "LD_LIBRARY_PATH=.: counts"
assert_eq "$(q b.db "SELECT DISTINCT module FROM stack_frames WHERE function = 'alpha_alloc'")" "$T/liba.so" "LD_LIBRARY_PATH=.: module path"
