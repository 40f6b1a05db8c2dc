/* pymalloc's blocks counted as heap blocks (issues 29, 40), for python.c's
 * interpreters (CPython 3.11-3.13).
 *
 * The MEM and OBJ domains (PyMem_SetAllocator) and the arena allocator are
 * wrapped. The wrappers are entry points like interpose.c's: the guard
 * they hold sends pymalloc's own malloc and mmap calls (large blocks,
 * arenas) through unrecorded, so nothing counts twice.
 *
 * When: at the recorder's init if the interpreter has not started yet
 * (the program is python, before its main): every pymalloc block is then
 * seen from its allocation, in every mode. Otherwise (attached, or
 * PYTHONMALLOC / -X dev replaced the wrappers at start-up) full capture
 * wraps what is there once the runtime is initialized, by the GIL holder;
 * the cheap modes do not (blocks made before could not be told apart).
 *
 * The cheap modes need each block's allocator size, at its allocation and
 * at its free (malloc's: malloc_usable_size). A pymalloc block lies in a
 * pool of POOL_SIZE bytes, aligned, inside an arena; its pool's header
 * names its size class. Every arena is made by the wrapped arena
 * allocator, so a map of the pools inside arenas (one bit per pool) tells
 * a pool block from one pymalloc took from malloc (large, or no arena). */
#define _GNU_SOURCE
#include "hot.h"
#include "python.h"

#include <dlfcn.h>

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
enum { PYMEM_DOMAIN_RAW, PYMEM_DOMAIN_MEM, PYMEM_DOMAIN_OBJ };

static void (*get_allocator)(int, PyMemAllocatorEx *), (*set_allocator)(int, PyMemAllocatorEx *);
static void (*get_arena)(PyObjectArenaAllocator *), (*set_arena)(PyObjectArenaAllocator *);
/* the wrapped allocators, called with their own ctx (never the one they
 * are called with: PyMem_SetAllocator may tear the pair) */
static PyMemAllocatorEx old_mem, old_obj;
static PyObjectArenaAllocator old_arena;

/* ------------------------------------------------------------ the pool map */

/* 3.10+'s 64-bit builds (the radix tree on, its default): pools of 16 KiB;
 * a pool header's size class index (uint szidx) at byte 36; a block of
 * class i is (i + 1) * 16 bytes (512 at most). */
#define POOL_BITS 14
#define POOL_SZIDX 36
#define LEAF_BITS 16                    /* a leaf: 2^16 pools, 1 GiB, 8 KiB of bits */
#define TOP_BITS (47 - POOL_BITS - LEAF_BITS)
static _Atomic(_Atomic uint64_t *) *pool_top;  /* [1 << TOP_BITS]: NULL, or a leaf */
static atomic_flag pool_lock = ATOMIC_FLAG_INIT;
static int pools_ok = 1;                /* 0: the layout is not the one known (sizes 0) */
static _Atomic int pool_checks;         /* small allocations checked against their class */

static inline int in_pools(const void *p)
{
    uintptr_t i = (uintptr_t)p >> POOL_BITS;
    if (unlikely(!pool_top || i >> (LEAF_BITS + TOP_BITS))) return 0;
    _Atomic uint64_t *leaf = atomic_load_explicit(&pool_top[i >> LEAF_BITS], memory_order_acquire);
    i &= ((uintptr_t)1 << LEAF_BITS) - 1;
    return leaf && (atomic_load_explicit(&leaf[i >> 6], RELAXED) >> (i & 63) & 1);
}

static void pools_bad(const char *why)
{
    if (__atomic_exchange_n(&pools_ok, 0, __ATOMIC_RELAXED))
        mp_log("warning", "pymalloc: %s: its blocks' live bytes are not counted in this mode", why);
}

/* The pools wholly inside [p, p + n) marked (on) or cleared: an arena
 * made or freed. Under pool_lock; leaves are never freed. */
