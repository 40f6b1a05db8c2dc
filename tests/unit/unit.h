/* What the recorder's unit tests share: the checks (check.h), the stubs they
 * link instead of options.c (stubs.c) and the pointer map's shard layout.
 * Each test is one program, tests/unit/NAME.c → build/unit/NAME, run by
 * tests/unit/unit.sh. */
#ifndef MP_UNIT_H
#define MP_UNIT_H

#include "check.h"
#include "symbols.h"

/* stubs.c: mp_log counts its calls and keeps the last line. */
extern int unit_log_count;
extern char unit_log_last[1024];

/* ptrmap.c's shard of an address: the group of its 64 MiB region (the
 * region's low 4 bits XOR a hash of its bits 30 and up), then its page's
 * bits 12-21. shard_page(region, shard, k): the k-th page of that shard
 * from the region's block of 16 regions on (16 pages 4 MiB apart in the
 * one region of that block in the shard's group, then the next block). */
#define SHARD_BITS 14
#define UNIT_GROUP_BITS 4
#define UNIT_PAGE_BITS (SHARD_BITS - UNIT_GROUP_BITS)
static inline uintptr_t shard_page(uintptr_t region, unsigned shard, uint64_t k)
{
    const unsigned per_region = 1u << (14 - UNIT_PAGE_BITS);
    uintptr_t hi = (region >> UNIT_GROUP_BITS) + k / per_region;
    uintptr_t r = hi << UNIT_GROUP_BITS |
                  (((shard >> UNIT_PAGE_BITS) ^ fib_hash(hi, UNIT_GROUP_BITS)) & ((1u << UNIT_GROUP_BITS) - 1));
    return r << 26 | (uintptr_t)(k % per_region) << (12 + UNIT_PAGE_BITS) |
           (uintptr_t)(shard & ((1u << UNIT_PAGE_BITS) - 1)) << 12;
}
static inline unsigned shard_of(uintptr_t p)
{
    return (unsigned)((((p >> 26) ^ fib_hash(p >> (26 + UNIT_GROUP_BITS), UNIT_GROUP_BITS)) & ((1u << UNIT_GROUP_BITS) - 1))
                          << UNIT_PAGE_BITS |
                      ((p >> 12) & ((1u << UNIT_PAGE_BITS) - 1)));
}

#endif
