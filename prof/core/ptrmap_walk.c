/* The pointer map's shards all at once (ptrmap.c does one block at a
 * time): the flush's walk of every live block, the locks of a fork, the
 * release at the end of an attach session. Moved from ptrmap.c verbatim
 * (the shared statics are named ptrmap_*: ptrmap_internal.h). */
#include "record.h"
#include "ptrmap_internal.h"

#include <stdio.h>

#include <linux/membarrier.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int walk_forced;

/* The end of an attach session: every table unmapped and the shards'
 * and the filter's pages given back, with no operation under way (the
 * walk's drain, then every lock). Zero is the empty map, its locks free:
 * a hook reached afterwards (through a copy of its address) starts a
 * table again, a free finds nothing. */
static void pages_zero(void *p, size_t n, int anonymous)
{
    uintptr_t lo = ((uintptr_t)p + PAGE_SIZE - 1) & ~(uintptr_t)(PAGE_SIZE - 1);
    uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)(PAGE_SIZE - 1);
    if (!anonymous || hi <= lo || madvise((void *)lo, hi - lo, MADV_DONTNEED) != 0) lo = hi = (uintptr_t)p + n;
    memset(p, 0, lo - (uintptr_t)p);
    memset((void *)hi, 0, (uintptr_t)p + n - hi);
}

void ptrmap_release(void)
{
    ptrmap_walk_begin();
    ptrmap_lock_all();
    for (int i = 0; i < NSHARDS; i++)
        if (ptrmap_shards[i].table) mp_unmap(ptrmap_shards[i].table, (size_t)ptrmap_shards[i].cap * sizeof *ptrmap_shards[i].table);
    memset(ptrmap_big_blocks, 0, sizeof ptrmap_big_blocks);
    pages_zero(ptrmap_filter, sizeof ptrmap_filter, 1);
    ptrmap_walking = 0;
    /* the shards' own pages (anonymous where the fork advice took) */
    if (ptrmap_shards_wiped && madvise(ptrmap_shards, sizeof ptrmap_shards, MADV_DONTNEED) == 0) {
        spin_unlock(&ptrmap_big_lock);
    } else {
        for (int i = 0; i < NSHARDS; i++) {
            struct shard *s = &ptrmap_shards[i];
            s->table = NULL, s->cap = s->count = 0, s->owner = s->busy = s->last = s->streak = 0;
            spin_unlock(&s->lock);
        }
        spin_unlock(&ptrmap_big_lock);
    }
    if (walk_forced) walk_forced = 0, atomic_store(&ptrmap_shared, 0);
    spin_unlock(&ptrmap_sharing);
}

/* ------------------------------------------------------------ the flush's walk */

/* The walk of every live block (cold.c) reads shard by shard under the
 * shard's lock while the program goes on. The lone thread and the shards'
 * owners take no lock: for the walk they are switched to locking, as a
 * hand-over does (an owner's shards marked WALKED, one membarrier for all),
 * and back after (a second thread's hand-over waits for the walk on
 * `sharing`). */
