/* The malloc family: forward to the next definition, then record.
 *
 * Each entry point calls the real function first and records only a
 * success, so errno, NULL returns and every edge case (calloc overflow,
 * realloc(p, 0), posix_memalign's EINVAL) are the real allocator's own.
 * Recording preserves errno. While dlsym resolves the real functions, the
 * allocations it makes are served from a static bootstrap buffer, whose
 * blocks are never passed to the real free. The thread's guard state
 * (base.h: MP_INSIDE while the profiler or the allocator runs on it) sends
 * the profiler's own allocations straight through. */
#define _GNU_SOURCE
#include "hot.h"
#include "entry.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <string.h>

/* ------------------------------------------------------------ bootstrap */

static char bootstrap[256 << 10] __attribute__((aligned(CACHE_LINE)));
static size_t boot_used;

static inline int is_boot(const void *p)
{
    return (const char *)p >= bootstrap && (const char *)p < bootstrap + sizeof bootstrap;
}

/* Blocks carry their size in the 16 bytes before them (for realloc). */
static void *boot_alloc(size_t size)
{
    size_t need = 16 + ((size + 15) & ~(size_t)15);
    size_t at = __atomic_fetch_add(&boot_used, need, __ATOMIC_RELAXED);
    if (at + need > sizeof bootstrap) {
        errno = ENOMEM;
        return NULL;
    }
    *(size_t *)(bootstrap + at) = size;
    return bootstrap + at + 16;
}

/* Until the real functions are resolved and the profiler started
 * (start.c), each call takes the slow way; then one compare with memory
 * (a plain load, as mp_next.sigaction's was: an atomic one costs a
 * register load more; x86's loads are acquire loads). */
#define ENSURE_REAL(fallback)                                                 \
    do {                                                                      \
        if (unlikely(!mp_entry_ready) && !entry_first_call()) return fallback; \
    } while (0)

/* ------------------------------------------------------------ recording */

/* From entry to guard_leave the thread is marked inside the allocator: the
 * real call and the recording (hot.h's dispatch, which keeps the real
 * call's errno: guard_enter_call keeps none). An allocation made
 * meanwhile by a signal handler passes straight through, and a fatal
 * signal that arrives then is handled at guard_leave, once no allocator
 * lock is held (signals.c). */
#define ALLOCATE(call, size)                                                  \
    do {                                                                      \
        if (unlikely(mp_tls.in_profiler)) return passed(call, size);          \
        struct mp_guard g_ = guard_enter_call();                              \
        void *p_ = call;                                                      \
        record_alloc(p_, size);                                               \
        guard_leave(&g_);                                                     \
        return p_;                                                            \
    } while (0)

/* The thread is inside already: the profiler's own allocation, or one of a
 * signal handler that interrupted the allocator (logged, handler_log.c). */

/* The profiler's own work's blocks (base.h mp_own_counting): their usable
 * bytes, for the ledger. Only on the pass-through path. */
static void own_count(void *p, int64_t sign)
{
    atomic_fetch_add_explicit(&mp_own_heap, sign * (int64_t)malloc_usable_size(p), memory_order_relaxed);
    ledger_own_block(p, (int)sign);
}

static inline void *passed(void *p, size_t size)
{
    if (unlikely(mp_tls.in_profiler == MP_IN_HANDLER) && p) handler_alloc(p, size);
    else if (unlikely(mp_tls.in_profiler == MP_IN_PROBE)) mp_probe_seen = 1;
    else if (mp_own_counting && p) own_count(p, 1);
    return p;
}

/* ------------------------------------------------------------ entry points */

MP_EXPORT void *malloc(size_t size)
{
    ENSURE_REAL(boot_alloc(size));
    ALLOCATE(mp_next.malloc(size), size);
}

MP_EXPORT void *calloc(size_t n, size_t size)
{
    ENSURE_REAL(n && size > ~(size_t)0 / n ? NULL : boot_alloc(n * size));
    ALLOCATE(mp_next.calloc(n, size), n * size);  /* success implies n * size did not overflow */
}

