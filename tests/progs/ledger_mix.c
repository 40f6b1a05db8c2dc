/* The ledger's test program (issue 28): a 64 MiB anonymous mapping of which
 * half is touched (map_region), 10 MB in 1,000 blocks of 10,000 bytes
 * (fill_blocks), 4 threads that each touch 256 KiB of their stack and wait,
 * a 4 MiB cache rewritten every 50 ms (rewrite_cache) beside a 4 MiB
 * buffer written once and never again (fill_buffer). It runs for argv[1]
 * seconds (default 1) after the set-up, then exits, freeing nothing. The
 * set-up ends with a snapshot labelled "set up" (mp_snapshot): every byte
 * allocated is written by then (an interval snapshot may come between a
 * malloc and its memset). */
#include "mallocprof.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAPPING (64 << 20)
#define CACHE (4 << 20)
#define STACK_TOUCH (256 << 10)

static pthread_barrier_t ready, done;

static __attribute__((noinline)) char *map_region(void)
{
    char *p = mmap(NULL, MAPPING, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) exit(1);
    memset(p, 1, MAPPING / 2);
    return p;
}

static __attribute__((noinline)) void fill_blocks(void **blocks)
{
    for (int i = 0; i < 1000; i++) {
        blocks[i] = malloc(10000);
        memset(blocks[i], 2, 10000);
    }
}

static __attribute__((noinline)) char *fill_buffer(void)
{
    char *b = malloc(CACHE);
    memset(b, 3, CACHE);
    return b;
}

static __attribute__((noinline)) void rewrite_cache(char *c, int round)
{
    memset(c, round, CACHE);
}

static __attribute__((noinline)) void touch_stack(void)
{
    volatile char room[STACK_TOUCH];
    for (size_t i = 0; i < sizeof room; i += 4096) room[i] = 1;
    pthread_barrier_wait(&ready);
    pthread_barrier_wait(&done);
}

static void *worker(void *arg)
{
    (void)arg;
    touch_stack();
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 1;
    static void *blocks[1000];
    pthread_t th[4];
    pthread_barrier_init(&ready, NULL, 5);
    pthread_barrier_init(&done, NULL, 5);
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, worker, NULL);
    pthread_barrier_wait(&ready);
    char *region = map_region();
    fill_blocks(blocks);
    char *cache = malloc(CACHE);
    char *buffer = fill_buffer();
    struct timespec t0, now, step = { 0, 50 * 1000 * 1000 };
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int round = 0;; round++) {
        rewrite_cache(cache, round);
        if (round == 0) mp_snapshot("set up");
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec + (now.tv_nsec - t0.tv_nsec) / 1e9 >= seconds) break;
        nanosleep(&step, NULL);
    }
    (void)region, (void)buffer;
    return 0;       /* the threads still wait: the exit snapshot sees their stacks */
}
