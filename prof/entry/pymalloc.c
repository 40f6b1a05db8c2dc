/* pymalloc's wrappers (issues 29, 40): the MEM and OBJ domains' and the
 * arena allocator's entry points, for python.c's interpreters (CPython
 * 3.11-3.13). Entry points like interpose.c's: the guard they hold sends
 * pymalloc's own malloc and mmap calls (large blocks, arenas) through
 * unrecorded, so nothing counts twice. They forward to the allocators
 * they replaced (capture/pymalloc_domains.c, which puts them in and takes
 * them out: entry hands them down at its start, pymalloc_entry_install).
 *
 * The cheap modes need each block's allocator size, at its allocation and
 * at its free (malloc's: malloc_usable_size): a pool block's is its
 * pool's size class (pymalloc_domains.h's pool map), any other malloc's. */
#define _GNU_SOURCE
#include "hot.h"
#include "pymalloc_domains.h"
#include "entry.h"

/* The allocator's size of a block of the wrapped domains (the cheap
 * modes): its pool's class, or malloc's. */
static size_t py_usable(void *p)
{
    if (!pymalloc_in_pools(p)) return block_usable(p);
    return likely(pymalloc_pools_ok) ? pymalloc_pool_block_size(p) : 0;
}

/* The first small allocations (n bytes at p) checked: a pool block's class
 * is the smallest that holds n. */
static inline void pool_check(void *p, size_t n)
{
    if (likely(atomic_load_explicit(&pymalloc_pool_checks, RELAXED) >= 4096) || mp_track_all || !p || !n || n > 512 ||
        !pymalloc_in_pools(p))
        return;
    atomic_fetch_add_explicit(&pymalloc_pool_checks, 1, RELAXED);
    size_t s = pymalloc_pool_block_size(p);
    if (s < n || s >= n + 16) pymalloc_pools_bad("a pool's size class is not the one known");
}

/* ------------------------------------------------------------ the wrappers */

/* A detach asked for pymalloc's own allocators back (pymalloc_forget):
 * the next wrapper called, by the GIL holder, puts them back. */
#define UNWRAP_DUE() \
    if (unlikely(atomic_load_explicit(&pymalloc_unwrap_wanted, RELAXED))) pymalloc_unwrap()

static inline void *w_malloc(const PyMemAllocatorEx *o, size_t n)
{
    if (unlikely(mp_tls.in_profiler)) return o->malloc(o->ctx, n);
    UNWRAP_DUE();
    struct mp_guard g = guard_enter_call();
    void *p = o->malloc(o->ctx, n);
    pool_check(p, n);
    record_alloc_by(p, n, py_usable);
    record_leave(&g);
    return p;
}

static inline void *w_calloc(const PyMemAllocatorEx *o, size_t a, size_t b)
{
    if (unlikely(mp_tls.in_profiler)) return o->calloc(o->ctx, a, b);
    UNWRAP_DUE();
    struct mp_guard g = guard_enter_call();
    void *p = o->calloc(o->ctx, a, b);
    pool_check(p, a * b);
    record_alloc_by(p, a * b, py_usable);
    record_leave(&g);
    return p;
}

static inline void *w_realloc(const PyMemAllocatorEx *o, void *old, size_t n)
{
    if (unlikely(mp_tls.in_profiler)) return o->realloc(o->ctx, old, n);
    UNWRAP_DUE();
    if (!old) {
        struct mp_guard g = guard_enter_call();
        void *p = o->realloc(o->ctx, NULL, n);
        record_alloc_by(p, n, py_usable);
        record_leave(&g);
        return p;
    }
    struct mp_guard g = guard_enter(MP_INSIDE);
    struct mp_thread *t = record_thread();
    struct mp_block b;
    record_realloc_take_sized(old, &b, mp_track_all ? 0 : py_usable(old));
    guard_give_errno(&g);
    void *p = o->realloc(o->ctx, old, n);
    guard_keep_errno(&g);
    record_realloc_done(t, old, &b, p, n);
    record_alloc_by(p, n, py_usable);
    record_leave(&g);
    return p;
}

static inline void w_free(const PyMemAllocatorEx *o, void *p)
{
    if (!p || unlikely(mp_tls.in_profiler)) {
        o->free(o->ctx, p);
        return;
    }
    UNWRAP_DUE();
    struct mp_guard g = guard_enter_call();
    record_free_by(p, py_usable);
    o->free(o->ctx, p);
    record_leave(&g);
}

#define DOMAIN(D, o)                                                                             \
    static void *m_##D(void *c, size_t n) { (void)c; return w_malloc(&o, n); }                  \
    static void *c_##D(void *c, size_t a, size_t b) { (void)c; return w_calloc(&o, a, b); }     \
    static void *r_##D(void *c, void *q, size_t n) { (void)c; return w_realloc(&o, q, n); }     \
    static void f_##D(void *c, void *q) { (void)c; w_free(&o, q); }
DOMAIN(mem, pymalloc_old_mem)
DOMAIN(obj, pymalloc_old_obj)

/* Arenas (and 3.11+'s frame stack chunks) are pymalloc's, not the
 * program's mappings: made and unmapped inside the guard. */
static void *arena_wrap_alloc(void *c, size_t n)
{
    (void)c;
    struct mp_guard g = guard_enter(MP_INSIDE);
    void *p = pymalloc_old_arena.alloc(pymalloc_old_arena.ctx, n);
    if (p) mp_range_add(RANGES_HEAP, p, n);     /* the ledger's heap, as glibc's arenas */
    if (p) pymalloc_pools_mark(p, n, 1);
    guard_leave(&g);
    return p;
}

static void arena_wrap_free(void *c, void *p, size_t n)
{
    (void)c;
    struct mp_guard g = guard_enter(MP_INSIDE);
    pymalloc_pools_mark(p, n, 0);
    mp_range_remove(RANGES_HEAP, p, n);
    pymalloc_old_arena.free(pymalloc_old_arena.ctx, p, n);
    guard_leave(&g);
}

/* ------------------------------------------------------------ handed down */

static const struct pymalloc_wrappers table = {
    { NULL, m_mem, c_mem, r_mem, f_mem },
    { NULL, m_obj, c_obj, r_obj, f_obj },
    { NULL, arena_wrap_alloc, arena_wrap_free },
};

void pymalloc_entry_install(void)
{
    pymalloc_wrappers(&table);
}
