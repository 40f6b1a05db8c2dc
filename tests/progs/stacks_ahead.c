/* stacks_ahead: 2^LEVELS (default 15: 32,768) distinct stacks, one malloc
 * and free each, as tests/bench/manystacks.c (at level k the bit k of the
 * path chooses f0 or f1, each calling the next level from its own call
 * site), then waits (up to WAIT seconds, default 20) for the profile file
 * ($MP_OUT) to appear while the program still runs: the stack tree written
 * ahead of the exit (flush_ahead). Prints whether it appeared and a
 * checksum. Usage: stacks_ahead [LEVELS [WAIT]] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char *volatile last_block;

static long f0(unsigned long path, int level);
static long f1(unsigned long path, int level);

static __attribute__((noipa)) long f0(unsigned long path, int level)
{
    if (level == 0) {
        last_block = malloc(24);
        free(last_block);
        return (long)(path & 1);
    }
    if ((path >> (level - 1)) & 1) return f1(path, level - 1) ^ level;
    return f0(path, level - 1) ^ (level << 1);
}

static __attribute__((noipa)) long f1(unsigned long path, int level)
{
    if (level == 0) {
        last_block = malloc(40);
        free(last_block);
        return (long)(path & 3);
    }
    if ((path >> (level - 1)) & 1) return f1(path, level - 1) + level;
    return f0(path, level - 1) + (level << 2);
}

int main(int argc, char **argv)
{
    int levels = argc > 1 ? atoi(argv[1]) : 15;
    long sum = 0;
    for (unsigned long p = 0; p < (1ul << levels); p++) sum += f0(p, levels);
    const char *out = getenv("MP_OUT");
    int seen = 0;
    int waits = argc > 2 ? atoi(argv[2]) * 100 : 2000;
    for (int i = 0; i < waits && out && !(seen = access(out, F_OK) == 0); i++)
        nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
    printf("%lu paths, checksum %ld, written ahead: %s\n", 1ul << levels, sum, seen ? "yes" : "no");
    return 0;
}
