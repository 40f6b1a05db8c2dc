/* livemem: holds 2,000,000 live 32-byte blocks allocated from four call
 * sites, then frees them: max RSS under the profiler minus native, divided by
 * the block count, is the profiler's memory per live allocation.
 * Usage: livemem [BLOCKS]; prints a checksum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Four distinct allocation sites: noipa keeps the compiler from folding them
 * into one, and the write after malloc keeps malloc from being a tail call
 * (which would take the site's frame off the stack). */
static __attribute__((noipa)) char *site0(void) { char *p = malloc(32); p[0] = 0; return p; }
static __attribute__((noipa)) char *site1(void) { char *p = malloc(32); p[0] = 1; return p; }
static __attribute__((noipa)) char *site2(void) { char *p = malloc(32); p[0] = 2; return p; }
static __attribute__((noipa)) char *site3(void) { char *p = malloc(32); p[0] = 3; return p; }

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 2000000;
    char *(*const sites[4])(void) = { site0, site1, site2, site3 };
    char **blocks = malloc(count * sizeof *blocks);
    long sum = 0;
    for (long i = 0; i < count; i++) {
        blocks[i] = sites[i & 3]();
        memset(blocks[i], (int)i, 32);
    }
    for (long i = 0; i < count; i++) {
        sum += blocks[i][31];
        free(blocks[i]);
    }
    free(blocks);
    printf("livemem: %ld blocks, checksum %ld\n", count, sum);
    return 0;
}
