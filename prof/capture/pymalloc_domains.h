/* pymalloc's domains (pymalloc_domains.c): the allocators the recorder's
 * wrappers replace, the wrappers put in and taken out, and the map of
 * pymalloc's pools. The wrappers themselves are entry points
 * (entry/pymalloc.c): they read what is here, and reach it only through
 * the table entry hands down at its start (pymalloc_wrappers), so nothing
 * here calls up. */
#ifndef MP_PYMALLOC_DOMAINS_H
#define MP_PYMALLOC_DOMAINS_H

#include "base.h"

#define HIDDEN_DATA __attribute__((visibility("hidden")))  /* PC-relative in the wrappers */

typedef struct {
    void *ctx;
    void *(*malloc)(void *, size_t);
    void *(*calloc)(void *, size_t, size_t);
    void *(*realloc)(void *, void *, size_t);
    void (*free)(void *, void *);
} PyMemAllocatorEx;
typedef struct {
    void *ctx;
    void *(*alloc)(void *, size_t);
    void (*free)(void *, void *, size_t);
} PyObjectArenaAllocator;

/* The recorder's wrappers of the MEM and OBJ domains and of the arena
 * allocator, handed down by entry before the profiler starts (entry's
 * start.c); without them nothing is wrapped. */
struct pymalloc_wrappers { PyMemAllocatorEx mem, obj; PyObjectArenaAllocator arena; };
void pymalloc_wrappers(const struct pymalloc_wrappers *w);

/* The allocators the wrappers replaced: each wrapper calls its own with
 * its own ctx (never the one it is called with: PyMem_SetAllocator may
 * tear the pair). */
extern PyMemAllocatorEx pymalloc_old_mem HIDDEN_DATA, pymalloc_old_obj HIDDEN_DATA;
extern PyObjectArenaAllocator pymalloc_old_arena HIDDEN_DATA;

/* A detach asked for pymalloc's own allocators back (pymalloc_forget):
 * the next wrapper called, by the GIL holder, calls pymalloc_unwrap. */
extern _Atomic int pymalloc_unwrap_wanted HIDDEN_DATA;
void pymalloc_unwrap(void);

/* ------------------------------------------------------------ the pool map */

/* The cheap modes need each block's allocator size. A pymalloc block lies
 * in a pool of POOL_SIZE bytes, aligned, inside an arena; its pool's
 * header names its size class. Every arena is made by the wrapped arena
 * allocator, so a map of the pools inside arenas (one bit per pool) tells
 * a pool block from one pymalloc took from malloc (large, or no arena).
 * 3.10+'s 64-bit builds (the radix tree on, its default): pools of 16 KiB;
 * a pool header's size class index (uint szidx) at byte 36; a block of
 * class i is (i + 1) * 16 bytes (512 at most). */
#define POOL_BITS 14
#define POOL_SZIDX 36
#define LEAF_BITS 16                    /* a leaf: 2^16 pools, 1 GiB, 8 KiB of bits */
#define TOP_BITS (47 - POOL_BITS - LEAF_BITS)
extern _Atomic(_Atomic uint64_t *) *pymalloc_pool_top HIDDEN_DATA;   /* [1 << TOP_BITS]: NULL, or a leaf */
extern int pymalloc_pools_ok HIDDEN_DATA;      /* 0: the layout is not the one known (sizes 0) */
extern _Atomic int pymalloc_pool_checks HIDDEN_DATA;   /* small allocations checked against their class */

static inline int pymalloc_in_pools(const void *p)
{
    uintptr_t i = (uintptr_t)p >> POOL_BITS;
    if (unlikely(!pymalloc_pool_top || i >> (LEAF_BITS + TOP_BITS))) return 0;
    _Atomic uint64_t *leaf = atomic_load_explicit(&pymalloc_pool_top[i >> LEAF_BITS], memory_order_acquire);
    i &= ((uintptr_t)1 << LEAF_BITS) - 1;
    return leaf && (atomic_load_explicit(&leaf[i >> 6], RELAXED) >> (i & 63) & 1);
}

static inline size_t pymalloc_pool_block_size(const void *p)
{
    const char *pool = (const char *)((uintptr_t)p & ~(((uintptr_t)1 << POOL_BITS) - 1));
    return ((size_t)*(const uint32_t *)(pool + POOL_SZIDX) + 1) << 4;
}

void pymalloc_pools_bad(const char *why);      /* said once; sizes 0 from then on */
void pymalloc_pools_mark(void *p, size_t n, int on);   /* an arena made (on) or freed */

/* ------------------------------------------------------------ python.c's */

/* python_init's, once the interpreter is known: `started` its runtime's
 * initialized flag, `full` full capture (mp_track_all). */
void pymalloc_init(int started, int full);
void pymalloc_session_start(void);     /* python_session_start's */

#endif
