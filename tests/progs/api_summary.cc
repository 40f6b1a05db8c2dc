// The in-process API (tests/recorder/api_summary.sh): mp_loaded, mp_summary around
// known allocations, mp_dump to stdout, a C++ mp::scope tag.
//   make_blocks: 100 x malloc(1000), kept until the end
//   scoped:      10 x malloc(50) + free, inside mp::scope("scoped")
// Between the two summaries: 110 calls, 100500 bytes, 10 frees, 100000
// bytes more live. No stdio before the dump (snprintf + write).
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include "mallocprof.h"

static void *keep[100];

__attribute__((noinline)) void make_blocks() { for (int i = 0; i < 100; i++) keep[i] = malloc(1000); }

__attribute__((noinline)) void scoped()
{
    mp::scope tag("scoped");
    for (int i = 0; i < 10; i++) {
        void *volatile p = malloc(50);
        free(p);
    }
}

static void say(const char *text)
{
    ssize_t w = write(1, text, __builtin_strlen(text));
    (void)w;
}

int main()
{
    struct mp_summary a, b;
    int ra = mp_summary(&a);
    make_blocks();
    scoped();
    int rb = mp_summary(&b);
    char line[256];
    snprintf(line, sizeof line, "loaded=%d rc=%d,%d calls=%llu bytes=%llu frees=%llu live=%lld zero=%d\n", mp_loaded(),
             ra, rb, (unsigned long long)(b.ncalls - a.ncalls), (unsigned long long)(b.memtot - a.memtot),
             (unsigned long long)(b.nfree - a.nfree), (long long)(b.memlive - a.memlive),
             rb != 0 && !b.ncalls && !b.memtot && !b.nfree && !b.memlive && !b.maxlive);
    say(line);
    int n = mp_dump(1, "memlive", 3);
    int bad = mp_dump(1, "bogus", 3);
    mp_dump(1, "nfree", 1);
    snprintf(line, sizeof line, "dump=%d bad=%d peak_ok=%d\n", n, bad, rb != 0 || b.maxlive >= b.memlive);
    say(line);
    for (int i = 0; i < 100; i++) free(keep[i]);
    return 0;
}
