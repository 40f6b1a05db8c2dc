/* The profiler's own memory: mmap'd, counted, capped by MP_MAX_MEMORY.
 * The cap applies to what grows with distinct stacks (stack records, counter
 * slots, hash tables); the pointer map, which grows with the program's live
 * blocks, is exempt: dropping entries would make the totals wrong.
 * arena_alloc is a bump allocator over 1 MB chunks behind one spin lock; it
 * is called only when something new appears (a thread, a stack, a slot
 * chunk), never per allocation. Nothing here calls malloc. */
#include "base.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHUNK (1u << 20)

static atomic_flag arena_lock = ATOMIC_FLAG_INIT;
static char *chunk_pos, *chunk_end;
static _Atomic uint64_t mapped_bytes;
static _Atomic uint64_t unforked_bytes;     /* of them, mp_map_unforked's */
static _Atomic int exhausted;
static _Atomic uint64_t reserved;           /* of the cap, held back (mp_memory_reserve) */
static _Atomic uint64_t share, share_used;  /* the reserve given (mp_memory_use_reserve), what it gave */
static int mp_range_mark(enum range_owner o, void *p, size_t size);


/* A capped request fits under the cap less the reserve, or once the
 * reserve is given, in what is left of it (whatever the uncapped
 * mappings, the pointer map and the heap, took meanwhile). */
static int cap_allows(size_t size)
{
    if (atomic_load_explicit(&mapped_bytes, RELAXED) + size + atomic_load_explicit(&reserved, RELAXED) <=
        mp_opt.max_memory)
        return 1;
    uint64_t given = atomic_load_explicit(&share, RELAXED);
    if (!given || atomic_fetch_add(&share_used, size) + size <= given) return given != 0;
    atomic_fetch_sub(&share_used, size);
    return 0;
}

void *mp_map(size_t size, int capped)
{
    if (capped && mp_opt.max_memory && !cap_allows(size)) {
        atomic_store_explicit(&exhausted, 1, RELAXED);      /* the caller says it (record_memory_full) */
        return NULL;
    }
    void *p = mp_sys_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    atomic_fetch_add_explicit(&mapped_bytes, size, RELAXED);
    mp_range_add(RANGES_PROFILER, p, size);
    return p;
}



void mp_unmap(void *p, size_t size)
{
    if (!p) return;
    mp_sys_munmap(p, size);
    atomic_fetch_sub_explicit(&mapped_bytes, size, RELAXED);
    if (mp_range_remove(RANGES_PROFILER, p, size)) atomic_fetch_sub_explicit(&unforked_bytes, size, RELAXED);
}

/* A mapping a fork child does not get (MADV_DONTFORK: what the child
 * starts without, the pointer map's tables): fork neither copies its page
 * tables nor leaves its pages shared, so neither process takes a
 * copy-on-write fault on it afterwards. Its range is marked (bit 0 of lo),
 * so that the child forgets it (mp_arena_after_fork_child). Where the
 * advice fails, the mapping is inherited as any other. */
void *mp_map_unforked(size_t size)
{
    void *p = mp_map(size, 0);
    if (p && madvise(p, size, MADV_DONTFORK) == 0 && mp_range_mark(RANGES_PROFILER, p, size))
        atomic_fetch_add_explicit(&unforked_bytes, size, RELAXED);
    return p;
}


/* ------------------------------------------------------------ known ranges */

/* Ranges the ledger gives to a line by owner (the kernel merges adjacent
 * anonymous mappings: only the ranges tell them from the program's): the
 * profiler's mappings ('profiler') and another allocator's arenas that the
 * profiler counts as heap (pymalloc's, 'heap'). Fixed tables: the
 * profiler's mappings are few (1 MB chunks, the large tables), pymalloc's
 * arenas 1 MiB (256 KiB before 3.10) each; past a table, the rest count
 * as unexplained. */
