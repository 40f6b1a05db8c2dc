/* A pool of 32 threads that stay, for mpquery record --pid
 * (tests/recorder/attach_memory.sh): each allocates and frees a block
 * every millisecond from call chains of 1 to 24 frames (so that each
 * thread's record caches several stacks), until stdin ends. Exits 3 once
 * every thread has ended. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NTHREADS 32
static atomic_int stop;

static __attribute__((noinline)) void *chain(unsigned depth, size_t size)
{
    if (depth == 0) return malloc(size);
    void *p = chain(depth - 1, size + 1);
    __asm__ volatile("" ::: "memory");     /* not a tail call: one frame per level */
    return p;
}

static void *worker(void *arg)
{
    unsigned long id = (unsigned long)arg, rounds = 0;
    struct timespec ms = { 0, 1000000 };
    while (!atomic_load(&stop)) {
        free(chain((unsigned)((rounds + id) % 24), 32));
        rounds++;
        nanosleep(&ms, NULL);
    }
    return (void *)rounds;
}

int main(void)
{
    pthread_t th[NTHREADS];
    for (unsigned long i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, worker, (void *)i);
    char line[64];
    while (fgets(line, sizeof line, stdin)) {}
    atomic_store(&stop, 1);
    int ran = 0;
    for (int i = 0; i < NTHREADS; i++) {
        void *rounds;
        pthread_join(th[i], &rounds);
        ran += rounds != NULL;
    }
    printf("%d threads ran\n", ran);
    return 3;
}
