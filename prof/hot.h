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
    STORE(t->ncalls, t->ncalls + 1);
    STORE(t->alloc_bytes, t->alloc_bytes + size);
    unsigned c = hist_class(live);
    STORE(t->hist[c].ncalls, t->hist[c].ncalls + 1);
    STORE(t->hist[c].memtot, t->hist[c].memtot + size);
    STORE(t->hist[c].live_in, t->hist[c].live_in + live);
    int64_t now = t->live + (int64_t)live;
    STORE(t->live, now);
    if (mp_track_all) now -= (int64_t)atomic_load_explicit(&t->freed_remote, RELAXED);
    if (now > t->peak) STORE(t->peak, now);
    publish_live(t, (int64_t)live, 0);
}

/* The cheap modes: a free counts for the thread that makes it (who
 * allocated an untracked block is not known), in the allocator's bytes. */
/* A block of `live` bytes leaves the thread's histogram. */
static inline void hist_free(struct mp_thread *t, uint64_t live)
{
    unsigned c = hist_class(live);
    STORE(t->hist[c].nfree, t->hist[c].nfree + 1);
    STORE(t->hist[c].live_out, t->hist[c].live_out + live);
}

static inline void untracked_free(struct mp_thread *t, uint64_t usable)
{
    hist_free(t, usable);
    STORE(t->nfree_local, t->nfree_local + 1);
    STORE(t->live, t->live - (int64_t)usable);
    publish_live(t, -(int64_t)usable, 0);
}

/* The cheap modes' allocation: 1 when done, 0 when record_alloc must do it
 * (full capture, or the thread is not known yet). */
static inline int record_cheap_alloc(void *p, size_t size)
{
    struct mp_thread *t = mp_self;
    if (unlikely(!t || mp_track_all)) return 0;
    thread_alloc(t, size, mp_next.malloc_usable_size(p));
    t->last_block = (uintptr_t)p;
    if (mp_opt.stacks == STACKS_TAGS ? t->ntags != 0
        : mp_opt.stacks == STACKS_UNWIND && stack_wanted(t, size) && sample_due(t, size)) {
        int saved = errno;
        record_attribute(t, p, size);
        errno = saved;
    }
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
