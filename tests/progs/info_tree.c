/* The process tree of tests/mpquery/info_tree.sh. The root starts its
 * children one at a time, each waited for, so their start order is fixed:
 *   1  calls exit(3)
 *   2  is killed by SIGTERM (the recorder writes a last snapshot)
 *   3  writes a snapshot (mp_snapshot), then is killed by SIGKILL: no
 *      final snapshot
 *   4  execs env, which execs this program as "info_tree execd": that
 *      image forks a child that calls _exit(0), then calls exit(0)
 * then returns 0 from main. Every image allocates (tree_alloc) first. */
#include "mallocprof.h"

#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile kept;

void tree_alloc(void)
{
    kept = malloc(100);
}

/* Runs child(arg) in a forked child and waits for it. */
static void run_child(void (*child)(const char *), const char *arg)
{
    pid_t pid = fork();
    if (pid < 0) exit(1);
    if (pid == 0) {
        tree_alloc();
        child(arg);
        _exit(1);
    }
    int status;
    waitpid(pid, &status, 0);
}

static void exit_3(const char *arg) { (void)arg; exit(3); }
static void killed(const char *arg) { (void)arg; raise(SIGTERM); }
static void quit_now(const char *arg) { (void)arg; _exit(0); }

static void killed_unseen(const char *arg)
{
    (void)arg;
    mp_snapshot("before SIGKILL");
    raise(SIGKILL);
}

static void exec_env(const char *self)
{
    execlp("env", "env", self, "execd", (char *)NULL);
}

int main(int argc, char **argv)
{
    tree_alloc();
    if (argc > 1 && !strcmp(argv[1], "execd")) {
        run_child(quit_now, NULL);
        exit(0);
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return 1;
    self[n] = '\0';
    run_child(exit_3, NULL);
    run_child(killed, NULL);
    run_child(killed_unseen, NULL);
    run_child(exec_env, self);
    return 0;
}
