/* The hot path, top to bottom: what every entry point of the malloc family
 * (interpose.c, pymalloc.c) calls inside its guard.
 *
 *   record_alloc_by / record_free_by    one load of the mode (mp_hot_path),
 *     │                                 one function per mode:
 *     ├─ HOT_COUNT, HOT_SAMPLE: fast_alloc / fast_free, inline: the
 *     │    thread's counters and nothing else; what they find due once
 *     │    their operation ended (a capture point passed, live bytes to
 *     │    publish, the clock to read) is one unlikely call (record_late)
 *     ├─ HOT_FULL: record.c's record_full_alloc / _free, called from the
 *     │    entry point itself (the walk starts there: no frame between)
 *     └─ the one unlikely exit: record_mode.c's general path, every other
 *          case decided in full (a thread's first operation, realloc's
 *          operation under way, a capture since the thread's latest save,
 *          a sample point reached, tags, thresholds, per-thread switches,
 *          glibc's sizes on probation)
 *   then the primitives all of them share (below): the block's size, the
 *   sampling countdown, the histogram, the thread's state; under them only
 *   peak.h and record.h. Nothing here calls back up.
 *
 * Budget (x86-64, gcc 12 -O2; callgrind, 1 M malloc/free pairs of
 * tests/bench/pairs.c): glibc's own pair 141 instructions, the floor's
 * (tests/bench/floor.c, a counting interposer) 190, MP_ENABLED=0 321,
 * MP_SAMPLE=512K 340, full capture 1,440: a fast_alloc is about 45
 * instructions beyond its entry point's guard and call, a fast_free about
 * 40. Anything added here is paid on every call of every program. */
#ifndef MP_HOT_H
#define MP_HOT_H

#include "peak.h"
#include "hooks.h"

/* The allocator's size of a block (another allocator's: pymalloc.c's);
 * NULL: malloc's. Each caller's constant: malloc's path has no test. */
typedef size_t (*usable_fn)(void *);

/* ------------------------------------------------------------ out of line, errno kept */
/* record_mode.c: the general path and the fast path's late work */
void record_alloc_general(void *p, size_t size, usable_fn usable);
void record_free_general(void *p, usable_fn usable);
void record_late(struct mp_thread *t, int64_t now, int reached);
void record_poll(struct mp_thread *t);     /* every t->poll allocations: the clock */
struct mp_thread *record_thread_first(void);
/* record.c: full capture, the cheap modes' blocks that may get a slot */
void record_full_alloc(struct mp_thread *t, void *p, size_t size);
void record_full_free(struct mp_thread *t, void *p);          /* t NULL: a thread without a record */
void record_attribute(struct mp_thread *t, void *p, size_t size);
void record_sampled_free(struct mp_thread *t, void *p);
uint32_t record_stack_under(struct mp_thread *t, uintptr_t leaf);     /* maps.c: a mapping's stack */
void record_realloc_take_sized(void *old, struct mp_block *b, size_t usable);  /* another allocator's block */

/* the primitives, defined below their callers */
static inline int thread_settled(const struct mp_thread *t);
static inline int sample_countdown(struct mp_thread *t, size_t size);
static inline size_t block_usable_glibc(void *p);
static inline void hist_alloc(struct mp_thread *t, uint64_t size, uint64_t live);
static inline void record_hist_free(struct mp_thread *t, uint64_t live);
static inline void free_counts(struct mp_thread *t, uint64_t usable);
MP_HOT void fast_alloc(struct mp_thread *t, void *p, size_t size, size_t u);
MP_HOT void fast_free(struct mp_thread *t, size_t u);

/* ------------------------------------------------------------ the dispatch */

/* A block the real allocator returned (p NULL: nothing to record), inside
 * its entry point's guard: recorded, and the thread's operation ended
 * (peak.h), an operation that began before it (realloc's) included. The
 * fast path reads glibc's header: HOT_COUNT and HOT_SAMPLE imply it. */
MP_HOT void record_alloc_by(void *p, size_t size, usable_fn usable)
{
    struct mp_thread *t = mp_tls.self;
    int path = atomic_load_explicit(&mp_hot_path, RELAXED);
    if (likely(path <= HOT_SAMPLE)) {
        if (likely(p != NULL && t != NULL && thread_settled(t)) && likely(path == HOT_COUNT || !sample_countdown(t, size))) {
            fast_alloc(t, p, size, usable ? usable(p) : block_usable_glibc(p));
            return;
        }
    } else if (path == HOT_FULL && likely(p != NULL && t != NULL)) {
        record_full_alloc(t, p, size);
        peak_op_end(t);
        if (unlikely(--t->poll < 0)) record_poll(t);
        return;
    }
    if (p != NULL) record_alloc_general(p, size, usable);
}

