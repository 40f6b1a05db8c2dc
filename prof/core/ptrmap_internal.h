/* What ptrmap.c (the map's operations) and ptrmap_walk.c (every shard at
 * once: the flush's walk, the release) share: the shards, their entries,
 * the huge blocks' list and the hand-over's state. Moved from ptrmap.c
 * verbatim (its statics, now shared, are named ptrmap_*; hidden, they are
 * read as before, without the GOT). */
#ifndef MP_PTRMAP_INTERNAL_H
#define MP_PTRMAP_INTERNAL_H

#include "record.h"

#define SHARD_BITS 14
#define NSHARDS (1 << SHARD_BITS)
_Static_assert(NSHARDS == PTRMAP_SHARDS, "record.h names the shard count");
/* A region's group: its number's low GROUP_BITS bits XOR a hash of the
 * rest (which the key keeps, so that address_of recovers them); its pages'
 * bits 12 to 12 + PAGE_BITS choose the shard in the group. */
#define GROUP_BITS 4
#define PAGE_BITS (SHARD_BITS - GROUP_BITS)
#define GROUP_OF(p) ((unsigned)((((p) >> 26) ^ fib_hash((p) >> (26 + GROUP_BITS), GROUP_BITS)) & ((1u << GROUP_BITS) - 1)))
#define SHARD_OF(p) (GROUP_OF(p) << PAGE_BITS | (unsigned)(((p) >> 12) & ((1u << PAGE_BITS) - 1)))
#define MIN_CAP 256
#define BIG_SIZE UINT32_MAX

struct entry {
    uint32_t key;               /* key_of(address) */
    uint32_t slot;              /* 0 = empty */
    uint32_t size;              /* BIG_SIZE: look in big_blocks */
};

#define MAPPABLE(p) (!((p) & 7) && (p) < (1ull << 47))
/* bits 3-11 at 0-8, bits 12 + PAGE_BITS to 25 at 9-(22 - PAGE_BITS), bits 26 + GROUP_BITS to 46 above */
#define MID_BITS (14 - PAGE_BITS)
static inline uint32_t key_of(uintptr_t p)
{
    return (uint32_t)((p >> (26 + GROUP_BITS)) << (9 + MID_BITS) |
                      ((p >> (12 + PAGE_BITS)) & ((1u << MID_BITS) - 1)) << 9 | ((p >> 3) & 0x1ff));
}

struct shard {
    atomic_flag lock;
    uint32_t cap, count;        /* cap >= MIN_CAP when table != NULL */
    struct entry *table;
    uint32_t owner;             /* a thread's map_id, 0 (none yet) or SHARED; | WALKED during a walk */
    uint32_t busy;              /* the owner is in an unlocked operation (written by the owner) */
    uint32_t last, streak;      /* shared: the latest locker and its locked operations in a row */
} __attribute__((aligned(CACHE_LINE)));

#define SHARED UINT32_MAX
#define WALKED 0x80000000u
/* A membarrier costs some microseconds (an interrupt on every CPU running
 * the process), a locked operation some nanoseconds: a shard changes hands
 * at most once per this many of them. */
#define REOWN_STREAK 4096

#define HIDDEN __attribute__((visibility("hidden")))
extern HIDDEN struct shard ptrmap_shards[NSHARDS];
extern HIDDEN int ptrmap_shards_wiped;
extern HIDDEN _Atomic int ptrmap_shared;        /* 0: one thread records, without locks */
extern HIDDEN int ptrmap_lone_busy;             /* that thread is inside an operation */
extern HIDDEN atomic_flag ptrmap_sharing;       /* one hand-over (or walk) at a time */
extern HIDDEN int ptrmap_walking;               /* a walk is under way: no shard gets an owner */

static inline uintptr_t address_of(uint32_t key, const struct shard *s)
{
    uintptr_t i = (uintptr_t)(s - ptrmap_shards), hi = (uintptr_t)(key >> (9 + MID_BITS)) << (26 + GROUP_BITS);
    uintptr_t low = ((i >> PAGE_BITS) ^ fib_hash(hi >> (26 + GROUP_BITS), GROUP_BITS)) & ((1u << GROUP_BITS) - 1);
    return hi | low << 26 | (uintptr_t)((key >> 9) & ((1u << MID_BITS) - 1)) << (12 + PAGE_BITS) |
           (i & ((1u << PAGE_BITS) - 1)) << 12 | (uintptr_t)(key & 0x1ff) << 3;
}

/* The page's place is its hash scaled to the capacity; the 256 16-byte
 * positions of the page follow it (cap >= 256, so one wrap at most). From
 * the key alone: within a shard, its bits above the page's offset name the
 * page. */
static inline uint32_t home(uint32_t key, uint32_t cap)
{
    uint32_t page = (uint32_t)fib_hash(key >> 9, 32);
    uint32_t h = (uint32_t)(((uint64_t)page * cap) >> 32) + ((key >> 1) & 0xff);
    return h >= cap ? h - cap : h;
}

static inline uint32_t next(uint32_t i, uint32_t cap) { return i + 1 == cap ? 0 : i + 1; }

/* Slots from a forward to b, around the end. */
static inline uint32_t dist(uint32_t a, uint32_t b, uint32_t cap) { return b >= a ? b - a : b + cap - a; }

int ptrmap_filter_counts(void);         /* the sparse mode: the filter counts the entries */

/* Huge blocks (>= 4 GiB): rare, a short list under its own lock. */
#define NBIG 256
struct ptrmap_big { uintptr_t ptr; uint64_t size; };
extern HIDDEN atomic_flag ptrmap_big_lock;
extern HIDDEN struct ptrmap_big ptrmap_big_blocks[NBIG];
#undef HIDDEN

#endif
