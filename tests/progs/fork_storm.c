/* fork_storm N: a thread allocates and frees in a loop while the main thread
 * forks N children; each child runs child_work (5 x 50 bytes, leaked) and
 * leaves with _exit(0), which skips destructors. Exits 0 when every child
 * exited 0. Must never hang (run under timeout). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int stop;
static void *leak[5];

static void *churn(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        void *p[16];
        for (int i = 0; i < 16; i++) p[i] = malloc(32 + i);
        for (int i = 0; i < 16; i++) free(p[i]);
    }
    return NULL;
}

void child_work(void) { for (int i = 0; i < 5; i++) leak[i] = malloc(50); }

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100, bad = 0;
    pthread_t th;
    pthread_create(&th, NULL, churn, NULL);
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            child_work();
            _exit(0);
        }
        int status;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
            bad++;
    }
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    return bad != 0;
}
