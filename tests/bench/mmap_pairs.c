/* mmap_pairs [N] [BYTES]: N mmap/munmap pairs of BYTES (default 1000000,
 * 65536) anonymous, untouched, from one call site; prints the mean
 * nanoseconds per pair, wall and CPU (the process's: steadier on a
 * loaded machine). What recording a mapping costs (prof/snapshot/maps.c: the
 * stack, the table under its lock), run with and without the profiler. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void *map_one(size_t len)
{
    return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    size_t len = argc > 2 ? (size_t)atol(argv[2]) : 65536;
    double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    for (long i = 0; i < n; i++) {
        void *p = map_one(len);
        if (p == MAP_FAILED || munmap(p, len) != 0) return 1;
    }
    printf("%.0f ns per mmap/munmap pair, %.0f ns CPU\n", (now(CLOCK_MONOTONIC) - t0) / (double)n * 1e9,
           (now(CLOCK_PROCESS_CPUTIME_ID) - c0) / (double)n * 1e9);
    return 0;
}