static void pools_mark(void *p, size_t n, int on)
{
    uintptr_t lo = ((uintptr_t)p + ((uintptr_t)1 << POOL_BITS) - 1) >> POOL_BITS, hi = ((uintptr_t)p + n) >> POOL_BITS;
    if (!pool_top || lo >= hi) return;
    if (hi > (uintptr_t)1 << (LEAF_BITS + TOP_BITS)) {
        pools_bad("an arena above 128 TiB");
        return;
    }
    spin_lock(&pool_lock);
    for (uintptr_t i = lo; i < hi; i++) {
        _Atomic uint64_t *leaf = atomic_load_explicit(&pool_top[i >> LEAF_BITS], RELAXED);
        if (!leaf && on) {
            if (!(leaf = mp_map((size_t)1 << LEAF_BITS >> 3, 0))) {
                pools_bad("no memory for its pool map");
                break;
            }
            atomic_store_explicit(&pool_top[i >> LEAF_BITS], leaf, memory_order_release);
        }
        if (!leaf) continue;
        uint64_t bit = (uint64_t)1 << (i & 63);
        _Atomic uint64_t *w = &leaf[(i & (((uintptr_t)1 << LEAF_BITS) - 1)) >> 6];
        if (on) atomic_fetch_or_explicit(w, bit, RELAXED);
        else atomic_fetch_and_explicit(w, ~bit, RELAXED);
    }
    spin_unlock(&pool_lock);
}

static inline size_t pool_block_size(const void *p)
{
    const char *pool = (const char *)((uintptr_t)p & ~(((uintptr_t)1 << POOL_BITS) - 1));
    return ((size_t)*(const uint32_t *)(pool + POOL_SZIDX) + 1) << 4;
}

/* The allocator's size of a block of the wrapped domains (the cheap
 * modes): its pool's class, or malloc's. */
static size_t py_usable(void *p)
{
    if (!in_pools(p)) return block_usable(p);
    return likely(pools_ok) ? pool_block_size(p) : 0;
}

/* The first small allocations (n bytes at p) checked: a pool block's class
 * is the smallest that holds n. */
static inline void pool_check(void *p, size_t n)
{
    if (likely(atomic_load_explicit(&pool_checks, RELAXED) >= 4096) || mp_track_all || !p || !n || n > 512 ||
        !in_pools(p))
        return;
    atomic_fetch_add_explicit(&pool_checks, 1, RELAXED);
    size_t s = pool_block_size(p);
    if (s < n || s >= n + 16) pools_bad("a pool's size class is not the one known");
}

/* ------------------------------------------------------------ the wrappers */

/* A detach asked for pymalloc's own allocators back (pymalloc_forget):
 * the next wrapper called, by the GIL holder, puts them back. */
static _Atomic int unwrap_wanted;
static void unwrap(void);
#define UNWRAP_DUE() \
    if (unlikely(atomic_load_explicit(&unwrap_wanted, RELAXED))) unwrap()

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
DOMAIN(mem, old_mem)
DOMAIN(obj, old_obj)

/* Arenas (and 3.11+'s frame stack chunks) are pymalloc's, not the
 * program's mappings: made and unmapped inside the guard. */
static void *arena_wrap_alloc(void *c, size_t n)
{
    (void)c;
    struct mp_guard g = guard_enter(MP_INSIDE);
    void *p = old_arena.alloc(old_arena.ctx, n);
    if (p) mp_range_add(RANGES_HEAP, p, n);     /* the ledger's heap, as glibc's arenas */
    if (p) pools_mark(p, n, 1);
    guard_leave(&g);
    return p;
}

static void arena_wrap_free(void *c, void *p, size_t n)
{
    (void)c;
    struct mp_guard g = guard_enter(MP_INSIDE);
    pools_mark(p, n, 0);
    mp_range_remove(RANGES_HEAP, p, n);
    old_arena.free(old_arena.ctx, p, n);
    guard_leave(&g);
}

/* ------------------------------------------------------------ installing */

/* Each domain and the arena allocator wrapped, unless it is already (the
 * wrappers of the start, still there). */
static int wrapped;     /* wrap() ran: the wrappers may be installed */
static void wrap(void)
{
    wrapped = 1;
    PyMemAllocatorEx cur, w = { NULL, m_mem, c_mem, r_mem, f_mem };
    get_allocator(PYMEM_DOMAIN_MEM, &cur);
    if (cur.malloc != m_mem) old_mem = cur, set_allocator(PYMEM_DOMAIN_MEM, &w);
    get_allocator(PYMEM_DOMAIN_OBJ, &cur);
    w = (PyMemAllocatorEx){ NULL, m_obj, c_obj, r_obj, f_obj };
    if (cur.malloc != m_obj) old_obj = cur, set_allocator(PYMEM_DOMAIN_OBJ, &w);
    PyObjectArenaAllocator a, arena = { NULL, arena_wrap_alloc, arena_wrap_free };
    get_arena(&a);
    if (a.alloc != arena_wrap_alloc) old_arena = a, set_arena(&arena);
}

