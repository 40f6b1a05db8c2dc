/* The dispatch's state and its rare calls out of hot.h: which case the
 * hot path takes (mp_hot_path, computed again after each change of its
 * inputs), the general path (every case the fast path leaves out, decided
 * in full) and the fast path's late work, the clock poll of the
 * allocations of a program without a background thread, a thread's first
 * operation; the move to sampling at MP_MAX_MEMORY. */
#include "hot.h"

#include <errno.h>

/* ------------------------------------------------------------ the hot path's case (record.h) */
_Atomic int mp_hot_path = HOT_GENERAL;
static _Atomic int thread_switched;     /* sticky: some thread's own switch was set */
static _Atomic unsigned hot_updates;

static int hot_path_now(void)
{
    if (mp_track_all) return HOT_FULL;
    if (__atomic_load_n(&mp_glibc_sizes, __ATOMIC_RELAXED) <= 0 || atomic_load(&thread_switched)) return HOT_GENERAL;
    if (mp_opt.stacks == STACKS_NONE || (mp_opt.stacks == STACKS_UNWIND && !atomic_load(&mp_active)))
        return HOT_COUNT;
    if (mp_opt.stacks == STACKS_UNWIND && mp_opt.sample && !atomic_load(&mp_threshold)) return HOT_SAMPLE;
    return HOT_GENERAL;
}

/* Callers change an input first, then call this. Two updates at once: the
 * one whose result may be stale (another began after it) computes again,
 * so the last value stored is one computed after the last change. */
void hot_path_update(void)
{
    for (;;) {
        unsigned mine = atomic_fetch_add(&hot_updates, 1) + 1;
        atomic_store(&mp_hot_path, hot_path_now());
        if (atomic_load(&hot_updates) == mine) return;
    }
}

void hot_path_thread_switch(void)
{
    atomic_store(&thread_switched, 1);
    hot_path_update();
}

/* The points of memory over time without a background thread (lifecycle.c:
 * a program of one thread in a cheap mode) are taken by its allocations,
 * and with the thread, those it is late for (ticks.c): each thread looks
 * at the clock every poll_every of its allocations, halved while they are
 * sparser than half MP_TICK (down to each one), doubled while they come
 * faster than an eighth of it (up to POLL_MAX: a clock read, about 20 ns,
 * per 1024 allocations at most). */
#define POLL_MAX 1024

void record_poll(struct mp_thread *t)
{
    double now = mp_now(), tick = mp_opt.tick > 0 ? mp_opt.tick : 1, since = now - t->poll_time;
    if (since > tick / 2) t->poll_every = t->poll_every > 1 ? t->poll_every / 2 : 1;
    else if (since < tick / 8 && t->poll_every < POLL_MAX) t->poll_every = t->poll_every ? t->poll_every * 2 : 1;
    t->poll_time = now;
    t->poll = t->poll_every - 1;
    double (*take)(double, int) = mp_tick_hook;
    if (take) take(now, background_running_now());
}

/* The thread's first operation: its record made. */
struct mp_thread *record_thread_first(void)
{
    int saved = errno;
    struct mp_thread *t = thread_self();
    errno = saved;
    return t;
}

/* ------------------------------------------------------------ the general path (hot.h) */

/* The cheap modes, in general: whether the block may get a slot. */
static inline int attribution_wanted(struct mp_thread *t, size_t size)
{
    return mp_opt.stacks == STACKS_TAGS ? t->ntags != 0
         : mp_opt.stacks == STACKS_UNWIND && stack_wanted(t, size) && (!mp_opt.sample || sample_countdown(t, size));
}

/* The allocator's size of block p: `usable`'s, else malloc's, read
 * inline (`glibc`: the mode implies glibc's sizes) or not. */
MP_HOT size_t block_size_of(void *p, int glibc, usable_fn usable)
{
    return usable ? usable(p) : glibc ? block_usable_glibc(p) : block_usable(p);
}

/* The cheap modes' allocation (the thread known; `attribute`: the block
 * may get a slot), the end of its operation (and of a realloc's that
 * began before): attributed first, so that a capture the thread's
 * counters start (record_thread_alloc) sees the block in its slot too. */
