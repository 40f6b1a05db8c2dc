/* peak_ahead: 2^LEVELS (default 12: 4,096) distinct stacks, each keeping
 * its blocks (the peak: 4,096 stacks' blocks live), then all but every
 * eighth freed, then waits (up to WAIT seconds, default 20) for the
 * profile file ($MP_OUT) to appear while the program runs: the peak
 * snapshot written ahead of the exit once likely final (flush_ahead).
 * AGAIN=1: then a higher peak from the same stacks, which the exit
 * snapshot must write again. Prints whether the file appeared and a
 * checksum. Usage: peak_ahead [LEVELS [WAIT [AGAIN]]] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char **blocks;
static int round_no;

static long f0(unsigned long path, int level);
static long f1(unsigned long path, int level);

/* path's block: one per round, kept (the first round's freed later) */
static long leaf(unsigned long path, size_t size)
{
    char *b = malloc(size + (size_t)round_no * 1024);
    b[0] = (char)path;
    if (blocks[path]) free(blocks[path]);
    blocks[path] = b;
    return (long)(path & 3);
}

static __attribute__((noipa)) long f0(unsigned long path, int level)
{
    if (level == 0) return leaf(path, 1000);
    if ((path >> (level - 1)) & 1) return f1(path, level - 1) ^ level;
    return f0(path, level - 1) ^ (level << 1);
}

static __attribute__((noipa)) long f1(unsigned long path, int level)
{
    if (level == 0) return leaf(path, 2000) + 1;
    if ((path >> (level - 1)) & 1) return f1(path, level - 1) + level;
    return f0(path, level - 1) + (level << 2);
}

int main(int argc, char **argv)
{
    int levels = argc > 1 ? atoi(argv[1]) : 12;
    int waits = argc > 2 ? atoi(argv[2]) * 100 : 2000;
    int again = argc > 3 && atoi(argv[3]);
    unsigned long n = 1ul << levels;
    blocks = calloc(n, sizeof *blocks);
    long sum = 0;
    for (unsigned long p = 0; p < n; p++) sum += f0(p, levels);
    for (unsigned long p = 0; p < n; p++)
        if (p % 8) free(blocks[p]), blocks[p] = NULL;
    const char *out = getenv("MP_OUT");
    int seen = 0;
    for (int i = 0; i < waits && out && !(seen = access(out, F_OK) == 0); i++)
        nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
    if (again) {
        round_no = 1;
        for (unsigned long p = 0; p < n; p++) sum += f0(p, levels);
    }
    printf("%lu paths, checksum %ld, written ahead: %s\n", n, sum, seen ? "yes" : "no");
    return 0;
}
