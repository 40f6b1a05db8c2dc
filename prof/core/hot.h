/* The hot path's inline part and its one dispatch: every recording entry
 * point of interpose.c calls record_alloc or record_free (below), which
 * decide the mode once per call, by one load for the cheap modes' common
 * cases (mp_hot_path, record.h): full capture (mp_track_all: every block in
 * the map) goes to record.c's record_full_*, the cheap modes (no stack:
 * counters, the allocator's block size, the sampling countdown) stay
 * inline in record_cheap_*, which call out only for a block that may get a
 * slot. Neither mode calls the other. All of it is inlined into the entry
 * points (MP_HOT): a call costs the cheap path a tenth of its instructions. */
#ifndef MP_HOT_H
#define MP_HOT_H

#include "peak.h"
#include "hooks.h"

/* record.c: the out-of-line parts, each keeping errno (the real call's,
 * which the entry point gives back) */
struct mp_thread *record_thread_first(void);
void record_poll(struct mp_thread *t);     /* every t->poll allocations: the clock */
void record_full_alloc(struct mp_thread *t, void *p, size_t size);
void record_full_free(struct mp_thread *t, void *p);          /* t NULL: a thread without a record */
void record_attribute(struct mp_thread *t, void *p, size_t size);
void record_sampled_free(struct mp_thread *t, void *p);
uint32_t record_stack_under(struct mp_thread *t, uintptr_t leaf);     /* maps.c: a mapping's stack */
void record_realloc_take_sized(void *old, struct mp_block *b, size_t usable);  /* another allocator's block */

/* MP_MAX_MEMORY reached (record_mode.c): full capture holds an eighth of
 * the cap back and, once the rest is used, samples (MP_SAMPLE's sampler,
 * its period in mp_opt.sample from then on) while every block stays in the
 * map, so the totals stay exact; a sampled block's map entry has
 * SLOT_WEIGHTED in its slot (its frees take its weight back). The cheap
 * modes count new stacks without a stack. Said once. */
#define SLOT_WEIGHTED 0x80000000u
#define CAP_SAMPLE ((uint64_t)512 << 10)
void record_memory_full(void);          /* a stack got no memory */
void record_memory_init(void);          /* record_init: the reserve, nothing said yet */
void record_memory_after_fork(int fork_child);     /* threads_after_fork_child's; else a new attach session */
extern _Atomic int64_t mp_cap_sampled_us;  /* sampling from (µs after start; -1: not): process.settings */

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

/* sample_hit's common case: the block does not reach the next
 * sample point (0), or it may (1: sample_hit decides). */
static inline int sample_countdown(struct mp_thread *t, size_t size)
{
    if (t->sample_countdown <= (int64_t)size) return 1;
    t->sample_countdown -= (int64_t)size;
    return 0;
}
static inline int sample_due(struct mp_thread *t, size_t size)
{
    return !mp_opt.sample || sample_countdown(t, size);
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
 * thread_calls): `live` bytes join its live bytes (tracked:
 * every block is, and live is the requested size; else the allocator's
 * size). tracked is the caller's constant: the mode is known there. */
static inline void record_thread_alloc(struct mp_thread *t, uint64_t size, uint64_t live, int tracked)
{
    peak_touch_thread(t);
    unsigned c = hist_class(live);
    STORE(t->c.hist[c].ncalls, t->c.hist[c].ncalls + 1);
    STORE(t->c.hist[c].memtot, t->c.hist[c].memtot + size);
    STORE(t->c.hist[c].live_in, t->c.hist[c].live_in + live);
    int64_t now = t->c.live + (int64_t)live;
    STORE(t->c.live, now);
    if (tracked) now -= (int64_t)atomic_load_explicit(&t->freed_remote, RELAXED);
    peak_thread_live(t, now);
    peak_publish_live(t, (int64_t)live, 0);
}

/* A block of `live` bytes leaves the thread's histogram (the thread
 * touched). */
static inline void record_hist_free(struct mp_thread *t, uint64_t live)
{
    unsigned c = hist_class(live);
    STORE(t->c.hist[c].nfree, t->c.hist[c].nfree + 1);
    STORE(t->c.hist[c].live_out, t->c.hist[c].live_out + live);
}

/* The cheap modes: a free counts for the thread that makes it (who
 * allocated an untracked block is not known), in the allocator's bytes. */
