/* Memory over time (tests/mpquery/timeline.sh): the parent holds 1000 x
 * 1000 bytes (grow_a; snapshot "one"), then 2000 x 1000 more (grow_b;
 * snapshot "two"); its child, forked then, holds 500 x 2000 bytes
 * (child_work; snapshot "child") and exits; the parent waits, frees
 * grow_a's blocks and exits. No stdio before the end. */
#include "mallocprof.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *a[1000], *b[2000], *c[500];

__attribute__((noinline)) void grow_a(void) { for (int i = 0; i < 1000; i++) a[i] = malloc(1000); }
__attribute__((noinline)) void grow_b(void) { for (int i = 0; i < 2000; i++) b[i] = malloc(1000); }
__attribute__((noinline)) void child_work(void) { for (int i = 0; i < 500; i++) c[i] = malloc(2000); }

int main(void)
{
    grow_a();
    mp_snapshot("one");
    grow_b();
    mp_snapshot("two");
    pid_t pid = fork();
    if (pid == 0) {
        child_work();
        mp_snapshot("child");
        _exit(0);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return 1;
    for (int i = 0; i < 1000; i++) free(a[i]);
    return 0;
}
