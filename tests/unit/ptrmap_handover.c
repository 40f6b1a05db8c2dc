/* The pointer map's hand-over from lone-thread mode to locking
 * (prof/core/ptrmap.c, ptrmap_share), ITERATIONS times: each iteration is a
 * forked child (the parent stays in lone-thread mode, ptrmap_reset keeps
 * it). In the child, the main thread (A) works in the map without locks
 * (checked: it goes through with every shard lock held); a second thread
 * (B) waits until A has made a number of steps that varies with the
 * iteration, calls ptrmap_share and works in the same 16 shards, its
 * blocks 8 bytes from A's (same home slots), while A goes on. Each step
 * inserts a block and removes, with exact values, the one inserted WINDOW
 * steps before, so tables grow while both threads work. At the end every
 * block left is found once, exactly. A hang (a corrupted table) is caught
 * by an alarm in the child.
 *
 * --third-sharer: a third thread (C) calls ptrmap_share at the same moment
 * as B and then works in the same shards; it reproduces a race in
 * ptrmap_share (a second caller returns while the first is still waiting
 * for the lone thread to leave the map). Not run by tests/unit/unit.sh. */
#include "unit.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ITERATIONS 100
#define WINDOW 2048             /* blocks live per thread: 128 per shard, tables grow as both fill */
#define B_STEPS (2 * WINDOW)

/* 16 shards, 256 16-byte positions per page; who 1 is 8 bytes after who 0,
 * who 2 in other pages of the same shards. */
static uintptr_t block(int who, uint32_t k)
{
    uintptr_t region = ((uintptr_t)0x7f0000000000ull >> 26) + (who == 2 ? (uintptr_t)1 << 13 : 0);
    return shard_page(region, k % 16, k / 4096) + ((uintptr_t)(k / 16 % 256) << 4) + (who == 1 ? 8 : 0);
}
static uint32_t slot_of(int who, uint32_t k) { return (k + 1) * 4 + (uint32_t)who; }
static uint64_t size_of(int who, uint32_t k) { return (uint64_t)k * 16 + (uint64_t)who; }

static void expect(int who, uint32_t k)
{
    uint32_t slot = 0;
    uint64_t size = 0;
    int found = ptrmap_remove(block(who, k), &slot, &size);
    if (found != 1 || slot != slot_of(who, k) || size != size_of(who, k))
        fprintf(stderr, "thread %c, block %u: found %d, slot %u, size %llu\n", "ABC"[who], k, found,
                slot, (unsigned long long)size);
    CHECK_EQ(found, 1);
    CHECK_EQ(slot, slot_of(who, k));
    CHECK_EQ(size, size_of(who, k));
}

static void step(int who, uint32_t k)
{
    ptrmap_insert(block(who, k), slot_of(who, k), size_of(who, k));
    if (k >= WINDOW) expect(who, k - WINDOW);
}

static _Atomic uint32_t a_steps;        /* A's progress */
static _Atomic int b_done, c_done;
static uint32_t share_at;               /* A's step at which B shares */
static uint32_t a_before, a_after;      /* A's progress around B's ptrmap_share */
static volatile sig_atomic_t phase;

static void *thread_b(void *arg)
{
    (void)arg;
    while (atomic_load(&a_steps) < share_at) {}
    a_before = atomic_load(&a_steps);
    ptrmap_share();
    a_after = atomic_load(&a_steps);
    for (uint32_t k = 0; k < B_STEPS; k++) step(1, k);
    atomic_store(&b_done, 1);
    return NULL;
}

static void *thread_c(void *arg)
{
    (void)arg;
    while (atomic_load(&a_steps) < share_at) {}
    ptrmap_share();
    for (uint32_t k = 0; k < B_STEPS; k++) step(2, k);
    atomic_store(&c_done, 1);
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char *what[] = { "", "A alone, every shard lock held (the map locks before the hand-over?)",
                                  "both threads working (a hang in the map)" };
    char msg[160];
    int n = snprintf(msg, sizeof msg, "child hung: %s\n", what[phase]);
    ssize_t w = write(2, msg, n);
    (void)w;
    _exit(3);
}

/* One child: returns 0, or 2 when A made no step while B was in ptrmap_share. */
static int child(int iteration, int third)
{
    signal(SIGALRM, on_alarm);
    alarm(5);
    ptrmap_reset(0);
    phase = 1;
    ptrmap_lock_all();
    ptrmap_insert(block(0, 0), 1, 1);
    uint32_t slot;
    uint64_t size;
    CHECK_EQ(ptrmap_remove(block(0, 0), &slot, &size), 1);
    ptrmap_unlock_all();
    phase = 2;
    share_at = (uint32_t)iteration * 331 % (2 * WINDOW);
    pthread_t b, c;
    CHECK_EQ(pthread_create(&b, NULL, thread_b, NULL), 0);
    if (third) CHECK_EQ(pthread_create(&c, NULL, thread_c, NULL), 0);
    uint32_t k = 0;
    while (!atomic_load(&b_done) || (third && !atomic_load(&c_done))) {
        step(0, k++);
        atomic_store(&a_steps, k);
    }
    CHECK_EQ(pthread_join(b, NULL), 0);
    if (third) CHECK_EQ(pthread_join(c, NULL), 0);
    CHECK(k >= share_at);
    for (uint32_t j = k > WINDOW ? k - WINDOW : 0; j < k; j++) expect(0, j);
    for (uint32_t j = B_STEPS - WINDOW; j < B_STEPS; j++) expect(1, j);
    for (uint32_t j = B_STEPS - WINDOW; third && j < B_STEPS; j++) expect(2, j);
    for (uint32_t j = 0; j < k; j++) CHECK_EQ(ptrmap_remove(block(0, j), &slot, &size), 0);
    for (uint32_t j = 0; j < B_STEPS; j++) CHECK_EQ(ptrmap_remove(block(1, j), &slot, &size), 0);
    for (uint32_t j = 0; third && j < B_STEPS; j++) CHECK_EQ(ptrmap_remove(block(2, j), &slot, &size), 0);
    return a_after > a_before ? 0 : 2;
}

int main(int argc, char **argv)
{
    int third = argc > 1 && !strcmp(argv[1], "--third-sharer");
    setvbuf(stdout, NULL, _IOLBF, 0);
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
    if (cmds <= 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) {
        printf("SKIP: no membarrier(PRIVATE_EXPEDITED): the map always locks, no hand-over to test\n");
        return 0;
    }
    ptrmap_init(0);
    int overlapped = 0;
    for (int i = 0; i < ITERATIONS; i++) {
        fflush(stdout);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) _exit(child(i, third));
        int status;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) overlapped++;
        else if (!WIFEXITED(status) || WEXITSTATUS(status) != 2) {
            fprintf(stderr, "iteration %d: child %s %d\n", i, WIFEXITED(status) ? "exited" : "killed by signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            CHECK(!"every child passes");
        }
    }
    /* on 2 CPUs or more, A runs while B waits for it in ptrmap_share */
    if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) CHECK(overlapped > 0);
    OK("hand-over%s: %d children, A alone without locks, then B%s sharing after 0..%d of A's steps "
       "and working in the same 16 shards: every block removed once with exact values, none left; "
       "A was working during B's ptrmap_share in %d", third ? " with a third sharer" : "", ITERATIONS,
       third ? " and C" : "", 2 * WINDOW - 1, overlapped);
    return 0;
}
