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
    mp_own_range_add(p, size);
    return p;
}



void mp_unmap(void *p, size_t size)
{
    if (!p) return;
    mp_sys_munmap(p, size);
    atomic_fetch_sub_explicit(&mapped_bytes, size, RELAXED);
    mp_own_range_remove(p, size);
}

/* ------------------------------------------------------------ own ranges */

/* Every range the profiler mapped, for the ledger's 'profiler' line (the
 * kernel merges adjacent anonymous mappings: only the ranges tell ours
 * from the program's). A fixed table: mappings are few (1 MB chunks, the
 * large tables); past it, the rest count as unexplained. */
#define OWN_RANGES 4096
static struct own_range own_ranges[OWN_RANGES];
static size_t nown_ranges;
static atomic_flag own_lock = ATOMIC_FLAG_INIT;
MP_TLS int mp_own_counting;
_Atomic int64_t mp_own_heap;

void mp_own_range_add(void *p, size_t size)
{
    spin_lock(&own_lock);
    if (nown_ranges < OWN_RANGES) own_ranges[nown_ranges++] = (struct own_range){ (uintptr_t)p, (uintptr_t)p + size };
    spin_unlock(&own_lock);
}

void mp_own_range_remove(void *p, size_t size)
{
    spin_lock(&own_lock);
    for (size_t i = 0; i < nown_ranges; i++)
        if (own_ranges[i].lo == (uintptr_t)p && own_ranges[i].hi == (uintptr_t)p + size) {
            own_ranges[i] = own_ranges[--nown_ranges];
            break;
        }
    spin_unlock(&own_lock);
}

size_t mp_own_ranges(struct own_range *out, size_t max)
{
    spin_lock(&own_lock);
    size_t n = nown_ranges;
    for (size_t i = 0; i < n && i < max; i++) out[i] = own_ranges[i];
    spin_unlock(&own_lock);
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
