/* Interval snapshots lost while the program has no descriptor left
 * (tests/recorder/flush_peak_once.sh): a peak written before the failures
 * is not written again after them.
 *
 * fd_exhaust: peak_one() 100 blocks of 100000 bytes, all freed; 300 ms;
 * the descriptor limit lowered to 64 and every descriptor under it taken
 * (/dev/null), taken again every 5 ms as the profiler's closed ones come
 * free, for 500 ms; all closed, the limit back; 300 ms; peak_two() 200
 * blocks of 100000 bytes, all freed; 300 ms. Prints "out of descriptors"
 * when its opens failed with EMFILE. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static void nap_ms(int ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

static void peak(int n)
{
    void **p = malloc(n * sizeof *p);
    for (int i = 0; i < n; i++) p[i] = malloc(100000);
    for (int i = 0; i < n; i++) free(p[i]);
    free(p);
}
__attribute__((noinline)) void peak_one(void) { peak(100); }
__attribute__((noinline)) void peak_two(void) { peak(200); }

int main(void)
{
    struct rlimit old, low;
    if (getrlimit(RLIMIT_NOFILE, &old)) return 1;
    peak_one();
    nap_ms(300);
    low = old;
    low.rlim_cur = 64;
    if (setrlimit(RLIMIT_NOFILE, &low)) return 1;
    int fds[64], n = 0, fd, out = 0;
    for (int round = 0; round < 100; round++) {
        while (n < 64 && (fd = open("/dev/null", O_RDONLY)) >= 0) fds[n++] = fd;
        out |= errno == EMFILE;
        nap_ms(5);
    }
    while (n) close(fds[--n]);
    if (setrlimit(RLIMIT_NOFILE, &old)) return 1;
    nap_ms(300);
    peak_two();
    nap_ms(300);
    puts(out ? "out of descriptors" : "never out of descriptors");
    return 0;
}
