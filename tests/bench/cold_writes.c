/* cold_writes: the write side of MP_COLD's cost. Holds SIZE MB of live
 * 64 KB blocks and rewrites all of them ROUNDS times: after each snapshot
 * the kernel write-protects their pages again (soft-dirty, userfaultfd), so
 * the first write to each page in each interval faults once.
 * Usage: cold_writes [SIZE_MB] [ROUNDS]; prints a checksum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK (64 << 10)

int main(int argc, char **argv)
{
    long mb = argc > 1 ? atol(argv[1]) : 256, rounds = argc > 2 ? atol(argv[2]) : 40;
    long n = mb * (1 << 20) / BLOCK;
    char **blocks = malloc(n * sizeof *blocks);
    for (long i = 0; i < n; i++) blocks[i] = malloc(BLOCK);
    long sum = 0;
    for (long r = 0; r < rounds; r++)
        for (long i = 0; i < n; i++) {
            memset(blocks[i], (int)(r + i), BLOCK);
            sum += blocks[i][r % BLOCK];
        }
    for (long i = 0; i < n; i++) free(blocks[i]);
    free(blocks);
    printf("%ld\n", sum);
    return 0;
}