MP_HOT void record_alloc(void *p, size_t size) { record_alloc_by(p, size, NULL); }

/* A block about to be freed for real (p not NULL): recorded, the
 * operation ended. The fast path takes a block in no counter slot (the
 * pointer map's filter says so). */
MP_HOT void record_free_by(void *p, usable_fn usable)
{
    struct mp_thread *t = mp_tls.self;
    int path = atomic_load_explicit(&mp_hot_path, RELAXED);
    if (likely(path <= HOT_SAMPLE)) {
        if (likely(t != NULL && thread_settled(t)) && likely(!ptrmap_may_hold((uintptr_t)p))) {
            fast_free(t, usable ? usable(p) : block_usable_glibc(p));
            return;
        }
    } else if (path == HOT_FULL && likely(t != NULL)) {
        record_full_free(t, p);
        peak_op_end(t);
        return;
    }
    record_free_general(p, usable);
}

MP_HOT void record_free(void *p) { record_free_by(p, NULL); }

/* ------------------------------------------------------------ the cheap modes' fast operations */

/* An operation of the fast path, the thread settled: busy odd while it
 * changes the thread's records, even again after (peak.h); no save due. */
static inline void fast_op_begin(struct mp_thread *t)
{
    STORE(t->busy, t->busy + 1);
    atomic_thread_fence(memory_order_release);
}

/* Block p of `size` requested, u usable bytes: the histogram, live bytes,
 * the thread's peak, the latest block; then what is due. */
MP_HOT void fast_alloc(struct mp_thread *t, void *p, size_t size, size_t u)
{
    fast_op_begin(t);
    hist_alloc(t, size, u);
    int64_t now = t->c.live + (int64_t)u;
    STORE(t->c.live, now);
    int reached = 0;
    if (now > t->c.peak) {
        STORE(t->c.peak, now);
        reached = now >= atomic_load_explicit(&mp_peak.next, RELAXED);
    }
    t->last_block = (uintptr_t)p;
    peak_op_end_touched(t);
    int64_t pending = t->pending_live += (int64_t)u;
    if (unlikely(reached | (pending >= PEAK_SLACK) | (--t->poll < 0))) record_late(t, now, reached);
}

/* A block of u usable bytes freed by the thread (whoever allocated it: the
 * cheap modes do not know). */
MP_HOT void fast_free(struct mp_thread *t, size_t u)
{
    fast_op_begin(t);
    free_counts(t, u);
    t->last_block = 0;     /* any free ends "temporary" (heaptrack's definition) */
    peak_op_end_touched(t);
    int64_t pending = t->pending_live -= (int64_t)u;
    if (unlikely(pending <= -PEAK_SLACK)) record_late(t, t->c.live, 0);
}

/* ------------------------------------------------------------ the general path's steps (record.c, record_mode.c) */

/* The calling thread's record (its first operation makes it). NULL: it
 * has none. */
static inline struct mp_thread *record_thread(void)
{
    struct mp_thread *t = mp_tls.self;
    return likely(t != NULL) ? t : record_thread_first();
}

/* The way out of an entry point whose operation may still be under way
 * (realloc's failure, python.c's): its operation ended, then the guard.
 * malloc's and free's leave by guard_leave: record_alloc and record_free
 * ended theirs. */
static inline void record_leave(struct mp_guard *g)
{
    struct mp_thread *t = mp_tls.self;
    if (t) peak_op_end(t);
    guard_leave(g);
}

/* Active (process switch or the thread's own) and within the threshold. */
static inline int stack_wanted(struct mp_thread *t, size_t size)
{
    int on = t->active >= 0 ? t->active : atomic_load_explicit(&mp_active, RELAXED);
    if (!on) return 0;
    long th = atomic_load_explicit(&mp_threshold, RELAXED);
    return !(th > 0 ? size < (size_t)th : th < 0 && size >= (size_t)-th);
}

/* The thread's exact totals (its calls and bytes: its histogram's,
 * thread_calls), the thread touched here: `live` bytes join its live bytes
 * (tracked: every block is, and live is the requested size; else the
 * allocator's size). tracked is the caller's constant. */
