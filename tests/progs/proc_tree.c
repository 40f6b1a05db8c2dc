/* A tree of NODES processes: node 0 is the root, node i's parent is node
 * (i - 1) / 3. Node i > 0 is started in one of three ways, by i % 3:
 *   0  fork: the forked child runs node i in the same image
 *   1  fork + exec of this program ("proc_tree node I READY GO"); the forked
 *      image first calls tree_alloc(10) from pre_exec, so it has a profile
 *      of its own (a process row whose last snapshot is the exec one)
 *   2  posix_spawn of this program (vfork-like: no image before the exec)
 * Every node prints "PID I node" (a pre-exec image "PID I pre-exec") with
 * one write to stdout and calls tree_alloc(100 + i): 100 + i blocks of 64
 * bytes, the first half freed. The leaves (nodes without children) then
 * write a byte to the READY pipe and block on the GO pipe, whose only
 * writer, the root, closes it once every leaf is ready: the leaves exit at
 * the same moment. Other nodes wait for their children; a node exits 0
 * when all of its subtree did. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NODES 50
#define FANOUT 3

extern char **environ;
static int ready_w, go_r;           /* inherited by every process */
static int ready_r = -1, go_w = -1; /* the root's only (close-on-exec) */

static void *blocks[NODES + 100];

void tree_alloc(int n)
{
    for (int i = 0; i < n; i++) blocks[i] = malloc(64);
    for (int i = 0; i < n / 2; i++) free(blocks[i]);
}

static void say(int index, const char *what)
{
    char line[64];
    int n = snprintf(line, sizeof line, "%d %d %s\n", (int)getpid(), index, what);
    if (write(1, line, (size_t)n) != n) _exit(3);
}

void pre_exec(int index)
{
    say(index, "pre-exec");
    tree_alloc(10);
}

static int node_run(int index);

/* Starts node `index` as a child; returns its pid or -1. */
static pid_t start_child(int index)
{
    char idx[16], rw[16], gr[16];
    snprintf(idx, sizeof idx, "%d", index);
    snprintf(rw, sizeof rw, "%d", ready_w);
    snprintf(gr, sizeof gr, "%d", go_r);
    char *argv[] = { "proc_tree", "node", idx, rw, gr, NULL };
    pid_t pid;
    if (index % 3 == 2)
        return posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ) ? -1 : pid;
    pid = fork();
    if (pid != 0) return pid;
    if (ready_r >= 0) close(ready_r);       /* a child of the root */
    if (go_w >= 0) close(go_w);
    ready_r = go_w = -1;
    if (index % 3 == 0) exit(node_run(index));
    pre_exec(index);
    execv("/proc/self/exe", argv);
    _exit(127);
}

static int leaves(void)
{
    int n = 0;
    for (int i = 0; i < NODES; i++) n += FANOUT * i + 1 >= NODES;
    return n;
}

static int node_run(int index)
{
    say(index, "node");
    tree_alloc(100 + index);
    pid_t kids[FANOUT];
    int nkids = 0, rc = 0;
    for (int c = FANOUT * index + 1; c <= FANOUT * index + FANOUT && c < NODES; c++)
        if ((kids[nkids++] = start_child(c)) < 0) return 1;
    if (nkids == 0) {                       /* a leaf: ready, then wait for go */
        char b = 1, x;
        if (write(ready_w, &b, 1) != 1) return 1;
        while (read(go_r, &x, 1) > 0) {}
        return 0;
    }
    if (index == 0) {                       /* the root: every leaf ready, then go */
        char b;
        for (int n = leaves(); n > 0; n--)
            if (read(ready_r, &b, 1) != 1) return 1;
        close(go_w);
    }
    for (int k = 0; k < nkids; k++) {
        int status;
        if (waitpid(kids[k], &status, 0) != kids[k] || !WIFEXITED(status) || WEXITSTATUS(status)) rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "node")) {
        ready_w = atoi(argv[3]);
        go_r = atoi(argv[4]);
        return node_run(atoi(argv[2]));
    }
    int ready[2], go[2];
    if (pipe(ready) || pipe(go)) return 2;
    ready_r = ready[0], ready_w = ready[1];
    go_r = go[0], go_w = go[1];
    fcntl(ready_r, F_SETFD, FD_CLOEXEC);
    fcntl(go_w, F_SETFD, FD_CLOEXEC);
    return node_run(0);
}
