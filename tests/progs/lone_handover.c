/* The pointer map's hand-over from one recording thread to two (ptrmap.c:
 * lone-thread mode). 40 forked children (each starts with one thread) do:
 * the main thread allocates 5000 blocks of 48 bytes (hand_off), starts a
 * second thread and at once goes on allocating (main_loop: 100000 blocks of
 * 16 bytes, passed through a ring to the second thread, which frees them:
 * both threads work in the same pages of the map). The second thread's
 * first operations are frees of the hand_off blocks, so the hand-over
 * happens while the main thread is inside the map; it also allocates and
 * frees 12500 blocks of 32 bytes (thread_loop_step).
 * Per child, exactly: hand_off 5000 calls, 240000 bytes, all freed;
 * main_loop 100000 / 1600000, thread_loop_step 12500 / 400000, all freed;
 * no unknown frees. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILDREN 40
#define HANDOFF 5000
#define LOOP 100000

static void *handoff_blocks[HANDOFF];
static void *volatile sink;

/* single producer (main), single consumer (second); NULL ends. A side
 * that waits yields: on a machine the suite's other tests share, the
 * other side may not be running, and a bare spin burned its time slice
 * (thread_handover took 2.5 to 21 s of CPU) */
#define RING 1024
static void *ring[RING];
static _Atomic unsigned head, tail;

static void ring_put(void *p)
{
    unsigned h = atomic_load_explicit(&head, memory_order_relaxed);
    while (h - atomic_load_explicit(&tail, memory_order_acquire) == RING) sched_yield();
    ring[h % RING] = p;
    atomic_store_explicit(&head, h + 1, memory_order_release);
}

static void *ring_get(void)
{
    unsigned t = atomic_load_explicit(&tail, memory_order_relaxed);
    while (atomic_load_explicit(&head, memory_order_acquire) == t) sched_yield();
    void *p = ring[t % RING];
    atomic_store_explicit(&tail, t + 1, memory_order_release);
    return p;
}

__attribute__((noinline)) void hand_off(void)
{
    for (int i = 0; i < HANDOFF; i++) handoff_blocks[i] = malloc(48);
}

__attribute__((noinline)) void main_loop(void)
{
    for (int i = 0; i < LOOP; i++) ring_put(malloc(16));
    ring_put(NULL);
}

__attribute__((noinline)) void thread_loop_step(void)
{
    sink = malloc(32);
    free(sink);
}

static void *second(void *arg)
{
    (void)arg;
    for (int i = 0; i < HANDOFF; i++) free(handoff_blocks[i]);
    for (int i = 0; i < LOOP; i++) {
        free(ring_get());
        if (i % 8 == 0) thread_loop_step();
    }
    if (ring_get() != NULL) abort();
    return NULL;
}

static int child(void)
{
    pthread_t th;
    hand_off();
    if (pthread_create(&th, NULL, second, NULL)) return 1;
    main_loop();
    pthread_join(th, NULL);
    return 0;
}

int main(void)
{
    for (int c = 0; c < CHILDREN; c++) {
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) _exit(child());
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) return 1;
    }
    return 0;
}
