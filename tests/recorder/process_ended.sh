# process.ended: how each process ended, as its last snapshot saw it: a
# return from main with its status ("return N", issue 40: it was "exit",
# the status unknown, since main's value reaches libc's exit by a call
# the recorder does not see), exit(N) called by the program, _exit, a
# fatal signal, exec; mpquery info says it. C and C++.
. "$(dirname "$0")/../lib/lib.sh"
cat > ex.c <<'C'
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
/* ex [r|e|_|k N]: returns N from main, exit(N), _exit(N), raise(N) */
int main(int argc, char **argv)
{
    void *volatile p = malloc(10); (void)p;
    int how = argc > 1 ? argv[1][0] : 'r', n = argc > 2 ? atoi(argv[2]) : 5;
    if (how == 'e') exit(n);
    if (how == '_') _exit(n);
    if (how == 'k') raise(n);
    return n;
}
C
cat > excc.cc <<'C'
#include <cstdlib>
#include <string>
static std::string kept(100, 'k');      // its destructor runs after main
int main(int argc, char **argv)
{
    std::string *s = new std::string(1000, 'x');
    delete s;
    if (argc > 2) std::exit(std::atoi(argv[2]));
    return argc > 1 ? std::atoi(argv[1]) : 0;
}
C
gcc -O2 -o ex ex.c || fail "cannot build ex"
g++ -O2 -o excc excc.cc || fail "cannot build excc"
ended() { q "$1" "SELECT ended FROM process ORDER BY id" | tr '\n' ' '; }
# tree_line DB: the process's line of mpquery info's process tree, without its pid
tree_line() { "$MPQ" info "$1" | awk '/^process tree/ { getline; sub(/^ *[0-9]+ /, ""); print; exit }'; }
check() {       # DB STATUS ENDED WORDS WHAT: the program's status, process.ended, mpquery info's words
    local rc=$?
    assert_eq "$rc|$(ended "$1")|$(tree_line "$1")" "$2|$3 |$4" "$5"
}
profile a.db ./ex 2>/dev/null; check a.db 5 "return 5" "ex: returned from main with status 5" "C: a return from main, its status"
profile r0.db ./ex r 0 2>/dev/null; check r0.db 0 "return 0" "ex: returned from main with status 0" "C: main returns 0"
profile r3.db ./ex r 3 2>/dev/null; check r3.db 3 "return 3" "ex: returned from main with status 3" "C: main returns 3"
profile b.db ./ex e 3 2>/dev/null; check b.db 3 "exit 3" "ex: exited with status 3" "C: exit(3)"
profile e5.db ./ex e 5 2>/dev/null; check e5.db 5 "exit 5" "ex: exited with status 5" "C: exit(5)"
profile u6.db ./ex _ 6 2>/dev/null; check u6.db 6 "_exit 6" "ex: _exit(6)" "C: _exit(6)"
profile k.db ./ex k 15 2>/dev/null; check k.db 143 "signal SIGTERM" "ex: killed by SIGTERM" "C: killed by SIGTERM"
profile c0.db ./excc 2>/dev/null; check c0.db 0 "return 0" "excc: returned from main with status 0" "C++: main returns 0"
profile c4.db ./excc 4 2>/dev/null; check c4.db 4 "return 4" "excc: returned from main with status 4" "C++: main returns 4"
profile c7.db ./excc 0 7 2>/dev/null; check c7.db 7 "exit 7" "excc: exited with status 7" "C++: std::exit(7)"
profile c.db $B/tests/fatal own >/dev/null 2>&1; assert_eq "$?|$(ended c.db)" "3|_exit 3 " "_exit(3) from a signal handler"
profile d.db $B/tests/fatal segv >/dev/null 2>&1; assert_eq "$?|$(ended d.db)" "139|signal SIGSEGV " "a fatal signal"
profile e.db sh -c 'exec ./ex e 4' 2>/dev/null; assert_eq "$?|$(ended e.db)" "4|exec exit 4 " "exec, then the new program's exit"
assert_match "$("$MPQ" info b.db)" "ended: exit 3" "mpquery info: how the process ended"
assert_match "$("$MPQ" info r3.db)" "ended: return 3" "mpquery info: how the process ended, a return from main"
# the stacks are the program's: no frame of the recorder's under main
assert_eq "$(q c0.db "SELECT DISTINCT f.function FROM stack_frames f JOIN stack_frames m ON m.stack = f.stack
    AND m.function = 'main' AND f.depth = m.depth + 1")" "__libc_start_call_main" "main's caller is libc's"
assert_eq "$(q c0.db "SELECT count(*) FROM stack_frames f JOIN frame fr ON fr.id = f.frame JOIN module m ON m.id = fr.module
    WHERE m.path LIKE '%libmallocprof%'")" 0 "no frame of libmallocprof.so"
