/* The pointer map's hand-over from one recording thread to two (ptrmap.c:
 * lone-thread mode). 40 forked children (each starts with one thread) do:
 * the main thread allocates 5000 handoff blocks of 48 bytes, starts a
 * second thread and at once goes on allocating and freeing (main_loop:
 * 100000 blocks of 16 bytes); the second thread's first operations are
 * frees of the handoff blocks (the hand-over happens while the main thread
 * is inside the map), then thread_loop: 100000 blocks of 32 bytes.
 * Per child, exactly: hand_off 5000 calls, 240000 bytes, all freed;
 * main_loop 100000 / 1600000, thread_loop 100000 / 3200000, all freed;
 * no unknown frees. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILDREN 40
#define HANDOFF 5000
#define LOOP 100000

static void *handoff_blocks[HANDOFF];
static void *volatile sink;

__attribute__((noinline)) void hand_off(void)
{
    for (int i = 0; i < HANDOFF; i++) handoff_blocks[i] = malloc(48);
}

__attribute__((noinline)) void main_loop(void)
{
    void *ring[64] = { 0 };
    for (int i = 0; i < LOOP; i++) {
        free(ring[i & 63]);
        ring[i & 63] = malloc(16);
    }
    for (int i = 0; i < 64; i++) free(ring[i]);
}

__attribute__((noinline)) void thread_loop(void)
{
    for (int i = 0; i < LOOP; i++) {
        sink = malloc(32);
        free(sink);
    }
}

static void *second(void *arg)
{
    (void)arg;
    for (int i = 0; i < HANDOFF; i++) free(handoff_blocks[i]);
    thread_loop();
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
