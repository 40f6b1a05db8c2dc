/* Known allocation volumes for the MP_SAMPLE test (all freed except keep_live):
 *   small_blocks   1000000 x 16 bytes   (16 MB)
 *   medium_blocks   100000 x 1000 bytes (100 MB)
 *   large_blocks       200 x 1 MiB      (200 MiB)
 *   keep_live        20000 x 512 bytes kept live (10.24 MB)
 * With the argument "paths": 256 distinct call paths (8 levels of a choice
 * between path0 and path1), each ending in path_leaf: 20000 x 64 bytes. */
#include <stdlib.h>

void *volatile sink;
static void *live[20000];

void small_blocks(void) { for (int i = 0; i < 1000000; i++) { sink = malloc(16); free(sink); } }
void medium_blocks(void) { for (int i = 0; i < 100000; i++) { sink = malloc(1000); free(sink); } }
void large_blocks(void) { for (int i = 0; i < 200; i++) { sink = malloc(1 << 20); free(sink); } }
void keep_live(void) { for (int i = 0; i < 20000; i++) live[i] = malloc(512); }

void path_leaf(void) { for (int i = 0; i < 20000; i++) { sink = malloc(64); free(sink); } }
void path1(int level, unsigned bits);
void path0(int level, unsigned bits)
{
    if (level == 8) path_leaf();
    else if (bits >> level & 1) path1(level + 1, bits);
    else path0(level + 1, bits);
}
void path1(int level, unsigned bits)
{
    if (level == 8) path_leaf();
    else if (bits >> level & 1) path1(level + 1, bits);
    else path0(level + 1, bits);
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        for (unsigned bits = 0; bits < 256; bits++) path0(0, bits);
        return 0;
    }
    small_blocks();
    medium_blocks();
    large_blocks();
    keep_live();
    return 0;
}
