/* manystacks: one malloc+free from each of 2^20 (1,048,576) distinct call
 * paths. Path number p descends 20 levels; at level k the bit k of p chooses
 * f0 or f1, and each function calls the next level from a different call
 * site, so every p has its own sequence of return addresses.
 * Usage: manystacks [LEVELS] (default 20); prints a checksum. */
#include <stdio.h>
#include <stdlib.h>

/* The block escapes through this, so the compiler cannot drop malloc+free. */
static char *volatile last_block;

static long f0(unsigned long path, int level);
static long f1(unsigned long path, int level);

/* Picks the next function from bit `level` of the path; the result is used
 * after the call so no call is a tail call, and noipa keeps the compiler from
 * merging or transforming the recursion. */
static __attribute__((noipa)) long f0(unsigned long path, int level)
{
    if (level == 0) {
        char *block = malloc(24);
        block[0] = (char)path;
        last_block = block;
        free(last_block);
        return (long)(path & 1);
    }
    if ((path >> (level - 1)) & 1) return f1(path, level - 1) ^ level;
    return f0(path, level - 1) ^ (level << 1);
}

static __attribute__((noipa)) long f1(unsigned long path, int level)
{
    if (level == 0) {
        char *block = malloc(40);
        block[0] = (char)path;
        last_block = block;
        free(last_block);
        return (long)(path & 1);
    }
    if ((path >> (level - 1)) & 1) return f1(path, level - 1) ^ (level << 2);
    return f0(path, level - 1) ^ (level << 3);
}

int main(int argc, char **argv)
{
    int levels = argc > 1 ? atoi(argv[1]) : 20;
    long sum = 0;
    for (unsigned long path = 0; path < (1ul << levels); path++) sum += f0(path, levels);
    printf("manystacks: %lu paths, checksum %ld\n", 1ul << levels, sum);
    return 0;
}