static inline void record_thread_alloc(struct mp_thread *t, uint64_t size, uint64_t live, int tracked)
{
    peak_touch_thread(t);
    hist_alloc(t, size, live);
    int64_t now = t->c.live + (int64_t)live;
    STORE(t->c.live, now);
    if (tracked) now -= (int64_t)atomic_load_explicit(&t->freed_remote, RELAXED);
    peak_thread_live(t, now);
    peak_publish_live(t, (int64_t)live, 0);
}

/* The cheap modes: a free counts for the thread that makes it (who
 * allocated an untracked block is not known), in the allocator's bytes. */
static inline void record_untracked_free(struct mp_thread *t, uint64_t usable)
{
    peak_touch_thread(t);
    free_counts(t, usable);
    peak_publish_live(t, -(int64_t)usable, 0);
}

/* ------------------------------------------------------------ the primitives */

/* No operation under way and no capture since the thread's latest save:
 * peak_touch_thread's work is then one increment. */
static inline int thread_settled(const struct mp_thread *t)
{
    return !(t->busy & 1) && t->epoch == peak_epoch();
}

/* sample_hit's common case: the block does not reach the next
 * sample point (0), or it may (1: sample_hit decides). */
static inline int sample_countdown(struct mp_thread *t, size_t size)
{
    if (t->sample_countdown <= (int64_t)size) return 1;
    t->sample_countdown -= (int64_t)size;
    return 0;
}

/* The allocator's size of a block it returned (malloc_usable_size).
 * glibc's own, once its probation is over (mp_glibc_sizes, block_sizes.c):
 * read from the chunk's header h, the size field in the word before the
 * block, flags in its low 3 bits, less the chunk's own words (two for an
 * mmapped chunk, IS_MMAPPED = 2; one otherwise, the next chunk's prev_size
 * being the block's), exactly what malloc_usable_size computes for a block
 * in use (64-bit, no memory tagging), without its call. */
extern int mp_glibc_sizes __attribute__((visibility("hidden")));    /* PC-relative in the entry points */
size_t block_usable_call(void *p);
static inline size_t chunk_usable(size_t h) { return (h & ~(size_t)7) - 8 - ((h & 2) << 2); }
static inline size_t block_usable_glibc(void *p)
{
    size_t usable = chunk_usable(((const size_t *)p)[-1]);
    MP_ASSERT(usable == mp_next.malloc_usable_size(p));
    return usable;
}
static inline size_t block_usable(void *p)
{
    return likely(mp_glibc_sizes > 0) ? block_usable_glibc(p) : block_usable_call(p);
}

/* A block of `size` requested and `live` bytes joins the thread's size
 * histogram (log2 classes of `live`); a block of `live` bytes leaves it. */
static inline void hist_alloc(struct mp_thread *t, uint64_t size, uint64_t live)
{
    unsigned c = hist_class(live);
    STORE(t->c.hist[c].ncalls, t->c.hist[c].ncalls + 1);
    STORE(t->c.hist[c].memtot, t->c.hist[c].memtot + size);
    STORE(t->c.hist[c].live_in, t->c.hist[c].live_in + live);
}
static inline void record_hist_free(struct mp_thread *t, uint64_t live)
{
    unsigned c = hist_class(live);
    STORE(t->c.hist[c].nfree, t->c.hist[c].nfree + 1);
    STORE(t->c.hist[c].live_out, t->c.hist[c].live_out + live);
}

/* The cheap modes' free of `usable` bytes by the thread, in its counters
 * (the thread touched): the histogram, its frees, its live bytes. */
static inline void free_counts(struct mp_thread *t, uint64_t usable)
{
    record_hist_free(t, usable);
    STORE(t->c.nfree_local, t->c.nfree_local + 1);
    STORE(t->c.live, t->c.live - (int64_t)usable);
}

/* ------------------------------------------------------------ MP_MAX_MEMORY (record_mode.c) */
/* Reached: full capture holds an eighth of the cap back and, once the rest
 * is used, samples (MP_SAMPLE's sampler, its period in mp_opt.sample from
 * then on) while every block stays in the map, so the totals stay exact; a
 * sampled block's map entry has SLOT_WEIGHTED in its slot (its frees take
 * its weight back). The cheap modes count new stacks without a stack.
 * Said once. */
#define SLOT_WEIGHTED 0x80000000u
#define CAP_SAMPLE ((uint64_t)512 << 10)
void record_memory_full(void);          /* a stack got no memory */
void record_memory_init(void);          /* record_init: the reserve, nothing said yet */
void record_memory_after_fork(int fork_child);     /* threads_after_fork_child's; else a new attach session */
extern _Atomic int64_t mp_cap_sampled_us;  /* sampling from (µs after start; -1: not): process.settings */

#endif
