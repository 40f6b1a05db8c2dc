/* MP_TIME (tests/recorder/modes_time.sh): slow() spends about 1 s between its 100
 * allocations (10 ms asleep before each); fast() makes 100000 allocations
 * (and frees) quickly. */
#include <stdlib.h>
#include <time.h>

static void *volatile sink;

__attribute__((noinline)) void slow(void)
{
    const struct timespec ms10 = { 0, 10000000 };
    for (int i = 0; i < 100; i++) {
        nanosleep(&ms10, NULL);
        free(sink);
        sink = malloc(16);
    }
}

__attribute__((noinline)) void fast(void)
{
    for (int i = 0; i < 100000; i++) {
        free(sink);
        sink = malloc(16);
    }
}

int main(void)
{
    slow();
    fast();
    free(sink);
    return 0;
}
