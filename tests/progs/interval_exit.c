/* A short program that allocates while MP_INTERVAL snapshots are taken
 * every few ms (tests/recorder/flush_interval_exit.sh): it exits while the interval
 * thread may be writing one. */
#include <stdlib.h>
#include <time.h>

int main(void)
{
    for (int i = 0; i < 20000; i++) {
        void *p = malloc(100 + i % 50);
        if (i % 3) free(p);
        if (i % 1000 == 0) {
            struct timespec t = { 0, 1000000 };
            nanosleep(&t, NULL);
        }
    }
    return 0;
}
