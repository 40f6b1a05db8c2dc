/* Children made without fork (tests/recorder/process_clone.sh): the raw
 * clone system call (5 blocks of 1000 bytes, exit 0), clone3 (5 of 2000,
 * exit 0) and libc's clone() on a stack of its own (5 of 3000, fn returns
 * 7), one after the other, none with CLONE_VM; each child's status
 * printed. */
#define _GNU_SOURCE
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char stack[256 << 10] __attribute__((aligned(16)));

static void allocate(size_t size)
{
    for (int i = 0; i < 5; i++) {
        char *volatile p = malloc(size);
        memset(p, 1, size);
    }
}

static int clone_fn(void *arg)
{
    (void)arg;
    allocate(3000);
    return 7;
}

static void report(const char *how, long pid)
{
    int st;
    if (pid <= 0 || waitpid((pid_t)pid, &st, 0) != pid) printf("%s: failed\n", how);
    else printf("%s: status %d\n", how, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    fflush(stdout);     /* not in the next child's copy of the buffer */
}

int main(void)
{
    long pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) allocate(1000), exit(0);
    report("clone", pid);
    struct clone_args a;
    memset(&a, 0, sizeof a);
    a.exit_signal = SIGCHLD;
    pid = syscall(SYS_clone3, &a, sizeof a);
    if (pid == 0) allocate(2000), exit(0);
    report("clone3", pid);
    report("libc clone", clone(clone_fn, stack + sizeof stack, SIGCHLD, NULL));
    return 0;
}
