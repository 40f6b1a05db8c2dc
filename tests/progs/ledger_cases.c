/* The ledger's hard cases (tests/recorder/ledger_*.sh), each printing the
 * kernel's view of its memory (/proc/self/smaps: a VMA's Rss and size, in
 * KiB) as the second source:
 *   untouched: a 64 MiB block never written, live at exit
 *   fork:      32 MiB block and 64 MiB mapping written, then a fork child
 *              that only reads them and exits (its own ledger)
 *   shared:    a MAP_SHARED|MAP_ANONYMOUS mapping of 16 MiB (8 touched) and
 *              a memfd mapping of 32 MiB (4 touched) */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024 * 1024)

/* "NAME rss=KiB size=KiB" of the VMA holding p, from smaps */
static void show(const char *name, uintptr_t a)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    unsigned long lo = 0, hi = 0;
    int in = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long l, h;
        if (sscanf(line, "%lx-%lx ", &l, &h) == 2 && strchr(line, '-') < strchr(line, ' ')) in = l <= a && a < h, lo = l, hi = h;
        else if (in && !strncmp(line, "Rss:", 4)) {
            printf("%s rss=%lu size=%lu\n", name, strtoul(line + 4, NULL, 10), (hi - lo) / 1024);
            break;
        }
    }
    if (f) fclose(f);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "untouched")) {
        char *p = malloc(64 * MiB);
        show("block", (uintptr_t)p);
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
            show("child block", (uintptr_t)b), show("child mapping", (uintptr_t)m);
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
    return 2;
}
