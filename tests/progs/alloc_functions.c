/* Deterministic allocations from named functions, one function per entry
 * point of the malloc family. Expected (per function: ncalls memtot nfree memlive):
 *   do_malloc          1000  100000  1000      0
 *   do_calloc            50   10000    50      0   (calloc(10, 20))
 *   do_realloc           20   21000    20      0   (realloc growth 100..2000, then free)
 *   do_posix_memalign    30    7680    30      0   (256 bytes, align 64)
 *   do_aligned_alloc     40    5120    40      0   (128 bytes, align 32)
 *   do_memalign          10    5120    10      0   (512 bytes, align 128)
 *   do_valloc             5     500     5      0
 *   do_leak               7    7000     0   7000
 * Totals: ncalls 1162, memtot 156420, nfree 1155, memlive 7000.
 * No stdio: its buffer would be one more allocation. Exit status 7. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void do_malloc(void)
{
    for (int i = 0; i < 1000; i++) {
        char *p = malloc(100);
        p[0] = 1;
        free(p);
    }
}

void do_calloc(void)
{
    for (int i = 0; i < 50; i++) free(calloc(10, 20));
}

void do_realloc(void)
{
    char *p = NULL;
    for (int i = 1; i <= 20; i++) {
        p = realloc(p, (size_t)i * 100);
        p[0] = 1;
    }
    free(p);
}

void do_posix_memalign(void)
{
    for (int i = 0; i < 30; i++) {
        void *p;
        if (posix_memalign(&p, 64, 256) == 0) free(p);
    }
}

void do_aligned_alloc(void)
{
    for (int i = 0; i < 40; i++) free(aligned_alloc(32, 128));
}

void do_memalign(void)
{
    for (int i = 0; i < 10; i++) free(memalign(128, 512));
}

void do_valloc(void)
{
    for (int i = 0; i < 5; i++) free(valloc(100));
}

void *leaked[7];
void do_leak(void)
{
    for (int i = 0; i < 7; i++) leaked[i] = malloc(1000);
}

int main(void)
{
    do_malloc();
    do_calloc();
    do_realloc();
    do_posix_memalign();
    do_aligned_alloc();
    do_memalign();
    do_valloc();
    do_leak();
    const char msg[] = "alloc_functions done\n";
    if (write(1, msg, sizeof msg - 1) < 0) return 1;
    return 7;
}
