/* What the recorder's unit tests share: the checks (check.h), the stubs they
 * link instead of options.c (stubs.c) and the pointer map's shard layout.
 * Each test is one program, tests/unit/NAME.c → build/unit/NAME, run by
 * tests/unit/unit.sh. */
#ifndef MP_UNIT_H
#define MP_UNIT_H

#include "check.h"
#include "internal.h"

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
