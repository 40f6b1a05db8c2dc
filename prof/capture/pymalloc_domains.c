/* pymalloc's domains (issues 29, 40): the MEM and OBJ domains
 * (PyMem_SetAllocator) and the arena allocator wrapped with entry's
 * wrappers (entry/pymalloc.c) and given back at a detach; the map of
 * pymalloc's pools, which tells the wrappers a pool block's size.
 *
 * When: at the recorder's init if the interpreter has not started yet
 * (the program is python, before its main): every pymalloc block is then
 * seen from its allocation, in every mode. Otherwise (attached, or
 * PYTHONMALLOC / -X dev replaced the wrappers at start-up) full capture
 * wraps what is there once the runtime is initialized, by the GIL holder
 * (python_install, from the recording path); the cheap modes do not
 * (blocks made before could not be told apart). Invariant: the domains
 * are changed only by the GIL holder, or before the interpreter runs. */
#define _GNU_SOURCE
#include "python.h"
#include "pymalloc_domains.h"

#include <dlfcn.h>

enum { PYMEM_DOMAIN_RAW, PYMEM_DOMAIN_MEM, PYMEM_DOMAIN_OBJ };

static void (*get_allocator)(int, PyMemAllocatorEx *), (*set_allocator)(int, PyMemAllocatorEx *);
static void (*get_arena)(PyObjectArenaAllocator *), (*set_arena)(PyObjectArenaAllocator *);
static const struct pymalloc_wrappers *wrappers;       /* entry's, handed down at its start */
static int full;                /* full capture (mp_track_all), from pymalloc_init */
PyMemAllocatorEx pymalloc_old_mem, pymalloc_old_obj;
PyObjectArenaAllocator pymalloc_old_arena;
_Atomic int pymalloc_unwrap_wanted;

void pymalloc_wrappers(const struct pymalloc_wrappers *w)
{
    wrappers = w;
}

/* ------------------------------------------------------------ the pool map */

_Atomic(_Atomic uint64_t *) *pymalloc_pool_top;
static atomic_flag pool_lock = ATOMIC_FLAG_INIT;
int pymalloc_pools_ok = 1;
_Atomic int pymalloc_pool_checks;

void pymalloc_pools_bad(const char *why)
{
    if (__atomic_exchange_n(&pymalloc_pools_ok, 0, __ATOMIC_RELAXED))
        mp_log("warning", "pymalloc: %s: its blocks' live bytes are not counted in this mode", why);
}

/* The pools wholly inside [p, p + n) marked (on) or cleared: an arena
 * made or freed. Under pool_lock; leaves are never freed. */
void pymalloc_pools_mark(void *p, size_t n, int on)
{
    uintptr_t lo = ((uintptr_t)p + ((uintptr_t)1 << POOL_BITS) - 1) >> POOL_BITS, hi = ((uintptr_t)p + n) >> POOL_BITS;
    if (!pymalloc_pool_top || lo >= hi) return;
    if (hi > (uintptr_t)1 << (LEAF_BITS + TOP_BITS)) {
        pymalloc_pools_bad("an arena above 128 TiB");
        return;
    }
    spin_lock(&pool_lock);
    for (uintptr_t i = lo; i < hi; i++) {
        _Atomic uint64_t *leaf = atomic_load_explicit(&pymalloc_pool_top[i >> LEAF_BITS], RELAXED);
        if (!leaf && on) {
            if (!(leaf = mp_map((size_t)1 << LEAF_BITS >> 3, 0))) {
                pymalloc_pools_bad("no memory for its pool map");
                break;
            }
            atomic_store_explicit(&pymalloc_pool_top[i >> LEAF_BITS], leaf, memory_order_release);
        }
        if (!leaf) continue;
        uint64_t bit = (uint64_t)1 << (i & 63);
        _Atomic uint64_t *w = &leaf[(i & (((uintptr_t)1 << LEAF_BITS) - 1)) >> 6];
        if (on) atomic_fetch_or_explicit(w, bit, RELAXED);
        else atomic_fetch_and_explicit(w, ~bit, RELAXED);
    }
    spin_unlock(&pool_lock);
}

/* ------------------------------------------------------------ wrapping */

/* Each domain and the arena allocator wrapped, unless it is already (the
 * wrappers of the start, still there). */