static struct range_table {
    struct own_range *r;
    size_t n, cap;
    atomic_flag lock;
} tables[RANGES_N] = {
    [RANGES_PROFILER] = { (struct own_range[4096]){ { 0, 0 } }, 0, 4096, ATOMIC_FLAG_INIT },
    [RANGES_HEAP] = { (struct own_range[16384]){ { 0, 0 } }, 0, 16384, ATOMIC_FLAG_INIT },
};
MP_TLS int mp_own_counting;
_Atomic int64_t mp_own_heap;

void mp_range_add(enum range_owner o, void *p, size_t size)
{
    struct range_table *t = &tables[o];
    spin_lock(&t->lock);
    if (t->n < t->cap) t->r[t->n++] = (struct own_range){ (uintptr_t)p, (uintptr_t)p + size };
    spin_unlock(&t->lock);
}

/* 1: the range was marked (mp_map_unforked) */
int mp_range_remove(enum range_owner o, void *p, size_t size)
{
    struct range_table *t = &tables[o];
    int marked = 0;
    spin_lock(&t->lock);
    for (size_t i = 0; i < t->n; i++)
        if ((t->r[i].lo & ~(uintptr_t)1) == (uintptr_t)p && t->r[i].hi == (uintptr_t)p + size) {
            marked = (int)(t->r[i].lo & 1);
            t->r[i] = t->r[--t->n];
            break;
        }
    spin_unlock(&t->lock);
    return marked;
}

/* The range just added for p, marked; 0 if it is not there (the table full) */
static int mp_range_mark(enum range_owner o, void *p, size_t size)
{
    struct range_table *t = &tables[o];
    int found = 0;
    spin_lock(&t->lock);
    for (size_t i = t->n; i-- > 0;)
        if (t->r[i].lo == (uintptr_t)p && t->r[i].hi == (uintptr_t)p + size) {
            t->r[i].lo |= 1;
            found = 1;
            break;
        }
    spin_unlock(&t->lock);
    return found;
}

size_t mp_ranges(enum range_owner o, struct own_range *out, size_t max)
{
    struct range_table *t = &tables[o];
    spin_lock(&t->lock);
    size_t n = t->n;
    for (size_t i = 0; i < n && i < max; i++) out[i] = (struct own_range){ t->r[i].lo & ~(uintptr_t)1, t->r[i].hi };
    spin_unlock(&t->lock);
    return n;
}

/* The fork child (one thread): the locks a thread of the parent held are
 * free, the mappings it did not inherit forgotten. */
void mp_arena_after_fork_child(void)
{
    atomic_flag_clear(&arena_lock);
    for (int o = 0; o < RANGES_N; o++) {
        struct range_table *t = &tables[o];
        atomic_flag_clear(&t->lock);
        for (size_t i = 0; i < t->n;)
            if (t->r[i].lo & 1) t->r[i] = t->r[--t->n];
            else i++;
    }
    atomic_fetch_sub_explicit(&mapped_bytes, atomic_exchange(&unforked_bytes, 0), RELAXED);
}

/* grow_array's twin over the profiler's own mappings, for a buffer a
 * snapshot fills (the ledger's): never in the program's heap, so that a
 * fork child's snapshot does not walk the heap's free chunks it shares with
 * its parent (a copy-on-write fault each), and the heap's figures hold no
 * bytes of ours. New room is zero; *n becomes what whole pages hold. */
int mp_grow_mapped(void *pp, size_t *n, size_t need, size_t elem)
{
    if (need <= *n) return 0;
    size_t cap = *n ? *n : 256;
    while (cap < need) cap *= 2;
    size_t bytes = (cap * elem + PAGE_SIZE - 1) & ~(size_t)(PAGE_SIZE - 1);
    char *p = mp_map(bytes, 0);
    if (!p) return -1;
    if (*n) {
        memcpy(p, *(void **)pp, *n * elem);
        mp_unmap(*(void **)pp, (*n * elem + PAGE_SIZE - 1) & ~(size_t)(PAGE_SIZE - 1));
    }
    *(void **)pp = p;
    *n = bytes / elem;
    return 0;
}

