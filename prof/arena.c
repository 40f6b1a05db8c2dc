/* The profiler's own memory: mmap'd, counted, capped by MP_MAX_MEMORY.
 * The cap applies to what grows with distinct stacks (stack records, counter
 * slots, hash tables); the pointer map, which grows with the program's live
 * blocks, is exempt: dropping entries would make the totals wrong.
 * arena_alloc is a bump allocator over 1 MB chunks behind one spin lock; it
 * is called only when something new appears (a thread, a stack, a slot
 * chunk), never per allocation. Nothing here calls malloc. */
#include "record.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHUNK (1u << 20)

static atomic_flag arena_lock = ATOMIC_FLAG_INIT;
static char *chunk_pos, *chunk_end;
static _Atomic uint64_t mapped_bytes;
static _Atomic int exhausted;


void *mp_map(size_t size, int capped)
{
    if (capped && mp_opt.max_memory &&
        atomic_load_explicit(&mapped_bytes, RELAXED) + size > mp_opt.max_memory) {
        if (!atomic_exchange(&exhausted, 1))
            mp_log("warning", "the profiler reached MP_MAX_MEMORY (%llu bytes): new stacks "
                   "are counted without a stack from now on",
                   (unsigned long long)mp_opt.max_memory);
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
    mp_range_remove(RANGES_PROFILER, p, size);
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

void mp_range_remove(enum range_owner o, void *p, size_t size)
{
    struct range_table *t = &tables[o];
    spin_lock(&t->lock);
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].lo == (uintptr_t)p && t->r[i].hi == (uintptr_t)p + size) {
            t->r[i] = t->r[--t->n];
            break;
        }
    spin_unlock(&t->lock);
}

size_t mp_ranges(enum range_owner o, struct own_range *out, size_t max)
{
    struct range_table *t = &tables[o];
    spin_lock(&t->lock);
    size_t n = t->n;
    for (size_t i = 0; i < n && i < max; i++) out[i] = t->r[i];
    spin_unlock(&t->lock);
    return n;
}

void *arena_alloc(size_t size, int capped)
{
    size = (size + 63) & ~(size_t)63;   /* cache-line aligned: no false sharing */
    if (size >= CHUNK / 4) return mp_map((size + PAGE_SIZE - 1) & ~(size_t)(PAGE_SIZE - 1), capped);
    spin_lock(&arena_lock);
    if (!chunk_pos || (size_t)(chunk_end - chunk_pos) < size) {
        char *c = mp_map(CHUNK, capped);
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

/* spin_lock's slow path: pause while the lock is busy; after a while,
 * yield the CPU at each try (the holder may have been preempted). */
void spin_lock_wait(atomic_flag *l)
{
    for (unsigned n = 1; atomic_flag_test_and_set_explicit(l, memory_order_acquire); n++) {
        if (n < 128) __builtin_ia32_pause();
        else sched_yield();
    }
}
