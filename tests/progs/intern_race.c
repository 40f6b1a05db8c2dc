/* 4 threads intern the same 4096 new stacks at the same time (stacks.c:
 * leaf index and tree under contention). Path p descends 12 levels through
 * f0/f1 chosen by the bits of p, then allocates and frees 32 bytes in
 * path_leaf; each thread runs every path 3 times, threads 0 and 2 in
 * order, 1 and 3 with neighbours swapped (so that they race to add the same
 * stacks, and different stacks that share a new node). Expected: 4096
 * distinct stacks through path_leaf, each with exactly one sample row per
 * thread holding 3 calls, 96 bytes, all freed. */
#include <pthread.h>
#include <stdlib.h>

#define LEVELS 12
#define PATHS (1 << LEVELS)
#define THREADS 4
#define REPEAT 3

static pthread_barrier_t start;

__attribute__((noinline)) void path_leaf(void)
{
    char *volatile block = malloc(32);   /* volatile: the pair is not optimized away */
    free(block);
}

static long f1(unsigned p, int level);

__attribute__((noinline)) static long f0(unsigned p, int level)
{
    if (level == 0) return path_leaf(), 0;
    return ((p >> (level - 1)) & 1 ? f1(p, level - 1) : f0(p, level - 1)) + 1;
}

__attribute__((noinline)) static long f1(unsigned p, int level)
{
    if (level == 0) return path_leaf(), 1;
    return ((p >> (level - 1)) & 1 ? f1(p, level - 1) : f0(p, level - 1)) + 2;
}

static void *worker(void *arg)
{
    unsigned k = (unsigned)(long)arg;
    long sum = 0;
    pthread_barrier_wait(&start);
    for (int r = 0; r < REPEAT; r++)
        for (unsigned i = 0; i < PATHS; i++) sum += f0(i ^ (k & 1), LEVELS);
    return (void *)sum;
}

int main(void)
{
    pthread_t th[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (long k = 0; k < THREADS; k++)
        if (pthread_create(&th[k], NULL, worker, (void *)k)) return 1;
    for (int k = 0; k < THREADS; k++) pthread_join(th[k], NULL);
    return 0;
}