/* What mp_grow_mapped grew, given back: *pp NULL, *n 0. */
void mp_ungrow_mapped(void *pp, size_t *n, size_t elem)
{
    mp_unmap(*(void **)pp, (*n * elem + PAGE_SIZE - 1) & ~(size_t)(PAGE_SIZE - 1));
    *(void **)pp = NULL;
    *n = 0;
}

/* Every mapping arena_alloc made (its chunks, its large blocks), for
 * arena_forget; past the table, a mapping stays for the process's life. */
#define ARENA_MAPS 8192
static struct own_range arena_maps[ARENA_MAPS];
static size_t narena_maps;

/* A mapping of `size` bytes for the arena, listed (under arena_lock). */
static void *arena_map(size_t size, int capped)
{
    char *p = mp_map(size, capped);
    if (p && narena_maps < ARENA_MAPS) arena_maps[narena_maps++] = (struct own_range){ (uintptr_t)p, (uintptr_t)p + size };
    return p;
}

void *arena_alloc(size_t size, int capped)
{
    size = (size + 63) & ~(size_t)63;   /* cache-line aligned: no false sharing */
    spin_lock(&arena_lock);
    if (size >= CHUNK / 4) {
        void *p = arena_map((size + PAGE_SIZE - 1) & ~(size_t)(PAGE_SIZE - 1), capped);
        spin_unlock(&arena_lock);
        return p;
    }
    if (!chunk_pos || (size_t)(chunk_end - chunk_pos) < size) {
        char *c = arena_map(CHUNK, capped);
        if (!c) {
            spin_unlock(&arena_lock);
            return NULL;
        }
        chunk_pos = c;
        chunk_end = c + CHUNK;
    }
    void *p = chunk_pos;
    chunk_pos += size;
    spin_unlock(&arena_lock);
    return p;
}

/* The end of an attach session (attach.c), when nothing can reach a block
 * of the arena any more (threads_forget: the records, slots, stack nodes,
 * Python frames and the GOT's list are forgotten first): every mapping
 * given back, MP_MAX_MEMORY's count with them. */
void arena_forget(void)
{
    spin_lock(&arena_lock);
    for (size_t i = 0; i < narena_maps; i++)
        mp_unmap((void *)arena_maps[i].lo, arena_maps[i].hi - arena_maps[i].lo);
    narena_maps = 0;
    chunk_pos = chunk_end = NULL;
    atomic_store(&exhausted, 0);
    spin_unlock(&arena_lock);
}

uint64_t mp_memory_used(void)
{
    return atomic_load_explicit(&mapped_bytes, RELAXED);
}

void *mp_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

int mp_sys_munmap(void *addr, size_t len)
{
    return (int)syscall(SYS_munmap, addr, len);
}

int mp_memory_exhausted(void)
{
    return atomic_load_explicit(&exhausted, RELAXED);
}

/* Capped requests may use the cap less `bytes` (full capture holds back
 * an eighth for the sampling it moves to: record_mode.c). */
void mp_memory_reserve(uint64_t bytes)
{
    atomic_store(&reserved, bytes < mp_opt.max_memory ? bytes : 0);
    atomic_store(&share, 0);
    atomic_store(&share_used, 0);
    atomic_store(&exhausted, 0);
}

/* The reserve given: capped requests may take that much more (what was
 * refused may be asked again). */
void mp_memory_use_reserve(void)
{
    atomic_store(&share, atomic_exchange(&reserved, 0));
    atomic_store(&exhausted, 0);
}

/* spin_lock's slow path: pause while the lock is busy; after a while,
 * yield the CPU at each try (the holder may have been preempted). */
void spin_lock_wait(atomic_flag *l)
{
    for (unsigned n = 1; atomic_flag_test_and_set_explicit(l, memory_order_acquire); n++) {
        if (n < 128) __builtin_ia32_pause();
        else sched_yield();
    }
}
