/* The hot path's inline part: what every allocation and free does in the
 * cheap modes (no stack: counters, the allocator's block size, the
 * sampling countdown), inlined in interpose.c's entry points, and the
 * helpers counters.c shares with it. The rest of the recording (unwinding,
 * slots, the pointer map, full capture) is counters.c's.
 *
 * Process peak: each thread accumulates its live-byte delta and publishes it
 * to one atomic when it exceeds PEAK_SLACK (publish_pending), without a
 * shared write per allocation. */
#ifndef MP_HOT_H
#define MP_HOT_H

#include "record.h"
#include "hooks.h"

#include <errno.h>

#define PEAK_SLACK (64 << 10)

extern MP_TLS struct mp_thread *mp_self;        /* NULL until thread_self() */
void publish_pending(struct mp_thread *t);

/* The peak (record.h): the current epoch and the live bytes at which the
 * next capture starts, read by every operation, written by captures. */
extern struct mp_peak_state { _Atomic uint32_t epoch; _Atomic int64_t next; } mp_peak;
void peak_reached(int64_t live);
static inline uint32_t peak_epoch(void) { return atomic_load_explicit(&mp_peak.epoch, RELAXED); }
/* Before the thread changes its records, at the start of an operation:
 * the epoch read once for the whole operation (later touches in it are
 * no-ops), the thread saved first if a capture came since its latest
 * save, and busy odd until op_end. */
static inline void thread_touch(struct mp_thread *t)
{
    if (t->busy & 1) return;
    STORE(t->busy, t->busy + 1);
    atomic_thread_fence(memory_order_release);  /* before its changes (a compiler barrier on x86) */
    uint32_t e = peak_epoch();
    if (unlikely(t->epoch != e)) thread_save(t, e);
}
/* The end of an operation that touched t (interpose.c's op_leave, a
 * handler's log drained): its changes before the even busy. */
static inline void op_end(struct mp_thread *t)
{
    uint32_t b = t->busy;
    if (b & 1) __atomic_store_n(&t->busy, b + 1, __ATOMIC_RELEASE);   /* after its changes */
}
/* An entry point's way out of the profiler. */
static inline void op_leave(void)
{
    struct mp_thread *t = mp_self;
    if (t) op_end(t);
    guard_leave(0);
}
/* A block that may get a slot (unwinding, a tag path, sampling: may
 * change errno). */
void record_attribute(struct mp_thread *t, void *p, size_t size);
void record_sampled_free(struct mp_thread *t, void *p);

static inline void publish_live(struct mp_thread *t, int64_t delta, int force)
{
    t->pending_live += delta;
    if (unlikely(force || t->pending_live >= PEAK_SLACK || t->pending_live <= -PEAK_SLACK)) publish_pending(t);
}

/* sample_hit's common case: the block does not reach the next
 * sample point (0), or it may (1: sample_hit decides). */
static inline int sample_due(struct mp_thread *t, size_t size)
{
    if (!mp_opt.sample || t->sample_countdown <= (int64_t)size) return 1;
    t->sample_countdown -= (int64_t)size;
    return 0;
}

/* Active (process switch or the thread's own) and within the threshold. */
static inline int stack_wanted(struct mp_thread *t, size_t size)
{
    int on = t->active >= 0 ? t->active : atomic_load_explicit(&mp_active, RELAXED);
    if (!on) return 0;
    long th = atomic_load_explicit(&mp_threshold, RELAXED);
    return !(th > 0 ? size < (size_t)th : th < 0 && size >= (size_t)-th);
}

/* The thread's exact totals: `live` bytes join its live bytes (the
 * requested size with every block tracked, else the allocator's size). */
static inline void thread_alloc(struct mp_thread *t, uint64_t size, uint64_t live)
{
    thread_touch(t);
    STORE(t->c.ncalls, t->c.ncalls + 1);
    STORE(t->c.alloc_bytes, t->c.alloc_bytes + size);
    unsigned c = hist_class(live);
    STORE(t->c.hist[c].ncalls, t->c.hist[c].ncalls + 1);
    STORE(t->c.hist[c].memtot, t->c.hist[c].memtot + size);
    STORE(t->c.hist[c].live_in, t->c.hist[c].live_in + live);
    int64_t now = t->c.live + (int64_t)live;
    STORE(t->c.live, now);
    if (mp_track_all) now -= (int64_t)atomic_load_explicit(&t->freed_remote, RELAXED);
    if (now > t->c.peak) {
        STORE(t->c.peak, now);
        if (unlikely(now >= atomic_load_explicit(&mp_peak.next, RELAXED))) peak_reached(now);
    }
    publish_live(t, (int64_t)live, 0);
}

/* A block of `live` bytes leaves the thread's histogram (the thread
 * touched). */
static inline void hist_free(struct mp_thread *t, uint64_t live)
{
    unsigned c = hist_class(live);
    STORE(t->c.hist[c].nfree, t->c.hist[c].nfree + 1);
    STORE(t->c.hist[c].live_out, t->c.hist[c].live_out + live);
}

/* The cheap modes: a free counts for the thread that makes it (who
 * allocated an untracked block is not known), in the allocator's bytes. */
static inline void untracked_free(struct mp_thread *t, uint64_t usable)
{
    thread_touch(t);
    hist_free(t, usable);
    STORE(t->c.nfree_local, t->c.nfree_local + 1);
    STORE(t->c.live, t->c.live - (int64_t)usable);
    publish_live(t, -(int64_t)usable, 0);
}

/* The cheap modes' allocation: 1 when done, 0 when record_alloc must do it
 * (full capture, or the thread is not known yet). */
static inline int record_cheap_alloc(void *p, size_t size)
{
    struct mp_thread *t = mp_self;
    if (unlikely(!t || mp_track_all)) return 0;
    /* attributed first, so that a capture the thread's counters start
     * (thread_alloc) sees the block in its slot too */
    if (mp_opt.stacks == STACKS_TAGS ? t->ntags != 0
        : mp_opt.stacks == STACKS_UNWIND && stack_wanted(t, size) && sample_due(t, size)) {
        int saved = errno;
        record_attribute(t, p, size);
        errno = saved;
    }
    thread_alloc(t, size, mp_next.malloc_usable_size(p));
    t->last_block = (uintptr_t)p;
    return 1;
}

/* The cheap modes' free, before the real free. 1 when done. */
static inline int record_cheap_free(void *p)
{
    struct mp_thread *t = mp_self;
    if (unlikely(!t || mp_track_all)) return 0;
    untracked_free(t, mp_next.malloc_usable_size(p));
    if (unlikely(ptrmap_may_hold((uintptr_t)p))) record_sampled_free(t, p);
    t->last_block = 0;      /* any free ends "temporary" (heaptrack's definition) */
    return 1;
}

#endif
