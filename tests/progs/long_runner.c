/* long_runner ITER: ITER allocations of 64 bytes from steady_alloc, the
 * last 1000 kept live (ring), sleeping 1 ms every 1000 allocations so the
 * run lasts ~ITER/1000 ms. Full run: ncalls = ITER, memlive = 64000. */
#include <stdlib.h>
#include <time.h>

static void *ring[1000];

void steady_alloc(int i)
{
    free(ring[i % 1000]);
    ring[i % 1000] = malloc(64);
}

int main(int argc, char **argv)
{
    long iter = argc > 1 ? atol(argv[1]) : 100000;
    struct timespec ms = { 0, 1000000 };
    for (long i = 0; i < iter; i++) {
        steady_alloc((int)i);
        if (i % 1000 == 999) nanosleep(&ms, NULL);
    }
    return 0;
}