static inline void record_untracked_free(struct mp_thread *t, uint64_t usable)
{
    peak_touch_thread(t);
    record_hist_free(t, usable);
    STORE(t->c.nfree_local, t->c.nfree_local + 1);
    STORE(t->c.live, t->c.live - (int64_t)usable);
    peak_publish_live(t, -(int64_t)usable, 0);
}

/* The cheap modes, in general: whether the block may get a slot. */
static inline int attribution_wanted(struct mp_thread *t, size_t size)
{
    return mp_opt.stacks == STACKS_TAGS ? t->ntags != 0
         : mp_opt.stacks == STACKS_UNWIND && stack_wanted(t, size) && sample_due(t, size);
}

/* The allocator's size of block p: `usable`'s (another allocator's
 * blocks: pymalloc's, pymalloc.c), else malloc's, read inline (`glibc`) or
 * not. `usable` is each caller's constant: malloc's path has no test. */
typedef size_t (*usable_fn)(void *);
MP_HOT size_t block_size_of(void *p, int glibc, usable_fn usable)
{
    return usable ? usable(p) : glibc ? block_usable_glibc(p) : block_usable(p);
}

/* The cheap modes' allocation (the thread known; `attribute`: the block
 * may get a slot; `glibc`, `usable`: how its size is read), the end of its
 * operation (and of a realloc's that began before). */
MP_HOT void record_cheap_alloc(struct mp_thread *t, void *p, size_t size, int attribute, int glibc, usable_fn usable)
{
    /* attributed first, so that a capture the thread's counters start
     * (record_thread_alloc) sees the block in its slot too */
    if (attribute) record_attribute(t, p, size);
    record_thread_alloc(t, size, block_size_of(p, glibc, usable), 0);
    t->last_block = (uintptr_t)p;
    peak_op_end_touched(t);
}

/* The cheap modes' free, before the real free (t NULL: a thread without a
 * record), to the end of its operation. */
MP_HOT void record_cheap_free(struct mp_thread *t, void *p, int glibc, usable_fn usable)
{
    if (likely(t != NULL)) record_untracked_free(t, block_size_of(p, glibc, usable));
    if (unlikely(ptrmap_may_hold((uintptr_t)p))) record_sampled_free(t, p);
    if (likely(t != NULL)) {
        t->last_block = 0;     /* any free ends "temporary" (heaptrack's definition) */
        peak_op_end_touched(t);
    }
}

/* ------------------------------------------------------------ the dispatch */

/* The calling thread's record (its first operation makes it). NULL: it
 * has none. */
static inline struct mp_thread *record_thread(void)
{
    struct mp_thread *t = mp_tls.self;
    return likely(t != NULL) ? t : record_thread_first();
}

/* A block the real allocator returned (p NULL: nothing to record), inside
 * its entry point's guard: recorded, and the thread's operation ended
 * (peak.h), an operation that began before it (realloc's) included.
 * `usable`: the size of another allocator's blocks (NULL: malloc's). */
MP_HOT void record_alloc_by(void *p, size_t size, usable_fn usable)
{
    if (unlikely(p == NULL)) return;
    struct mp_thread *t = record_thread();
    if (unlikely(t == NULL)) return;
    int path = atomic_load_explicit(&mp_hot_path, RELAXED);
    if (likely(path == HOT_COUNT)) {
        record_cheap_alloc(t, p, size, 0, 1, usable);
    } else if (path == HOT_SAMPLE) {
        record_cheap_alloc(t, p, size, sample_countdown(t, size), 1, usable);
    } else if (mp_track_all) {
        record_full_alloc(t, p, size);
        peak_op_end(t);
    } else {
        record_cheap_alloc(t, p, size, attribution_wanted(t, size), 0, usable);
    }
    if (unlikely(--t->poll < 0)) record_poll(t);
}

MP_HOT void record_alloc(void *p, size_t size) { record_alloc_by(p, size, NULL); }

/* A block about to be freed for real (p not NULL): recorded, the
 * operation ended. `usable` as record_alloc_by's. */
MP_HOT void record_free_by(void *p, usable_fn usable)
{
    struct mp_thread *t = record_thread();
    if (likely(atomic_load_explicit(&mp_hot_path, RELAXED) != HOT_GENERAL)) {
        record_cheap_free(t, p, 1, usable);
    } else if (mp_track_all) {
        record_full_free(t, p);
        if (t) peak_op_end(t);
    } else {
        record_cheap_free(t, p, 0, usable);
    }
}

MP_HOT void record_free(void *p) { record_free_by(p, NULL); }

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

#endif
