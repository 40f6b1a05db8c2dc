/* Four threads allocating in a loop until stdin ends, for mpquery record
 * --pid (tests/mpquery/record_pid.sh): each keeps a ring of 64 blocks
 * (worker), freeing the block it replaces, so a session that starts in the
 * middle sees frees of blocks allocated before it. Prints one line per
 * thread and exits 5. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
static atomic_int stop;

static void *worker(void *arg)
{
    unsigned long id = (unsigned long)arg, rounds = 0;
    void *ring[64] = { 0 };
    while (!atomic_load(&stop)) {
        size_t i = rounds % 64;
        free(ring[i]);
        ring[i] = malloc(16 + (rounds * 7 + id) % 200);
        memset(ring[i], 1, 16);
        rounds++;
    }
    for (size_t i = 0; i < 64; i++) free(ring[i]);
    return rounds > 0 ? arg : NULL;
}

int main(void)
{
    pthread_t th[NTHREADS];
    for (unsigned long i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, worker, (void *)i);
    char line[64];
    while (fgets(line, sizeof line, stdin)) {}
    atomic_store(&stop, 1);
    for (int i = 0; i < NTHREADS; i++) {
        void *ran;
        pthread_join(th[i], &ran);
        printf("thread %d: %s\n", i, ran == (void *)(unsigned long)i ? "ran" : "did not run");
    }
    return 5;
}
