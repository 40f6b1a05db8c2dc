/* Blocks of every small size class, the large bins, aligned blocks and
 * mmapped ones, all live at once, then every other one freed: prints the
 * sum of malloc_usable_size over the blocks left live, which the cheap
 * modes' live bytes must equal (the recorder reads glibc's chunk headers
 * instead of calling it, hot.h block_usable). The first 1100 blocks outlast
 * the recorder's probation of the header reads. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 1200
static void *blocks[N];

int main(void)
{
    size_t n = 0;
    for (size_t s = 0; s < 1100; s++) blocks[n++] = malloc(s);
    static const size_t big[] = { 1032, 1033, 4095, 4096, 10000, 65536, 131071, 131072, 300000,
                                  (size_t)1 << 20, (size_t)4 << 20, (size_t)40 << 20 };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        blocks[n++] = malloc(big[i]);
        blocks[n++] = memalign(64, big[i]);
        blocks[n++] = memalign(4096, big[i]);
        blocks[n++] = calloc(1, big[i]);
    }
    for (size_t s = 1; s < 40; s++) blocks[n++] = realloc(malloc(s * 24), s * 100);
    size_t live = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 2) free(blocks[i]);
        else live += malloc_usable_size(blocks[i]);
    }
    char line[32];
    int len = snprintf(line, sizeof line, "%zu\n", live);
    return write(1, line, (size_t)len) == len ? 0 : 1;
}
