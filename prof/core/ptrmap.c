/* Block address → (counter slot, size) for every live block the profiler
 * recorded, so that free can find what to decrement.
 *
 * Sharded (16384 shards, one spin lock each, never held while calling out)
 * by the 64 MiB region of the address and its page: a region's pages go
 * to one group of 1024 shards (the page's bits 12-21 choose among them), the
 * group a mix of the region's number (16 groups; up to 16 neighbouring
 * regions in different ones). glibc gives each thread's arena heaps of their own, 64
 * MiB aligned, so that a thread's blocks are in shards no other thread's
 * heap uses (see "Owned shards"). Two heaps in one group (8 threads'
 * heaps and the main heap: about half of churn's runs) share shards,
 * which lock; more groups made that rare (1 run in 10 with 64 or 256)
 * but cost more than the locks: a shard then holds 4 or 16 times as many
 * of a heap's pages, whose 256-slot windows overlap (churn, 1 thread:
 * +36 and +80 instructions a malloc/free pair; 8 threads: +9 % and
 * +14 % CPU time). Within a shard, open addressing with linear probing
 * and backward-shift deletion (no tombstones). The slot index keeps the 256 16-byte positions of a page in neighbouring slots
 * (low bits from address >> 4) so that the inserts and erases of a program
 * walking its heap touch few cache lines, and scatters pages with a
 * multiplicative hash of the page number.
 * 12 bytes an entry: the address is kept in 32 bits, as its bits 3-11,
 * 22-25 and 30-46 (bits 12-21 and 26-29 follow from the shard's number;
 * blocks are 8-byte aligned at least and user addresses are below 2^47: a
 * block that is not is counted and its free is "unknown"). A shard starts
 * at 256 slots and grows by half at 3/4 load (capacities are not powers of
 * two: the table stays between 1/2 and 3/4 full, not 3/8 and 3/4 as with
 * doubling): 16 to 24 bytes per live block. Blocks of 4 GiB or more keep
 * their size in a small side table.
 *
 * Lone-thread mode: while only one thread records (most programs, and
 * every program until it starts its second thread), its operations take no
 * shard lock, whose locked instruction was half the cost of an insert or a
 * remove. The thread marks itself busy with a plain store and then checks
 * the mode; the second recording thread, before its first operation,
 * switches the mode, runs membarrier(PRIVATE_EXPEDITED) (a full barrier on
 * every running thread of the process, so the lone thread either sees the
 * switch or its busy mark is seen) and waits until the lone thread is not
 * busy. From then on the shards are owned or locked. Without membarrier
 * the map always locks.
 *
 * Owned shards (after the hand-over): the first thread to use a shard
 * (under its lock) becomes its owner, and works in it as the lone thread
 * did in the whole map: the shard's busy mark, a plain store, then the
 * owner checked again. Another thread's operation in an owned shard (a
 * cross-thread free, a heap given to a new thread) takes the lock, revokes
 * the ownership (owner = SHARED, membarrier, wait until the shard is not
 * busy) and everyone locks that shard, until one thread has made
 * REOWN_STREAK locked operations in a row there: it becomes the owner
 * again (a heap's shard that another thread freed a block in, or that
 * passed to a new thread with its arena). So a thread working in its own
 * heap takes no locked instruction, and a shard costs at most one
 * membarrier per REOWN_STREAK locked operations.
 *
 * Sparse mode (the cheap modes, where only sampled blocks are tracked):
 * most frees are of blocks the map does not hold, and must not pay a shard
 * lock to learn it. A counting filter, one byte per hash bucket of
 * addresses, says which buckets may hold a tracked block: a new entry
 * increments its bucket, a removal decrements it, and a bucket that
 * reaches 255 stays there (always "maybe"). A free whose bucket is 0 is
 * not looked up (ptrmap_may_hold, inlined in the caller). The program's own ordering (no free of a block before its
 * malloc returned) makes the insertion's increment visible to the free. */
#include "record.h"
#include "ptrmap_internal.h"

#include <linux/membarrier.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>


/* Page-aligned, whole pages (1 MiB), wiped on fork (ptrmap_init): a fork
 * child starts with an empty map, so fork shares none of its pages and
 * neither process takes a copy-on-write fault on them (the parent's
 * unlock after the fork wrote all 256 of them, the child's reset again:
 * with a second thread, each fault a TLB shootdown; 85 ms a fork). The
 * tables are not inherited at all (mp_map_unforked). */
struct shard ptrmap_shards[NSHARDS] __attribute__((aligned(4096)));
_Static_assert(sizeof ptrmap_shards % 4096 == 0, "whole pages");
int ptrmap_shards_wiped;

