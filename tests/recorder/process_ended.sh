# process.ended: how each process ended, as its last snapshot saw it: a
# return from main ("exit": its status reaches libc's exit directly), exit(N)
# called by the program, _exit, a fatal signal, exec; mpquery info says it.
. "$(dirname "$0")/../lib/lib.sh"
cat > ex.c <<'C'
#include <stdlib.h>
int main(int argc, char **argv) { void *volatile p = malloc(10); (void)p; if (argc > 1) exit(atoi(argv[1])); return 5; }
C
gcc -O2 -o ex ex.c || fail "cannot build ex"
ended() { q "$1" "SELECT ended FROM process ORDER BY id" | tr '\n' ' '; }
profile a.db ./ex 2>/dev/null; assert_eq "$?|$(ended a.db)" "5|exit " "a return from main: exit (status unknown to the recorder)"
profile b.db ./ex 3 2>/dev/null; assert_eq "$?|$(ended b.db)" "3|exit 3 " "exit(3)"
profile c.db $B/tests/fatal own >/dev/null 2>&1; assert_eq "$?|$(ended c.db)" "3|_exit 3 " "_exit(3) from a signal handler"
profile d.db $B/tests/fatal segv >/dev/null 2>&1; assert_eq "$?|$(ended d.db)" "139|signal SIGSEGV " "a fatal signal"
profile e.db sh -c 'exec ./ex 4' 2>/dev/null; assert_eq "$?|$(ended e.db)" "4|exec exit 4 " "exec, then the new program's exit"
assert_match "$("$MPQ" info b.db)" "ended: exit 3" "mpquery info: how the process ended"
