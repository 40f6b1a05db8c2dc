/* The ledger's hard cases (tests/recorder/ledger_*.sh), each printing the
 * kernel's view of its memory (/proc/self/smaps: a VMA's Rss and size, in
 * KiB) as the second source:
 *   untouched: a 64 MiB block never written, live at exit
 *   fork:      32 MiB block and 64 MiB mapping written, then a fork child
 *              that only reads them and exits (its own ledger); the child
 *              shows each object's own pages (show_range)
 *   shared:    a MAP_SHARED|MAP_ANONYMOUS mapping of 16 MiB (8 touched) and
 *              a memfd mapping of 32 MiB (4 touched)
 *   growing:   a 4 MiB block written whole, a 16 MiB mapping right below
 *              its chunk (one VMA for the kernel) whose pages a thread
 *              keeps touching, 5 snapshots labelled "growing" meanwhile */
#define _GNU_SOURCE
#include "mallocprof.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024 * 1024)

/* smaps's Rss (KiB) of the VMA holding a, and its bounds (0, 0: none) */
static unsigned long vma_rss(uintptr_t a, unsigned long *lo, unsigned long *hi)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    unsigned long rss = 0, l = 0, h = 0;
    int in = 0, found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx-%lx ", &l, &h) == 2 && strchr(line, '-') < strchr(line, ' ')) in = l <= a && a < h;
        else if (in && !strncmp(line, "Rss:", 4)) rss = strtoul(line + 4, NULL, 10), found = 1;
    }
    if (f) fclose(f);
    *lo = found ? l : 0, *hi = found ? h : 0;
    return rss;
}

/* "NAME rss=KiB size=KiB" of the VMA holding p, from smaps; its start */
static unsigned long show(const char *name, uintptr_t a)
{
    unsigned long lo, hi, rss = vma_rss(a, &lo, &hi);
    if (hi) printf("%s rss=%lu size=%lu\n", name, rss, (hi - lo) / 1024);
    fflush(stdout);
    return lo;
}

/* "NAME rss=KiB size=KiB" of [lo, hi) in the VMA holding it: smaps's Rss of
 * the VMA less the pages resident in its parts outside the range (mincore),
 * for an object the kernel merged with a neighbour (the profiler's heap span
 * a fork child maps right below the mapping) */
static void show_range(const char *name, uintptr_t lo, uintptr_t hi)
{
    unsigned long vlo, vhi, rss = vma_rss(lo, &vlo, &vhi);
    if (!vhi) vlo = lo, vhi = hi;       /* not mapped: nothing outside to take off */
    unsigned char v[4096];
    uintptr_t outside[2][2] = { { vlo, lo }, { hi, vhi } };
    for (int k = 0; k < 2; k++)
        for (uintptr_t a = outside[k][0]; a < outside[k][1]; a += 4096 * sizeof v) {
            size_t n = (outside[k][1] - a) / 4096 < sizeof v ? (outside[k][1] - a) / 4096 : sizeof v;
            if (mincore((void *)a, n * 4096, v) == 0)
                for (size_t i = 0; i < n; i++) rss -= (v[i] & 1) * 4;
        }
    printf("%s rss=%lu size=%lu\n", name, rss, (unsigned long)(hi - lo) / 1024);
    fflush(stdout);
}

/* glibc's mmapped chunk of a block of n bytes: its header page, then the block */
static void show_chunk(const char *name, uintptr_t b, size_t n)
{
    show_range(name, (b - 16) & ~(uintptr_t)4095, (b + n + 4095) & ~(uintptr_t)4095);
}

static char *growing;
static _Atomic int stop;

/* a page of the mapping every 20 us, and again after a pass */
static void *toucher(void *arg)
{
    (void)arg;
    struct timespec pause = { 0, 20000 };
    while (!stop) {
        for (size_t i = 0; i < 16 * MiB && !stop; i += 4096) growing[i] = 1, nanosleep(&pause, NULL);
        madvise(growing, 16 * MiB, MADV_DONTNEED);
    }
    return NULL;
}

/* The block's chunk (4 MiB and a page: glibc's header) goes into a hole of
 * its size at the top of a reservation (the kernel's highest gap), the
 * mapping takes the reservation's rest, right below the chunk */
static int grow_beside(void)
{
    size_t chunk = 4 * MiB + 4096;
    char *r = NULL, *b = NULL;
    for (int tries = 0; tries < 20 && (!r || b != r + 16 * MiB + 16); tries++) {
        if (b) memset(b, 1, 4 * MiB), munmap(r - 4096, 4096 + 16 * MiB);  /* b went to a higher gap: it stays there, written */
        /* a page kept PROT_NONE below the mapping: it merges with the
         * chunk above it, not with whatever lies below (a mapping of the
         * profiler's, written: then the kernel merges only with that one) */
        char *g = mmap(NULL, 4096 + 16 * MiB + chunk, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (g == MAP_FAILED) return 2;
        r = g + 4096;
        if (munmap(r + 16 * MiB, chunk)) return 2;
        b = malloc(4 * MiB);
    }
    if (b != r + 16 * MiB + 16) return 3;
    memset(b, 1, 4 * MiB);
    growing = mmap(r, 16 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (growing != r) return 4;
    growing[0] = 1;
    show("both", (uintptr_t)b);
    pthread_t t;
    if (pthread_create(&t, NULL, toucher, NULL)) return 2;
    struct timespec step = { 0, 50 * 1000 * 1000 };
    for (int i = 0; i < 5; i++) nanosleep(&step, NULL), mp_snapshot("growing");
    stop = 1;
    pthread_join(t, NULL);
    return b[7] == 1 ? 0 : 5;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "untouched")) {
        char *p = malloc(64 * MiB);
        show_chunk("block", (uintptr_t)p, 64 * MiB);
        return p == NULL;
    }
    if (!strcmp(mode, "fork")) {
        char *b = malloc(32 * MiB);
        char *m = mmap(NULL, 64 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (!b || m == MAP_FAILED) return 2;
        memset(b, 1, 32 * MiB), memset(m, 2, 64 * MiB);
        pid_t c = fork();
        if (c == 0) {
            printf("child %d\n", (int)getpid());
            show_chunk("child block", (uintptr_t)b, 32 * MiB);
            show_range("child mapping", (uintptr_t)m, (uintptr_t)m + 64 * MiB);
            exit(b[5] + m[7] == 3 ? 0 : 1);
        }
        int st;
        return c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) ? 3 : WEXITSTATUS(st);
    }
    if (!strcmp(mode, "shared")) {
        char *s = mmap(NULL, 16 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        int fd = memfd_create("ledger_cases", 0);
        if (s == MAP_FAILED || fd < 0 || ftruncate(fd, 32 * MiB)) return 2;
        char *f = mmap(NULL, 32 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (f == MAP_FAILED) return 2;
        memset(s, 1, 8 * MiB), memset(f, 2, 4 * MiB);
        show("shared", (uintptr_t)s), show("memfd", (uintptr_t)f);
        return 0;
    }
    if (!strcmp(mode, "growing")) return grow_beside();
    return 2;
}