MP_HOT void record_cheap_alloc(struct mp_thread *t, void *p, size_t size, int attribute, int glibc, usable_fn usable)
{
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

/* Each mode's allocation, decided in full: the cheap modes' counters
 * (record_cheap_alloc: the thread touched, its block attributed when it
 * may get a slot), or full capture's block in the map. */
void __attribute__((noinline)) record_alloc_general(void *p, size_t size, usable_fn usable)
{
    struct mp_thread *t = record_thread();
    if (unlikely(t == NULL)) return;
    int path = atomic_load_explicit(&mp_hot_path, RELAXED);
    if (mp_track_all) {         /* whatever the case says (HOT_GENERAL until its first update) */
        record_full_alloc(t, p, size);
        peak_op_end(t);
    } else if (path == HOT_COUNT) {
        record_cheap_alloc(t, p, size, 0, 1, usable);
    } else if (path == HOT_SAMPLE) {
        record_cheap_alloc(t, p, size, sample_countdown(t, size), 1, usable);
    } else {
        record_cheap_alloc(t, p, size, attribution_wanted(t, size), 0, usable);
    }
    if (unlikely(--t->poll < 0)) record_poll(t);
}

void __attribute__((noinline)) record_free_general(void *p, usable_fn usable)
{
    struct mp_thread *t = record_thread();
    int path = atomic_load_explicit(&mp_hot_path, RELAXED);
    if (mp_track_all) {
        record_full_free(t, p);
        if (t) peak_op_end(t);
    } else if (path <= HOT_SAMPLE) {
        record_cheap_free(t, p, 1, usable);
    } else {
        record_cheap_free(t, p, 0, usable);
    }
}

void __attribute__((noinline)) record_late(struct mp_thread *t, int64_t now, int reached)
{
    if (reached) peak_reached(now);
    if (t->pending_live >= PEAK_SLACK || t->pending_live <= -PEAK_SLACK) peak_publish(t);
    if (t->poll < 0) record_poll(t);
}

/* ------------------------------------------------------------ MP_MAX_MEMORY (hot.h) */
_Atomic int64_t mp_cap_sampled_us = -1;
static _Atomic int cap_said;

void record_memory_init(void)
{
    atomic_store(&cap_said, 0);
    atomic_store(&mp_cap_sampled_us, -1);
    mp_memory_reserve(mp_track_all ? mp_opt.max_memory / 8 : 0);
}

/* A fork child samples from its start if its parent did; a new attach
 * session (its settings loaded again) starts as the first did. */
void record_memory_after_fork(int fork_child)
{
    if (!fork_child) record_memory_init();
    else if (atomic_load(&mp_cap_sampled_us) >= 0) atomic_store(&mp_cap_sampled_us, 0);
}

/* Full capture: the sampler from now on (the thread that says it, and
 * any other, finishes its block as it began), the reserve given to its
 * stacks; the totals are unchanged, every block still in the map. */
void record_memory_full(void)
{
    if (!mp_memory_exhausted() || atomic_exchange(&cap_said, 1)) return;
    unsigned long long cap = (unsigned long long)mp_opt.max_memory;
    if (!mp_track_all) {
        mp_log("warning", "the profiler reached MP_MAX_MEMORY (%llu bytes): new stacks are counted without a stack "
               "from now on", cap);
        return;
    }
    uint64_t period = mp_opt.sample ? mp_opt.sample : CAP_SAMPLE;
    double from = mp_now() - mp_start_time;
    __atomic_store_n(&mp_opt.sample, period, __ATOMIC_RELEASE);
    atomic_store(&mp_cap_sampled_us, (int64_t)(from * 1e6));
    mp_memory_use_reserve();
    mp_log("warning", "the profiler reached MP_MAX_MEMORY (%llu bytes, less the eighth kept for samples): from "
           "+%.3f s on it samples, one stack per %llu bytes allocated on average (%s); the totals stay exact",
           cap, from, (unsigned long long)period,
           period == CAP_SAMPLE ? "512K, MP_SAMPLE being 0" : "MP_SAMPLE's");
}