static int wrapped;     /* wrap() ran: the wrappers may be installed */
static void wrap(void)
{
    wrapped = 1;
    PyMemAllocatorEx cur, w = wrappers->mem;
    get_allocator(PYMEM_DOMAIN_MEM, &cur);
    if (cur.malloc != w.malloc) pymalloc_old_mem = cur, set_allocator(PYMEM_DOMAIN_MEM, &w);
    get_allocator(PYMEM_DOMAIN_OBJ, &cur);
    w = wrappers->obj;
    if (cur.malloc != w.malloc) pymalloc_old_obj = cur, set_allocator(PYMEM_DOMAIN_OBJ, &w);
    PyObjectArenaAllocator a, arena = wrappers->arena;
    get_arena(&a);
    if (a.alloc != arena.alloc) pymalloc_old_arena = a, set_arena(&arena);
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
    if (full) {
        wrap();
        return;
    }
    PyMemAllocatorEx obj, raw;
    get_allocator(PYMEM_DOMAIN_OBJ, &obj);
    get_allocator(PYMEM_DOMAIN_RAW, &raw);
    if (obj.malloc != wrappers->obj.malloc && obj.malloc != raw.malloc)
        mp_log("warning", "pymalloc: PYTHONMALLOC or -X dev replaced the recorder's wrappers at start-up: the "
               "blocks of Python's allocator, unless malloc's, are not counted in this mode (full capture counts them)");
}

void pymalloc_init(int started, int full_capture)
{
    full = full_capture;
    get_allocator = (void (*)(int, PyMemAllocatorEx *))dlsym(RTLD_DEFAULT, "PyMem_GetAllocator");
    set_allocator = (void (*)(int, PyMemAllocatorEx *))dlsym(RTLD_DEFAULT, "PyMem_SetAllocator");
    get_arena = (void (*)(PyObjectArenaAllocator *))dlsym(RTLD_DEFAULT, "PyObject_GetArenaAllocator");
    set_arena = (void (*)(PyObjectArenaAllocator *))dlsym(RTLD_DEFAULT, "PyObject_SetArenaAllocator");
    if (!wrappers || !get_allocator || !set_allocator || !get_arena || !set_arena) {
        get_allocator = NULL;
        return;
    }
    /* before the interpreter's first allocation: one thread, no lock
     * needed; the cheap modes need the pool map */
    if (!started && ((pymalloc_pool_top = mp_map(sizeof *pymalloc_pool_top << TOP_BITS, 0)) || full)) wrap();
    else if (!full)
        mp_log("warning", "pymalloc: %s: its blocks are not counted in this mode (full capture counts them)",
               started ? "the interpreter started before the recorder" : "no memory for its pool map");
    if (full || pymalloc_pool_top) atomic_store(&mp_py_waiting, 1);
}

/* ------------------------------------------------------------ the detach */

/* pymalloc's own allocators back where the wrappers still are (a tracer
 * that wrapped ours, tracemalloc, keeps calling them: they forward), by
 * the GIL holder, as wrap(): no other thread uses the MEM and OBJ domains
 * meanwhile. The wrappers forward to the allocators they replaced and
 * ignore their ctx, so a block made through them is freed by its own
 * allocator as any other, and a pair read half old, half new still works. */
void pymalloc_unwrap(void)
{
    if (!atomic_exchange(&pymalloc_unwrap_wanted, 0)) return;
    PyMemAllocatorEx cur;
    get_allocator(PYMEM_DOMAIN_MEM, &cur);
    if (cur.malloc == wrappers->mem.malloc) set_allocator(PYMEM_DOMAIN_MEM, &pymalloc_old_mem);
    get_allocator(PYMEM_DOMAIN_OBJ, &cur);
    if (cur.malloc == wrappers->obj.malloc) set_allocator(PYMEM_DOMAIN_OBJ, &pymalloc_old_obj);
    PyObjectArenaAllocator a;
    get_arena(&a);
    if (a.alloc == wrappers->arena.alloc) set_arena(&pymalloc_old_arena);
}

/* The end of an attach session: the wrappers taken out now if the caller
 * holds the GIL, else by the next call of one (from the GIL holder; an
 * idle interpreter makes none, and pays nothing meanwhile). */
void pymalloc_forget(void)
{
    if (!wrapped || !get_allocator || mp_attach_mode == 0) return;
    atomic_store(&pymalloc_unwrap_wanted, 1);
    if (python_gil_ready()) pymalloc_unwrap();
}

/* A later attach session: full capture wraps again once a GIL holder
 * allocates (python_install); wrappers still installed are kept. */
void pymalloc_session_start(void)
{
    atomic_store(&pymalloc_unwrap_wanted, 0);
    if (full && get_allocator) atomic_store(&mp_py_waiting, 1);
}
