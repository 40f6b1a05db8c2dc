/* A process tree for mpquery record --pid (tests/recorder/attach_fork.sh):
 * on a line "worker" on stdin the process forks a worker that forks
 * children in a loop (each allocates 5 x 50 bytes in child_work and
 * leaves with _exit(0)) and prints "forks N" every 0.5 s, N the children
 * made in that time, and the CPU time they and it took per child in
 * microseconds ("forks 120 350"), until its parent is gone; on a line "fork" the
 * process itself forks one such child. Exits 0 at the end of stdin, the
 * worker killed first. Never preloaded: attached to. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

static void *leak[5];

__attribute__((noinline)) void child_work(void)
{
    for (int i = 0; i < 5; i++) leak[i] = malloc(50);
}

static void one_child(void)
{
    pid_t c = fork();
    if (c == 0) {
        child_work();
        _exit(0);
    }
    if (c > 0) waitpid(c, NULL, 0);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of the process and its children waited for, in seconds */
static double cpu(void)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    return self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec + kids.ru_stime.tv_sec
           + (self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) / 1e6;
}

static void worker(pid_t parent)
{
    double t = now(), c = cpu();
    long n = 0;
    while (getppid() == parent) {
        one_child();
        n++;
        if (now() - t >= 0.5) {
            double c2 = cpu();
            printf("forks %ld %.0f\n", n, (c2 - c) * 1e6 / n);
            fflush(stdout);
            n = 0;
            t = now();
            c = c2;
        }
    }
    _exit(0);
}

int main(void)
{
    char line[64];
    pid_t w = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        if (!strcmp(line, "worker\n") && !w) {
            pid_t self = getpid();
            if ((w = fork()) == 0) worker(self);
        } else if (!strcmp(line, "fork\n")) {
            one_child();
        }
    }
    if (w > 0) {
        kill(w, SIGKILL);
        waitpid(w, NULL, 0);
    }
    return 0;
}