/* While waiting (mp_py_waiting; full capture's malloc path, the cheap
 * modes' sampled one), once the runtime is initialized, by the GIL holder:
 * full capture wraps what is there; the cheap modes check that start-up
 * (PYTHONMALLOC, -X dev) kept the wrappers or chose malloc's allocator. */
void python_install(void)
{
    if (!python_gil_ready()) return;
    int waiting = 1;
    if (!atomic_compare_exchange_strong(&mp_py_waiting, &waiting, 0)) return;
    if (mp_track_all) {
        wrap();
        return;
    }
    PyMemAllocatorEx obj, raw;
    get_allocator(PYMEM_DOMAIN_OBJ, &obj);
    get_allocator(PYMEM_DOMAIN_RAW, &raw);
    if (obj.malloc != m_obj && obj.malloc != raw.malloc)
        mp_log("warning", "pymalloc: PYTHONMALLOC or -X dev replaced the recorder's wrappers at start-up: the "
               "blocks of Python's allocator, unless malloc's, are not counted in this mode (full capture counts them)");
}

/* python_init's, once the interpreter is known: `started` its runtime's
 * initialized flag. */
void pymalloc_init(int started)
{
    get_allocator = (void (*)(int, PyMemAllocatorEx *))dlsym(RTLD_DEFAULT, "PyMem_GetAllocator");
    set_allocator = (void (*)(int, PyMemAllocatorEx *))dlsym(RTLD_DEFAULT, "PyMem_SetAllocator");
    get_arena = (void (*)(PyObjectArenaAllocator *))dlsym(RTLD_DEFAULT, "PyObject_GetArenaAllocator");
    set_arena = (void (*)(PyObjectArenaAllocator *))dlsym(RTLD_DEFAULT, "PyObject_SetArenaAllocator");
    if (!get_allocator || !set_allocator || !get_arena || !set_arena) return;
    /* before the interpreter's first allocation: one thread, no lock
     * needed; the cheap modes need the pool map */
    if (!started && ((pool_top = mp_map(sizeof *pool_top << TOP_BITS, 0)) || mp_track_all)) wrap();
    else if (!mp_track_all)
        mp_log("warning", "pymalloc: %s: its blocks are not counted in this mode (full capture counts them)",
               started ? "the interpreter started before the recorder" : "no memory for its pool map");
    if (mp_track_all || pool_top) atomic_store(&mp_py_waiting, 1);
}

/* ------------------------------------------------------------ the detach */

/* pymalloc's own allocators back where the wrappers still are (a tracer
 * that wrapped ours, tracemalloc, keeps calling them: they forward), by
 * the GIL holder, as wrap(): no other thread uses the MEM and OBJ domains
 * meanwhile. The wrappers forward to the allocators they replaced and
 * ignore their ctx, so a block made through them is freed by its own
 * allocator as any other, and a pair read half old, half new still works. */
static void unwrap(void)
{
    if (!atomic_exchange(&unwrap_wanted, 0)) return;
    PyMemAllocatorEx cur;
    get_allocator(PYMEM_DOMAIN_MEM, &cur);
    if (cur.malloc == m_mem) set_allocator(PYMEM_DOMAIN_MEM, &old_mem);
    get_allocator(PYMEM_DOMAIN_OBJ, &cur);
    if (cur.malloc == m_obj) set_allocator(PYMEM_DOMAIN_OBJ, &old_obj);
    PyObjectArenaAllocator a;
    get_arena(&a);
    if (a.alloc == arena_wrap_alloc) set_arena(&old_arena);
}

/* The end of an attach session: the wrappers taken out now if the caller
 * holds the GIL, else by the next call of one (from the GIL holder; an
 * idle interpreter makes none, and pays nothing meanwhile). */
void pymalloc_forget(void)
{
    if (!wrapped || !get_allocator || mp_attach_mode == 0) return;
    atomic_store(&unwrap_wanted, 1);
    if (python_gil_ready()) unwrap();
}

/* A later attach session: full capture wraps again once a GIL holder
 * allocates (python_install); wrappers still installed are kept. */
void pymalloc_session_start(void)
{
    atomic_store(&unwrap_wanted, 0);
    if (mp_track_all && get_allocator) atomic_store(&mp_py_waiting, 1);
}
