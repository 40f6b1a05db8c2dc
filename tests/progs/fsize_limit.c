/* The program limits the size of the files it writes (tests/
 * fsize_limit.sh): RLIMIT_FSIZE 64 KiB, then 20,000 blocks of 48 bytes
 * from 2,000 distinct stacks (a profile well past 64 KiB) and snapshot
 * "big" (lost: too large); it writes its own 100-byte file (within its
 * limit) and prints "wrote 100", then exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <mallocprof.h>

void *volatile sink;
__attribute__((noinline)) static void *level(int d, int width)
{
    if (d == 0) return malloc(48);
    void *p = NULL;
    for (int i = 0; i < width; i++) p = level(d - 1, width);  /* width^d call paths, several return addresses per level */
    return p;
}

int main(void)
{
    struct rlimit r = { 64 << 10, 64 << 10 };
    if (setrlimit(RLIMIT_FSIZE, &r)) return 1;
    for (int k = 0; k < 10; k++) sink = level(3, 13);   /* 13^3 = 2197 leaves per round */
    mp_snapshot("big");
    FILE *f = fopen("own.txt", "w");
    if (!f) return 1;
    for (int i = 0; i < 100; i++) fputc('x', f);
    if (fclose(f)) return 1;
    printf("wrote 100\n");
    return 0;
}