void ptrmap_walk_begin(void)
{
    spin_lock(&ptrmap_sharing);
    int marked = 0;
    for (int i = 0; i < NSHARDS; i++) {
        struct shard *s = &ptrmap_shards[i];
        spin_lock(&s->lock);
        uint32_t o = LOAD(s->owner);
        if (o && o != SHARED) __atomic_store_n(&s->owner, o | WALKED, __ATOMIC_RELAXED), marked = 1;
        ptrmap_walking = 1;
        spin_unlock(&s->lock);
    }
    if (!atomic_load(&ptrmap_shared)) walk_forced = 1, atomic_store(&ptrmap_shared, 1);
    if (walk_forced || marked) syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);
    while (__atomic_load_n(&ptrmap_lone_busy, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
    for (int i = 0; i < NSHARDS; i++)
        while (__atomic_load_n(&ptrmap_shards[i].busy, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
}

/* The lone thread may still be in a locked operation: it holds that
 * shard's lock, which nobody else wants any more. */
void ptrmap_walk_end(void)
{
    for (int i = 0; i < NSHARDS; i++) {
        struct shard *s = &ptrmap_shards[i];
        spin_lock(&s->lock);
        uint32_t o = LOAD(s->owner);
        if (o != SHARED && (o & WALKED)) __atomic_store_n(&s->owner, o & ~WALKED, __ATOMIC_RELEASE);
        ptrmap_walking = 0;
        spin_unlock(&s->lock);
    }
    if (walk_forced) walk_forced = 0, atomic_store(&ptrmap_shared, 0);
    spin_unlock(&ptrmap_sharing);
}

/* Shard `i`'s blocks into out (when they fit in cap); returns how many it
 * holds. Between walk_begin and walk_end. */
size_t ptrmap_shard_copy(unsigned i, struct ptrmap_block *out, size_t cap)
{
    struct shard *s = &ptrmap_shards[i];
    spin_lock(&s->lock);
    size_t n = s->count;
    if (n <= cap && s->table) {
        size_t k = 0;
        for (uint32_t j = 0; j < s->cap; j++) {
            const struct entry *e = &s->table[j];
            if (!e->slot) continue;
            uintptr_t p = address_of(e->key, s);
            uint64_t size = e->size;
            if (size == BIG_SIZE) {     /* lock order: a shard, then big_lock (nobody holds them the other way) */
                spin_lock(&ptrmap_big_lock);
                for (int b = 0; b < NBIG; b++)
                    if (ptrmap_big_blocks[b].ptr == p) size = ptrmap_big_blocks[b].size;
                spin_unlock(&ptrmap_big_lock);
            }
            out[k++] = (struct ptrmap_block){ p, size, e->slot };
        }
    }
    spin_unlock(&s->lock);
    return n;
}

void ptrmap_lock_all(void)
{
    for (int i = 0; i < NSHARDS; i++) spin_lock(&ptrmap_shards[i].lock);
    spin_lock(&ptrmap_big_lock);
}

void ptrmap_unlock_all(void)
{
    spin_unlock(&ptrmap_big_lock);
    for (int i = 0; i < NSHARDS; i++) spin_unlock(&ptrmap_shards[i].lock);
}


/* ------------------------------------------------------------ the expensive level */

/* Every shard's table whole (nothing else working in the map): its count
 * the entries it holds, at most 3/4 full, each entry reachable from its
 * home without an empty slot between (linear probing with backward-shift
 * deletion keeps no holes), and in the sparse mode counted in its filter
 * bucket. 0, or -1 with the
 * first broken one said in why. */
int ptrmap_validate(char *why, size_t n)
{
    for (unsigned i = 0; i < NSHARDS; i++) {
        const struct shard *s = &ptrmap_shards[i];
        if (!s->table) {
            if (s->count) return snprintf(why, n, "shard %u: count %u without a table", i, s->count), -1;
            continue;
        }
        uint32_t held = 0;
        if (s->cap < MIN_CAP || s->count * 4 > s->cap * 3)
            return snprintf(why, n, "shard %u: %u entries in %u slots (at most 3/4, at least %d slots)", i, s->count,
                            s->cap, MIN_CAP), -1;
        for (uint32_t j = 0; j < s->cap; j++) {
            const struct entry *e = &s->table[j];
            if (!e->slot) continue;
            held++;
            uintptr_t p = address_of(e->key, s);
            for (uint32_t k = home(e->key, s->cap); k != j; k = next(k, s->cap))
                if (!s->table[k].slot)
                    return snprintf(why, n, "shard %u slot %u: an empty slot %u between its home and it", i, j, k), -1;
            if (ptrmap_filter_counts() && !ptrmap_may_hold(p))
                return snprintf(why, n, "shard %u slot %u: %#lx not in its filter bucket", i, j, (unsigned long)p), -1;
        }
        if (held != s->count) return snprintf(why, n, "shard %u: count %u, %u entries held", i, s->count, held), -1;
    }
    return 0;
}
