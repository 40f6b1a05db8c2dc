/* 1 M malloc/free pairs of small blocks (32..95 bytes), one thread: the
 * cheap modes' cost per pair, measured with callgrind (issue 31). */
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    for (long i = 0; i < n; i++) {
        void *volatile p = malloc(32 + (i & 63));
        free(p);
    }
    return 0;
}
