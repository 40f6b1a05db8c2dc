/* fork_bigmap N: keeps N blocks of 32 bytes live (the pointer map's tables
 * grow to hold them), then forks; the child allocates 10 blocks of 100
 * bytes (kept) and leaves by exit(); the parent waits, prints its own
 * page faults from the fork on and the child's (minor: copies on write,
 * first touches) and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

void *keep[10];

static __attribute__((noinline)) void child_work(void)
{
    for (int i = 0; i < 10; i++) keep[i] = malloc(100);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 300000;
    void **blocks = malloc((size_t)n * sizeof *blocks);
    if (!blocks) return 2;
    for (long i = 0; i < n; i++) blocks[i] = malloc(32);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    pid_t pid = fork();
    if (pid == 0) {
        child_work();
        exit(0);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) return 1;
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    getrusage(RUSAGE_SELF, &after);
    printf("page faults: the parent's from the fork on %ld, the child's %ld\n", after.ru_minflt - before.ru_minflt, ru.ru_minflt);
    return 0;
}
