/* Leaks 1 MiB blocks from one function, each one written, one every MS
 * milliseconds (argv[1], default 10) after the first FAST ones (argv[2],
 * default 0) leaked at once, until the process is killed or
 * malloc fails: then it frees its last 32 blocks (room for the exit
 * snapshot) and exits with status 3. tests/recorder/near_limit.sh's
 * program (MP_NEAR_LIMIT). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEEP 32

__attribute__((noinline)) static void *leak_here(size_t n)
{
    void *p = malloc(n);
    if (p) memset(p, 1, n);
    return p;
}

int main(int argc, char **argv)
{
    static void *last[KEEP];
    long ms = argc > 1 ? atol(argv[1]) : 10;
    unsigned fast = argc > 2 ? (unsigned)atol(argv[2]) : 0;
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
    for (unsigned n = 0;; n++) {
        void *p = leak_here(1 << 20);
        if (!p) break;
        last[n % KEEP] = p;
        if (n >= fast) nanosleep(&ts, NULL);
    }
    for (int i = 0; i < KEEP; i++) free(last[i]);
    return 3;
}
