/* What the unit tests share: one assertion that names the file, line and
 * failing expression and ends the program with status 1 (heaptrack's
 * tst_trace style), an "ok:" line per behaviour checked, and the stubs they
 * link instead of options.c (stubs.c). Each test is one program,
 * tests/unit/NAME.c → build/unit/NAME, run by tests/unit/unit.sh. */
#ifndef MP_UNIT_H
#define MP_UNIT_H

#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

#define CHECK(expr) do { \
        if (!(expr)) { \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #expr); \
            exit(1); \
        } \
    } while (0)

/* Both sides as unsigned 64-bit numbers, printed when they differ. */
#define CHECK_EQ(actual, expected) do { \
        unsigned long long a_ = (unsigned long long)(actual), e_ = (unsigned long long)(expected); \
        if (a_ != e_) { \
            fprintf(stderr, "%s:%d: check failed: %s == %s (got %llu = %#llx, expected %llu = %#llx)\n", \
                    __FILE__, __LINE__, #actual, #expected, a_, a_, e_, e_); \
            exit(1); \
        } \
    } while (0)

#define OK(...) do { printf("  ok: " __VA_ARGS__); printf("\n"); fflush(stdout); } while (0)

/* stubs.c: mp_log counts its calls and keeps the last line. */
extern int unit_log_count;
extern char unit_log_last[1024];

/* ptrmap.c's shard of an address: its bits 12-23 XOR a hash of its 64 MiB
 * region. shard_page(region, shard, k): the k-th page of that shard from
 * the region on (4 pages 16 MiB apart in each region, then the next). */
#define SHARD_BITS 12
static inline uintptr_t shard_page(uintptr_t region, unsigned shard, uint64_t k)
{
    uintptr_t r = region + k / 4;
    return r << 26 | (uintptr_t)(k % 4) << 24 |
           (uintptr_t)((shard ^ fib_hash(r, SHARD_BITS)) & ((1u << SHARD_BITS) - 1)) << 12;
}
static inline unsigned shard_of(uintptr_t p)
{
    return (unsigned)(((p >> 12) ^ fib_hash(p >> 26, SHARD_BITS)) & ((1u << SHARD_BITS) - 1));
}

#endif
