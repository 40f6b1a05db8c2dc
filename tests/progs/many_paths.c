/* many_paths LEVELS: 2^LEVELS distinct call paths (a binary choice between
 * two functions at each level), one malloc(8) + free at the end of each. */
#include <stdlib.h>

void *volatile sink;
void branch1(int level, int levels, unsigned long bits);
void path_end(void) { sink = malloc(8); free(sink); }
void branch0(int level, int levels, unsigned long bits)
{
    if (level == levels) path_end();
    else if (bits >> level & 1) branch1(level + 1, levels, bits);
    else branch0(level + 1, levels, bits);
}
void branch1(int level, int levels, unsigned long bits)
{
    if (level == levels) path_end();
    else if (bits >> level & 1) branch1(level + 1, levels, bits);
    else branch0(level + 1, levels, bits);
}

int main(int argc, char **argv)
{
    int levels = argc > 1 ? atoi(argv[1]) : 10;
    for (unsigned long bits = 0; bits < 1ul << levels; bits++) branch0(0, levels, bits);
    return 0;
}