uint8_t ptrmap_filter[1 << PTRMAP_FILTER_BITS];
static int sparse;

int ptrmap_filter_counts(void) { return sparse; }

static inline uint8_t *bucket_of(uintptr_t p) { return &ptrmap_filter[fib_hash(p >> 4, PTRMAP_FILTER_BITS)]; }

static void filter_add(uintptr_t p, int delta)
{
    uint8_t *b = bucket_of(p), v = __atomic_load_n(b, __ATOMIC_RELAXED);
    while (v != 255 && !__atomic_compare_exchange_n(b, &v, (uint8_t)(v + delta), 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
}
static _Atomic uint64_t unmappable;     /* blocks the map could not take */


atomic_flag ptrmap_big_lock = ATOMIC_FLAG_INIT;
struct ptrmap_big ptrmap_big_blocks[NBIG];


/* ------------------------------------------------------------ lone thread */

_Atomic int ptrmap_shared = 1;  /* 0: one thread records, without locks */
int ptrmap_lone_busy;           /* that thread is inside an operation */
/* Set once the lone thread is out of the map for good: until then a thread
 * that finds `shared` set must not go in either (a third thread whose first
 * operation comes during the hand-over would work, locked, beside the lone
 * thread's unlocked operation). */
static _Atomic int handed_over = 1;
atomic_flag ptrmap_sharing = ATOMIC_FLAG_INIT;      /* one hand-over at a time */

static int membarrier_registered(void)
{
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
    return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0;
}

/* Shards may be owned: membarrier works (else every shard locks). */
static int owning;
static _Atomic uint32_t map_ids;
static MP_TLS uint32_t map_id;          /* the thread's, 0 until its first owned-mode operation */
int ptrmap_walking;                     /* a walk is under way: no shard gets an owner */

/* 1 (ptrmap_init): a fork child's shards are zero and the tables made from
 * now on not inherited; 0: the child gets a copy, as of any memory (the
 * unit tests look at the locks through a fork child's copy of the map). */
static int tables_unforked;

void ptrmap_wipe_on_fork(int on)
{
    ptrmap_shards_wiped = madvise(ptrmap_shards, sizeof ptrmap_shards, on ? MADV_WIPEONFORK : MADV_KEEPONFORK) == 0 && on;
    tables_unforked = on;
}

void ptrmap_init(int sparse_mode)
{
    sparse = sparse_mode;
    ptrmap_wipe_on_fork(1);
    owning = membarrier_registered();
    if (owning) atomic_store(&ptrmap_shared, 0), atomic_store(&handed_over, 0);
}

void ptrmap_share(void)
{
    if (atomic_load_explicit(&handed_over, memory_order_acquire)) return;
    spin_lock(&ptrmap_sharing);
    if (!atomic_load(&ptrmap_shared)) {
        atomic_store(&ptrmap_shared, 1);
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);
        while (__atomic_load_n(&ptrmap_lone_busy, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
    }
    atomic_store_explicit(&handed_over, 1, memory_order_release);
    spin_unlock(&ptrmap_sharing);
}

static uint32_t self_id(void)
{
    if (unlikely(!map_id)) map_id = (atomic_fetch_add_explicit(&map_ids, 1, RELAXED) % (WALKED - 1)) + 1;
    return map_id;
}

/* A shared shard's locked operation by me: the owner's after a streak. */
static void shard_streak(struct shard *s, uint32_t me)
{
    if (s->last != me) s->last = me, s->streak = 0;
    if (++s->streak >= REOWN_STREAK && !ptrmap_walking) __atomic_store_n(&s->owner, me, __ATOMIC_RELEASE);
}

/* Under the shard's lock, before a locked operation by thread `me`: a
 * shard without owner becomes me's (its next operations go unlocked); one
 * owned by another thread is shared from now on, once its owner is out of
 * any unlocked operation (the membarrier: see the file's head). */
static void shard_settle(struct shard *s, uint32_t me)
{
    uint32_t o = LOAD(s->owner);
    if (!owning) return;
    if (o == SHARED) {
        shard_streak(s, me);
        return;
    }
    if ((o & ~WALKED) == me) return;    /* its owner's, during a walk: kept */
    if (o == 0) {
        if (!ptrmap_walking) __atomic_store_n(&s->owner, me, __ATOMIC_RELEASE);
        return;
    }
    __atomic_store_n(&s->owner, SHARED, __ATOMIC_RELAXED);
    s->last = me, s->streak = 1;
    if (o & WALKED) return;             /* the walk made sure its owner is out */
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);
    while (__atomic_load_n(&s->busy, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
}

enum how { LOCKED, LONE, OWNED };

/* The slow way in: the shard's lock (then settled). */
static __attribute__((noinline)) enum how shard_lock(struct shard *s, uint32_t me)
{
    spin_lock(&s->lock);
    shard_settle(s, me);
    return LOCKED;
}

/* The shard, locked unless the lone thread or its owner may go without. */
static inline __attribute__((always_inline)) struct shard *shard_enter(uintptr_t ptr, enum how *how)
{
    struct shard *s = &ptrmap_shards[SHARD_OF(ptr)];
    if (likely(!atomic_load_explicit(&ptrmap_shared, RELAXED))) {
        STORE(ptrmap_lone_busy, 1);
        atomic_signal_fence(memory_order_seq_cst);  /* ptrmap_share's membarrier orders the rest */
        if (likely(!atomic_load_explicit(&ptrmap_shared, RELAXED))) return *how = LONE, s;
        STORE(ptrmap_lone_busy, 0);
    }
    uint32_t me = self_id();
    if (likely(LOAD(s->owner) == me)) {
        STORE(s->busy, 1);
        atomic_signal_fence(memory_order_seq_cst);  /* shard_settle's membarrier orders the rest */
        if (likely(LOAD(s->owner) == me)) return *how = OWNED, s;
        __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
    }
    *how = shard_lock(s, me);
    return s;
}

static inline void shard_leave(struct shard *s, enum how how)
{
    if (how == LONE) __atomic_store_n(&ptrmap_lone_busy, 0, __ATOMIC_RELEASE);
    else if (how == OWNED) __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
    else spin_unlock(&s->lock);
}

static int grow(struct shard *s)
{
    uint32_t cap = s->table ? s->cap + s->cap / 2 : MIN_CAP;
    size_t bytes = (size_t)cap * sizeof(struct entry);
    struct entry *t = tables_unforked ? mp_map_unforked(bytes) : mp_map(bytes, 0);
    if (!t) return -1;
    if (s->table) {
        for (uint32_t i = 0; i < s->cap; i++) {
            struct entry e = s->table[i];
            if (!e.slot) continue;
            uint32_t j = home(e.key, cap);
            while (t[j].slot) j = next(j, cap);
            t[j] = e;
        }
        mp_unmap(s->table, (size_t)s->cap * sizeof *t);
    }
    s->table = t;
    s->cap = cap;
    return 0;
}

/* An address already there (a block freed behind our back) gets its new
 * size; past NBIG live huge blocks, a size is lost (reads back as BIG_SIZE). */
static void big_put(uintptr_t ptr, uint64_t size)
{
    spin_lock(&ptrmap_big_lock);
    int at = -1;
    for (int i = 0; i < NBIG; i++) {
        if (ptrmap_big_blocks[i].ptr == ptr) {
            at = i;
            break;
        }
        if (!ptrmap_big_blocks[i].ptr && at < 0) at = i;
    }
    if (at >= 0) ptrmap_big_blocks[at].ptr = ptr, ptrmap_big_blocks[at].size = size;
    spin_unlock(&ptrmap_big_lock);
}

static uint64_t big_take(uintptr_t ptr)
{
    uint64_t size = BIG_SIZE;
    spin_lock(&ptrmap_big_lock);
    for (int i = 0; i < NBIG; i++)
        if (ptrmap_big_blocks[i].ptr == ptr) {
            size = ptrmap_big_blocks[i].size;
            ptrmap_big_blocks[i].ptr = 0;
            break;
        }
    spin_unlock(&ptrmap_big_lock);
    return size;
}

/* A hint, before work that does not need the map (record_full_alloc's
 * unwind): the line ptrmap_insert will probe first is loaded meanwhile.
 * That first probe was a cache miss in most inserts (perf annotate, python
 * json: 60 % of ptrmap_insert's samples on it; 14 % with the hint). The
 * shard's table and capacity are read without its lock (a table being
 * replaced: a prefetch of an unmapped address does not fault). A
 * prefetch of the shard's line first, and of the entry's after the
 * unwind, measured worse (the entry's miss then lands on the counters). */
void ptrmap_prefetch(uintptr_t ptr)
{
    if (unlikely(!MAPPABLE(ptr))) return;
    struct shard *s = &ptrmap_shards[SHARD_OF(ptr)];
    struct entry *table = __atomic_load_n(&s->table, __ATOMIC_RELAXED);
    uint32_t cap = __atomic_load_n(&s->cap, __ATOMIC_RELAXED);
    if (table && cap) __builtin_prefetch(&table[home(key_of(ptr), cap)], 1);
}

/* runs inside malloc: one shard lock, no allocation but the shard's mmap */
void ptrmap_insert(uintptr_t ptr, uint32_t slot, uint64_t size)
{
    if (unlikely(!slot)) return;        /* no counter slot (out of memory): nothing to find */
    if (unlikely(!MAPPABLE(ptr))) {
        if (!atomic_fetch_add_explicit(&unmappable, 1, RELAXED))
            mp_log("warning", "a block at %#lx cannot be mapped: its free will count as unknown",
                   (unsigned long)ptr);
        return;
    }
    uint32_t size32 = size >= BIG_SIZE ? BIG_SIZE : (uint32_t)size;
    if (size32 == BIG_SIZE) big_put(ptr, size);
    enum how lone;
    struct shard *s = shard_enter(ptr, &lone);
    if ((!s->table || (s->count + 1) * 4 > s->cap * 3) && grow(s) != 0) {
        shard_leave(s, lone);             /* out of memory: the free will count as unknown */
        return;
    }
    uint32_t key = key_of(ptr), i = home(key, s->cap);
    while (s->table[i].slot && s->table[i].key != key) i = next(i, s->cap);
    int stale_big = s->table[i].slot && s->table[i].size == BIG_SIZE && size32 != BIG_SIZE;
    if (!s->table[i].slot) {            /* else: a block freed behind our back */
        s->count++;
        if (sparse) filter_add(ptr, 1);
    }
    MP_ASSERT(s->count * 4 <= s->cap * 3);
    s->table[i] = (struct entry){ key, slot, size32 };
    shard_leave(s, lone);
    if (stale_big) big_take(ptr);       /* its huge predecessor's size */
}

/* runs inside free: backward-shift deletion keeps probe chains intact */
int ptrmap_remove(uintptr_t ptr, uint32_t *slot, uint64_t *size)
{
    if (unlikely(!MAPPABLE(ptr))) return 0;
    enum how lone;
    struct shard *s = shard_enter(ptr, &lone);
    if (!s->table) {
        shard_leave(s, lone);
        return 0;
    }
    uint32_t key = key_of(ptr), cap = s->cap, i = home(key, cap);
    while (!(s->table[i].key == key && s->table[i].slot)) {
        if (!s->table[i].slot) {
            shard_leave(s, lone);
            return 0;
        }
        i = next(i, cap);
    }
    *slot = s->table[i].slot;
    uint32_t size32 = s->table[i].size;
    for (uint32_t j = next(i, cap); s->table[j].slot; j = next(j, cap)) {
        uint32_t h = home(s->table[j].key, cap);
        /* move entry j back into the hole at i if its home is not in (i, j] */
        if (dist(h, j, cap) >= dist(i, j, cap)) {
            s->table[i] = s->table[j];
            i = j;
        }
    }
    s->table[i].slot = 0;
    MP_ASSERT(s->count > 0);
    s->count--;
    if (sparse) filter_add(ptr, -1);
    shard_leave(s, lone);
    *size = size32 == BIG_SIZE ? big_take(ptr) : size32;
    return 1;
}

/* In a fork child (one thread): it keeps the parent's mode, registered
 * again for membarrier (or locking from now on if that fails). */
void ptrmap_reset(int fork_child)
{
    ptrmap_lone_busy = 0;
    if (owning && !membarrier_registered()) owning = 0, atomic_store(&ptrmap_shared, 1);
    ptrmap_walking = 0;
    atomic_store(&handed_over, atomic_load(&ptrmap_shared));
    atomic_flag_clear(&ptrmap_sharing);        /* a fork during a hand-over: the child has one thread */
    /* a fork child: the shards wiped (zero is empty), the tables not
     * there (or, where the advice failed, the parent's: left as they are) */
    for (int i = 0; i < NSHARDS && !(fork_child && ptrmap_shards_wiped); i++) {
        struct shard *s = &ptrmap_shards[i];
        if (!fork_child) mp_unmap(s->table, s->table ? (size_t)s->cap * sizeof *s->table : 0);
        s->table = NULL;
        s->cap = s->count = 0;
        s->owner = s->busy = s->last = s->streak = 0;
        atomic_flag_clear(&s->lock);
    }
    memset(ptrmap_big_blocks, 0, sizeof ptrmap_big_blocks);
    memset(ptrmap_filter, 0, sizeof ptrmap_filter);
    atomic_store(&unmappable, 0);
    atomic_flag_clear(&ptrmap_big_lock);
}