MP_EXPORT void free(void *p)
{
    if (!p || unlikely(is_boot(p))) return;
    ENSURE_REAL((void)0);
    if (unlikely(mp_tls.in_profiler)) {
        if (mp_own_counting) own_count(p, -1);
        if (mp_tls.in_profiler != MP_IN_HANDLER || !handler_free(p)) mp_next.free(p);
        return;
    }
    struct mp_guard g = guard_enter_call();
    record_free(p);
    mp_next.free(p);
    guard_leave(&g);
}

/* realloc in a signal handler that interrupted the allocator: a block the
 * handler allocated is reallocated; any other one is copied and its free
 * waits for the drain, like free's. */
static void *handler_realloc(void *old, size_t size)
{
    if (handler_owns(old)) {
        void *p = mp_next.realloc(old, size);
        if (p || !size) handler_free(old);
        return passed(p, size);
    }
    if (!size) {
        if (!handler_free(old)) mp_next.free(old);
        return NULL;
    }
    void *p = mp_next.malloc(size);
    if (!p) return NULL;
    size_t have = malloc_usable_size(old);
    memcpy(p, old, have < size ? have : size);
    if (!handler_free(old)) mp_next.free(old);
    return passed(p, size);
}

/* The old block's half before the real realloc, which then sets errno as
 * it does; its outcome's after, the new block through the dispatch. */
MP_EXPORT void *realloc(void *old, size_t size)
{
    if (unlikely(is_boot(old))) {
        size_t old_size = *(size_t *)((char *)old - 16);
        void *p = malloc(size);
        if (p) memcpy(p, old, old_size < size ? old_size : size);
        return p;
    }
    ENSURE_REAL(boot_alloc(size));
    if (!old) ALLOCATE(mp_next.realloc(NULL, size), size);
    if (unlikely(mp_tls.in_profiler == MP_IN_HANDLER)) return handler_realloc(old, size);
    if (unlikely(mp_tls.in_profiler)) {
        if (!mp_own_counting) return mp_next.realloc(old, size);
        size_t was = malloc_usable_size(old);
        ledger_own_block(old, -1);      /* its address only, read while it is there */
        void *p = mp_next.realloc(old, size);
        if (p || !size) atomic_fetch_sub_explicit(&mp_own_heap, (int64_t)was, memory_order_relaxed);
        else ledger_own_block(old, 1);
        if (p) own_count(p, 1);
        return p;
    }
    struct mp_guard g = guard_enter(MP_INSIDE);
    struct mp_thread *t = record_thread();      /* a thread's first operation may be this one (ptrmap_share) */
    struct mp_block b;
    record_realloc_take(old, &b);
    guard_give_errno(&g);
    void *p = mp_next.realloc(old, size);
    guard_keep_errno(&g);
    record_realloc_done(t, old, &b, p, size);
    record_alloc(p, size);
    record_leave(&g);
    return p;
}

MP_EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
    if (n && size > ~(size_t)0 / n) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(old, n * size);
}

MP_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    ENSURE_REAL(ENOMEM);
    if (unlikely(mp_tls.in_profiler)) {
        int rc = mp_next.posix_memalign(out, align, size);
        if (rc == 0) passed(*out, size);
        return rc;
    }
    struct mp_guard g = guard_enter_call();
    int rc = mp_next.posix_memalign(out, align, size);
    if (rc == 0) record_alloc(*out, size);
    record_leave(&g);
    return rc;
}

MP_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    ENSURE_REAL(NULL);
    ALLOCATE(mp_next.aligned_alloc(align, size), size);
}

MP_EXPORT void *memalign(size_t align, size_t size)
{
    ENSURE_REAL(NULL);
    ALLOCATE(mp_next.memalign(align, size), size);
}

MP_EXPORT void *valloc(size_t size)
{
    ENSURE_REAL(NULL);
    ALLOCATE(mp_next.valloc(size), size);
}

MP_EXPORT void *pvalloc(size_t size)
{
    ENSURE_REAL(NULL);
    ALLOCATE(mp_next.pvalloc(size), size);
}
