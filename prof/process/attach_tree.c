/* The processes of an attach session (issue 41): the attached process's
 * children forked during a session record too (fork.c), each with its own
 * profiler's thread, and the detach must end recording in every one of
 * them, not only in the process mpquery called. They share one page
 * (MAP_SHARED, inherited by every fork): the session under way, the
 * session whose processes may still write their last snapshot, and a
 * slot per recording child. A child's thread looks at the page every
 * 20 ms (lifecycle.c) and, its session over, ends recording itself
 * (attach.c's attach_end_here): with its "detach" snapshot while the
 * attached process waits for it in mp_detach (at most 3 s), without one
 * after (the profile has been collected: nothing may be written or
 * re-created). The attached process's own forks between sessions stay the
 * program's alone (attach_idle). */
#define _GNU_SOURCE
#include "symbols.h"
#include "process.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define TREE_SLOTS 1000
struct tree {
    _Atomic uint64_t live;          /* the session under way; 0: none */
    _Atomic uint64_t collecting;    /* the ended session whose processes still write; 0: none */
    _Atomic uint64_t last;          /* the last session's id */
    _Atomic int32_t slot[TREE_SLOTS];   /* pids of the session's recording children; 0: free */
};
_Static_assert(sizeof(struct tree) <= 4096, "one page");

static struct tree *tree;
static uint64_t session;            /* this process's session (a child's: its parent's, by fork) */
static int child;                   /* a child of a session (not the attached process) */

void tree_session_start(void)
{
    if (!tree) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return;
        tree = p;
    }
    session = atomic_fetch_add(&tree->last, 1) + 1;
    atomic_store(&tree->collecting, 0);
    atomic_store(&tree->live, session);
}

/* The attached process's detach, before its own last snapshot: its
 * children end now, and may write theirs. */
void tree_session_ending(void)
{
    if (!tree) return;
    atomic_store(&tree->collecting, session);
    atomic_store(&tree->live, 0);
}

/* A pid gone or a zombie: its slot is not waited for. */
static int ended(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 1;
    buf[n] = 0;
    const char *paren = strrchr(buf, ')');
    return !paren || paren[1] != ' ' || paren[2] == 'Z' || paren[2] == 'X';
}

/* The attached process waits, at most `seconds`, for every recording
 * child to end (its last snapshot written, or the process gone); after
 * that no child of the session writes. */
void tree_session_wait(double seconds)
{
    if (!tree) return;
    double until = mp_now() + seconds;
    for (;;) {
        int left = 0;
        for (int i = 0; i < TREE_SLOTS; i++) {
            int32_t pid = atomic_load(&tree->slot[i]);
            if (!pid) continue;
            if (ended(pid)) atomic_compare_exchange_strong(&tree->slot[i], &pid, 0);
            else left++;
        }
        if (!left || mp_now() >= until) break;
        struct timespec ms = { 0, 5000000 };
        nanosleep(&ms, NULL);
    }
    atomic_store(&tree->collecting, 0);
}

/* A child forked during a session records (fork.c): its slot. A table
 * full leaves it unwaited for; it still ends with the session. */
void tree_fork_child(void)
{
    if (!tree || !session) return;
    child = 1;
    int32_t pid = (int32_t)getpid(), none = 0;
    for (int i = 0; i < TREE_SLOTS; i++, none = 0)
        if (atomic_compare_exchange_strong(&tree->slot[i], &none, pid)) return;
}

int tree_watching(void) { return child; }

int tree_session_over(void) { return child && atomic_load(&tree->live) != session; }

int tree_may_write(void)
{
    return !child || atomic_load(&tree->live) == session || atomic_load(&tree->collecting) == session;
}

/* This process recorded its last (the exit's, the exec's, the detach's):
 * no more waiting for it. */
void tree_process_ended(void)
{
    if (!child) return;
    int32_t pid = (int32_t)getpid();
    for (int i = 0; i < TREE_SLOTS; i++) {
        int32_t p = pid;
        if (atomic_load(&tree->slot[i]) == pid && atomic_compare_exchange_strong(&tree->slot[i], &p, 0)) break;
    }
    child = 0;
}
