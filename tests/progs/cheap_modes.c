/* Known allocations, one thread, no stdio, for the cheap modes' exact totals
 * (tests/recorder/modes_cheap.sh, tests/runtimes/valgrind_totals.sh). Live bytes in
 * the cheap modes are glibc's block sizes: malloc_usable_size(n) =
 * max(32, (n + 8 + 15) & ~15) - 8 for a heap block, and for a block glibc
 * maps (>= 128 KiB at start) the mapping, (n + 8 + 4095) & ~4095, less 16.
 *
 *   keep      1000 x malloc(100), kept         usable 104 each
 *   big          1 x malloc(1 MiB), kept       usable 1052656
 *   peak      2000 x malloc(1000), then freed  usable 1000 each: the peak
 *   pairs    10000 x malloc(24) + free
 *   zeroed      10 x calloc(10, 100) + free
 *   grow         9 x realloc 16, 32 .. 4096 (the first from NULL), then free
 *   [outer]    300 x malloc(50) + free          (tag "outer")
 *   [inner]    200 x malloc(70), 100 kept       (tags "outer", "inner"; usable 72)
 *
 * ncalls 13520, memtot 3435752, nfree 12419;
 * live at exit: requested 1155576, allocator 1163856;
 * peak (during peak): requested 3148576, allocator 3156656. */
#include <stdlib.h>
#include "mallocprof.h"

void *volatile sink;
static void *kept[1000], *held[2000], *tagged[200], *big_block;

__attribute__((noinline)) void keep(void) { for (int i = 0; i < 1000; i++) kept[i] = malloc(100); }
__attribute__((noinline)) void big(void) { big_block = malloc(1 << 20); }
__attribute__((noinline)) void peak(void)
{
    for (int i = 0; i < 2000; i++) held[i] = malloc(1000);
    for (int i = 0; i < 2000; i++) free(held[i]);
}
__attribute__((noinline)) void pairs(void) { for (int i = 0; i < 10000; i++) { sink = malloc(24); free(sink); } }
__attribute__((noinline)) void zeroed(void) { for (int i = 0; i < 10; i++) { sink = calloc(10, 100); free(sink); } }
__attribute__((noinline)) void grow(void)
{
    void *p = NULL;
    for (size_t s = 16; s <= 4096; s *= 2) p = realloc(p, s);
    free(p);
}
__attribute__((noinline)) void tagged_work(void)
{
    mp_tag_push("outer");
    for (int i = 0; i < 300; i++) { sink = malloc(50); free(sink); }
    mp_tag_push("inner");
    for (int i = 0; i < 200; i++) tagged[i] = malloc(70);
    for (int i = 0; i < 100; i++) free(tagged[i]);
    mp_tag_pop();
    mp_tag_pop();
}

int main(void)
{
    keep();
    big();
    peak();
    pairs();
    zeroed();
    grow();
    tagged_work();
    return 0;
}
