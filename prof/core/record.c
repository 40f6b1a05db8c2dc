/* The recording behind hot.h's dispatch: full capture (every block in the
 * pointer map, record_full_*), the cheap modes' blocks that may get a
 * slot (record_attribute, record_sampled_free), realloc's two halves, the
 * signal handlers' blocks, and what they share: sampling, the stack cache,
 * the counter slots' counting and MP_TIME.
 *
 * Full capture: unwind → per-thread stack cache (→ stacks_intern on a
 * miss) → the thread's counter slot for that stack → ptrmap; a free:
 * ptrmap → the slot the block was counted in. A slot belongs to the thread
 * that allocated; another thread's free adds to the slot's *_remote
 * atomics, so the common path writes only lines its own thread owns. Slot
 * counters are fixed point with 8 fractional bits (WEIGHT_ONE), so a
 * sampled block can stand for a fractional number of blocks (MP_SAMPLE);
 * the flush rounds. Thread totals are exact integers, sampled or not. */
#include "hot.h"
#include "python.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

int mp_track_all = 1;
_Atomic int mp_active = 1;
_Atomic long mp_threshold;

void record_init(void)
{
    mp_track_all = !mp_opt.sample && mp_opt.stacks == STACKS_UNWIND && mp_opt.enabled;
    ptrmap_init(!mp_track_all);
    record_memory_init();
    hot_path_update();
}

/* Weight of a tracked block in WEIGHT_ONE units: 1 unless sampling, where
 * a block of `size` bytes is sampled with probability p = 1 - exp(-size /
 * MP_SAMPLE) and stands for 1/p blocks (an unbiased estimate).
 * Deterministic in size, so the free subtracts exactly what the allocation
 * added. */
static inline uint64_t block_weight(uint64_t size)
{
    if (likely(!mp_opt.sample)) return WEIGHT_ONE;
    double p = -expm1(-(double)size / (double)mp_opt.sample);
    return p > 0 ? (uint64_t)(WEIGHT_ONE / p + 0.5) : WEIGHT_ONE;
}

/* Sampling decision: a Poisson process over allocated bytes. The next sample
 * point is an exponential draw of mean MP_SAMPLE bytes away. (record_alloc
 * counts down inline the blocks that do not reach it.) */
static int sample_hit(struct mp_thread *t, size_t size)
{
    if (likely(!mp_opt.sample)) return 1;
    t->sample_countdown -= (int64_t)size;
    if (t->sample_countdown > 0) return 0;
    while (t->sample_countdown <= 0) {
        t->rng ^= t->rng << 13, t->rng ^= t->rng >> 7, t->rng ^= t->rng << 17;
        double u = ((t->rng >> 11) + 0.5) * (1.0 / 9007199254740992.0);
        t->sample_countdown += (int64_t)(-log(u) * (double)mp_opt.sample) + 1;
    }
    return 1;
}

/* The thread's stack: unwound frames (unwind set) from ret_addrs[0],
 * then its tags as the outermost frames, fed to *h; returns their number.
 * The Python frames running (python.c) are fed to *h too and kept in t
 * (t->py.n), for stack_python to place. */
/* inlined: on the allocation path it must add no frame for the unwinder to walk */
static inline __attribute__((always_inline)) int capture(struct mp_thread *t, uintptr_t *ret_addrs, int unwind,
                                                         int *truncated, struct mp_hash *h)
{
    int n = 0;
    unsigned gen = atomic_load_explicit(&mp_maps_gen, RELAXED);
    if (unlikely(t->maps_gen != gen)) {         /* an object was unloaded: both caches are stale */
        memset(t->cache, 0, sizeof t->cache);
        memset(t->walker.rules, 0, sizeof t->walker.rules);
        t->walker.walk_n = 0;
        t->maps_gen = gen;
    }
    if (unwind) n = unwind_capture(&t->walker, __builtin_frame_address(0), ret_addrs, mp_opt.depth, truncated, h);
    t->py.native = n;
    t->py.n = 0;
    if (mp_py_on && unwind) python_walk(&t->py, h);
    /* tags are the outermost frames: appended after the root, innermost tag first */
    for (int i = (t->ntags < MP_MAX_TAGS ? t->ntags : MP_MAX_TAGS) - 1; i >= 0; i--) {
        ret_addrs[n++] = t->tags[i];
        hash_add(h, t->tags[i]);
    }
    return n;
}

/* A captured stack with its Python frames in place of the evaluation
 * loop's (python_splice), its hash the one of what it holds now; the
 * stack itself if none. */
static const uintptr_t *stack_python(struct mp_thread *t, const uintptr_t *ret_addrs, int *n, unsigned flags,
                                     uint64_t *hash)
{
    if (!t->py.n) return ret_addrs;
    *n = python_splice(&t->py, ret_addrs, t->py.native, *n, t->spliced);
    struct mp_hash h = MP_HASH_INIT;
    for (int i = 0; i < *n; i++) hash_add(&h, t->spliced[i]);
    *hash = hash_final(h, *n, flags);
    return t->spliced;
}

/* The thread's slot for a captured stack (unwound frames, then its tags
 * as the outermost frames; with MP_STACKS=tags only the tags). 0 = count
 * without stack. Inlined in full capture's allocation: one frame less to
 * call and to walk past. */
static inline __attribute__((always_inline)) uint32_t stack_slot_here(struct mp_thread *t, int unwind)
{
    uintptr_t *ret_addrs = t->capture;
    struct mp_hash h = MP_HASH_INIT;
    int truncated = 0;
    int n = capture(t, ret_addrs, unwind, &truncated, &h);
    if (!n) return 0;
    unsigned flags = truncated ? STACK_TRUNCATED : 0;
    uint64_t hash = hash_final(h, n, flags);
    uint32_t shape = (uint32_t)n | flags << 16;
    /* two ways: the latest stack of the set first (two hot stacks of one
     * set, found alternately, would otherwise miss every time) */
    struct mp_stack_cache *c = &t->cache[(hash >> 7) & (MP_CACHE_SIZE - 2)];
    if (c[0].hash == hash && c[0].leaf == ret_addrs[0] && c[0].shape == shape) return c[0].slot;
    if (c[1].hash == hash && c[1].leaf == ret_addrs[0] && c[1].shape == shape) return c[1].slot;
    uint64_t final_hash = hash;
    int m = n;
    const uintptr_t *stack = stack_python(t, ret_addrs, &m, flags, &final_hash);
    uint32_t id = stacks_intern(stack, m, flags, final_hash);
    uint32_t slot = id ? slot_of_stack(t, id) : 0;
    if (slot) {
        c[1] = c[0];
        c[0] = (struct mp_stack_cache){ hash, ret_addrs[0], shape, slot };
    } else record_memory_full();
    return slot;
}

/* stack_slot_here for the other callers (the cheap modes, tags), in a
 * frame of its own */
static uint32_t __attribute__((noinline)) stack_slot(struct mp_thread *t, int unwind)
{
    return stack_slot_here(t, unwind);
}

/* MP_STACKS=tags: the slot of the thread's current tags, kept until a push
 * or a pop (api.c clears it). 0 = no tag. */
static inline uint32_t tag_slot(struct mp_thread *t)
{
    if (!t->ntags) return 0;
    if (unlikely(!t->tag_slot)) t->tag_slot = stack_slot(t, 0);
    return t->tag_slot;
}

/* ---------------------------------------------------------------- time (MP_TIME) */

/* Each thread's wall time between its allocations, less the profiler's
 * own: counted from the mark (set as the profiler returns to the program)
 * to the profiler's next entry on the thread, and credited to the slot of
 * the next allocation recorded with a stack. Sampled, only sampled
 * allocations enter here: the time between them, and the profiler's fast
 * path (a few ns an operation) counts as the program's. */
static inline uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void time_enter(struct mp_thread *t)
{
    if (unlikely(mp_opt.time) && t->time_mark) t->time_pending += mono_ns() - t->time_mark;
}

static inline void time_leave(struct mp_thread *t)
{
    if (unlikely(mp_opt.time)) t->time_mark = mono_ns();
}

/* A mapping's stack (maps.c): the thread's, as an allocation's is taken
 * (MP_STACKS: unwound frames and tags, tags alone, or neither), below one
 * more leaf, the pseudo frame naming the mapping's kind; its id (0: no
 * memory). Not cached: each mapping is a system call anyway. Its time is
 * the profiler's (MP_TIME). */
uint32_t record_stack_under(struct mp_thread *t, uintptr_t leaf)
{
    uintptr_t *ret_addrs = t->capture;
    struct mp_hash h = MP_HASH_INIT;
    int truncated = 0;
    time_enter(t);
    hash_add(&h, leaf);
    ret_addrs[0] = leaf;
    int n = 1 + (mp_opt.stacks == STACKS_NONE ? 0 : capture(t, ret_addrs + 1, mp_opt.stacks == STACKS_UNWIND, &truncated, &h));
    unsigned flags = truncated ? STACK_TRUNCATED : 0;
    uint64_t hash = hash_final(h, n, flags);
    const uintptr_t *stack = ret_addrs;
    if (t->py.n && mp_opt.stacks != STACKS_NONE) {      /* the leaf stays; the frames under it get theirs */
        t->py.native++;
        stack = stack_python(t, ret_addrs, &n, flags, &hash);
    }
    uint32_t id = stacks_intern(stack, n, flags, hash);
    if (!id) record_memory_full();
    time_leave(t);
    return id;
}

/* Size classes per stack (stack_hist.c): a slot's blocks of the class of
 * its first one count in the slot alone; those of other classes also in
 * the thread's (slot, class) entry, returned here (NULL: the first class,
 * or no memory). Most stacks allocate one class. */
static inline struct stack_hist_entry *other_class(struct mp_thread *t, struct mp_slot_side *side, uint32_t idx,
                                                   uint64_t size)
{
    uint8_t cls = (uint8_t)(hist_class(size) + 1), first = LOAD(side->class0);
    if (likely(first == cls)) return NULL;
    if (!first) {        /* the owner's first block (a free comes after it) */
        STORE(side->class0, cls);
        return NULL;
    }
    return stack_hist_entry(t, idx, size);
}

/* The calling thread enters (1) or leaves (0) the profiler other than
 * through the allocator: a snapshot it asked for. */
void time_in_profiler(int enter)
{
    struct mp_thread *t = mp_tls.self;
    if (!t) return;
    if (enter) time_enter(t);
    else time_leave(t);
}

/* An allocation attributed to slot idx: counted with weight cw, tracked
 * (in the map) with weight lw, or not tracked (lw 0); MP_TIME: the
 * thread's time since its previous one, credited. */
static inline void record_slot_alloc(struct mp_thread *t, uint32_t idx, uint64_t size, uint64_t cw, uint64_t lw)
{
    struct mp_slot *s = slot_at(idx);
    peak_touch_slot(t, s, idx);
    struct mp_slot_side *side = slot_side(idx);
    struct stack_hist_entry *e = s->stack_id ? other_class(t, side, idx, size) : NULL;
    if (e) {
        STORE(e->ncalls, e->ncalls + cw);
        STORE(e->memtot, e->memtot + size * cw);
        STORE(e->live_n, e->live_n + lw);
        STORE(e->live_b, e->live_b + size * lw);
    }
    STORE(s->ncalls, s->ncalls + cw);
    STORE(s->memtot, s->memtot + size * cw);
    if (unlikely(mp_opt.time)) {
        STORE(side->time, side->time + t->time_pending);
        t->time_pending = 0;
    }
    if (!lw) return;
    STORE(s->live_n, s->live_n + lw);
    STORE(s->live_b, s->live_b + size * lw);
    uint64_t live = s->live_b - atomic_load_explicit(&s->freed_remote, RELAXED);
    if ((mp_track_all || !mp_opt.sample) && live > s->maxlive) STORE(s->maxlive, live);   /* sampled: slot_read's */
}

/* A tracked block of slot idx freed by thread t (NULL: an unrecorded thread;
 * else touched first) at address p: a temporary one if it is the thread's
 * latest allocation and the thread freed nothing since (heaptrack's
 * definition: the allocation is directly followed by its free; every free
 * clears last_block). */
static inline void record_slot_free(struct mp_thread *t, uint32_t entry, uint64_t size, uintptr_t p)
{
    uint32_t idx = entry & ~SLOT_WEIGHTED;      /* a map entry's: its weight (hot.h) */
    uint64_t w = !mp_track_all || (entry & SLOT_WEIGHTED) ? block_weight(size) : WEIGHT_ONE;
    struct mp_slot *s = slot_at(idx);
    struct mp_slot_side *side = slot_side(idx);
    struct stack_hist_entry *e = t && s->stack_id ? other_class(t, side, idx, size) : NULL;
    if (e) {
        STORE(e->live_n, e->live_n - w);
        STORE(e->live_b, e->live_b - size * w);
    }
    if (t && s->thread_seq == t->seq) {
        peak_touch_slot(t, s, idx);
        if (p == t->last_block) {       /* its own latest allocation: the owner's slot */
            STORE(side->ntemp, side->ntemp + w);
            t->last_block = 0;
        }
        STORE(s->live_n, s->live_n - w);
        STORE(s->live_b, s->live_b - size * w);
    } else {
        peak_touch_remote_slot(s, side, idx, t ? t->epoch : peak_epoch());
        atomic_fetch_add_explicit(&s->nfree_remote, w, RELAXED);
        atomic_fetch_add_explicit(&s->freed_remote, size * w, RELAXED);
    }
}

/* With every block tracked: a free of slot idx's block counts for the
 * thread that allocated it. */
static void tracked_free(struct mp_thread *t, uint32_t entry, uint64_t size, uintptr_t p)
{
    peak_touch_thread(t);
    record_slot_free(t, entry, size, p);
    record_hist_free(t, size);
    struct mp_slot *s = slot_at(entry & ~SLOT_WEIGHTED);
    if (s->thread_seq == t->seq) {
        STORE(t->c.nfree_local, t->c.nfree_local + 1);
        STORE(t->c.live, t->c.live - (int64_t)size);
    } else {
        struct mp_thread *owner = thread_by_seq(s->thread_seq);
        peak_touch_remote_thread(owner, t->epoch);
        atomic_fetch_add_explicit(&owner->nfree_remote, 1, RELAXED);
        atomic_fetch_add_explicit(&owner->freed_remote, size, RELAXED);
    }
    peak_publish_live(t, -(int64_t)size, 0);
}

/* The cheap modes, a block that may get a slot (the fast path decided).
 * Unwound stacks are taken for sampled blocks only, which count with
 * their weight; a tag path is known without unwinding, so every
 * allocation counts for its tags exactly, and sampling only chooses the
 * blocks whose frees are followed. */
static void attribute(struct mp_thread *t, void *p, size_t size)
{
    uint32_t slot = 0;
    uint64_t cw = WEIGHT_ONE, lw = 0;
    if (mp_opt.stacks == STACKS_TAGS) {
        if (!stack_wanted(t, size) || !(slot = tag_slot(t))) return;
        if (sample_hit(t, size)) lw = block_weight(size);
    } else {
        if (!sample_hit(t, size) || !(slot = stack_slot(t, 1))) return;
        cw = lw = block_weight(size);
    }
    peak_touch_thread(t);
    STORE(t->c.attr_n, t->c.attr_n + 1);
    STORE(t->c.attr_b, t->c.attr_b + size);
    record_slot_alloc(t, slot, size, cw, lw);
    if (lw) ptrmap_insert((uintptr_t)p, slot, size);
}

/* attribute, its time the profiler's (MP_TIME) */
void record_attribute(struct mp_thread *t, void *p, size_t size)
{
    int saved = errno;
    if (unlikely(atomic_load_explicit(&mp_py_waiting, RELAXED))) python_install();
    time_enter(t);
    attribute(t, p, size);
    time_leave(t);
    errno = saved;
}

static void unknown_free(struct mp_thread *t)
{
    peak_touch_thread(t);
    STORE(t->c.nfree_unknown, t->c.nfree_unknown + 1);
}

/* Full capture (hot.h's dispatch, the thread marked): the block in its
 * stack's slot, its thread's totals and the map. */
void record_full_alloc(struct mp_thread *t, void *p, size_t size)
{
    int saved = errno;
    if (unlikely(atomic_load_explicit(&mp_py_waiting, RELAXED))) python_install();
    time_enter(t);
    ptrmap_prefetch((uintptr_t)p);     /* its miss under the unwind */
    /* sample_hit: 1 until MP_MAX_MEMORY is reached (record_memory_full) */
    uint32_t slot = stack_wanted(t, size) && sample_hit(t, size) ? stack_slot_here(t, 1) : 0;
    uint64_t w = slot && unlikely(mp_opt.sample) ? block_weight(size) : WEIGHT_ONE;
    if (!slot) slot = t->nostack_slot;
    peak_touch_thread(t);
    record_slot_alloc(t, slot, size, w, w);
    record_thread_alloc(t, size, size, 1);
    t->last_block = (uintptr_t)p;
    MP_ASSERT(!slot || slot_at(slot)->thread_seq == t->seq);    /* a block goes in its own thread's slot */
    ptrmap_insert((uintptr_t)p, w == WEIGHT_ONE ? slot : slot | SLOT_WEIGHTED, size);
    time_leave(t);
    errno = saved;
}

/* A block out of the map: 1 and its slot and size, or 0 (not there). */
static inline int map_take(const void *p, uint32_t *slot, uint64_t *size)
{
    if (!ptrmap_remove((uintptr_t)p, slot, size)) return 0;
    uint32_t idx = *slot & ~SLOT_WEIGHTED;
    MP_ASSERT(idx < slot_limit() && slot_at(idx)->thread_seq);     /* a map entry names a live slot */
    (void)idx;
    return 1;
}

/* Full capture's free (t NULL: a thread without a record), before the real
 * free, so the address cannot be reused by another thread's malloc while
 * it is still in the map. */
void record_full_free(struct mp_thread *t, void *p)
{
    int saved = errno;
    uint32_t slot;
    uint64_t size;
    if (t) time_enter(t);
    int found = map_take(p, &slot, &size);
    if (found && t) tracked_free(t, slot, size, (uintptr_t)p);
    else if (t) unknown_free(t);
    if (t) {
        t->last_block = 0;      /* any free ends "temporary" (heaptrack's definition) */
        time_leave(t);
    }
    errno = saved;
}

/* The cheap modes: a free whose filter bucket says the map may hold it. */
void record_sampled_free(struct mp_thread *t, void *p)
{
    int saved = errno;
    uint32_t slot;
    uint64_t size;
    if (map_take(p, &slot, &size)) record_slot_free(t, slot, size, (uintptr_t)p);
    errno = saved;
}

/* realloc's first half, before the real realloc: the old block out of the
 * map (both modes), its allocator size for the cheap modes (`usable`:
 * given, for another allocator's block; 0 in full capture). */
void record_realloc_take_sized(void *old, struct mp_block *b, size_t usable)
{
    b->usable = usable;
    if (!mp_track_all && !ptrmap_may_hold((uintptr_t)old)) b->slot = 0;
    else if (!map_take(old, &b->slot, &b->size)) b->slot = 0;
}

void record_realloc_take(void *old, struct mp_block *b)
{
    record_realloc_take_sized(old, b, mp_track_all ? 0 : block_usable(old));
}

/* After the real realloc: p == NULL && new_size != 0 means it failed and
 * the old block lives on; otherwise the old block is gone (freed or moved).
 * The new block is the dispatch's (hot.h, record_alloc). */
void record_realloc_done(struct mp_thread *t, void *old, const struct mp_block *b, void *p, size_t new_size)
{
    if (!p && new_size != 0) {
        if (b->slot) ptrmap_insert((uintptr_t)old, b->slot, b->size);
        return;
    }
    if (mp_track_all) {
        if (t && b->slot) tracked_free(t, b->slot, b->size, (uintptr_t)old);
        else if (t) unknown_free(t);
    } else {
        if (t) record_untracked_free(t, b->usable);
        if (b->slot) record_slot_free(t, b->slot, b->size, (uintptr_t)old);
    }
    if (t) t->last_block = 0;
}

/* A signal handler's block (handler_log.c drains them), counted without a
 * stack. With every block tracked, a live one joins the map; in the cheap
 * modes it is an untracked block like any other. `freed`: the handler
 * freed it too (it is gone). */
void record_handler_block(struct mp_thread *t, void *p, uint64_t size, int freed)
{
    if (mp_track_all) {
        peak_touch_thread(t);
        record_slot_alloc(t, t->nostack_slot, size, WEIGHT_ONE, WEIGHT_ONE);
        record_thread_alloc(t, size, size, 1);
        if (freed) tracked_free(t, t->nostack_slot, size, 0);
        else ptrmap_insert((uintptr_t)p, t->nostack_slot, size);
        return;
    }
    record_thread_alloc(t, size, freed ? size : block_usable(p), 0);
    if (freed) record_untracked_free(t, size);
}

/* Handlers' allocations the log had no room for: counted, without a stack
 * (their frees will be unknown ones). */
void record_handler_lost(struct mp_thread *t, uint64_t ncalls, uint64_t bytes)
{
    peak_touch_thread(t);
    if (mp_track_all) {
        struct mp_slot *ns = slot_at(t->nostack_slot);
        peak_touch_slot(t, ns, t->nostack_slot);
        STORE(ns->ncalls, ns->ncalls + ncalls * WEIGHT_ONE);
        STORE(ns->memtot, ns->memtot + bytes * WEIGHT_ONE);
    }
    STORE(t->c.lost_n, t->c.lost_n + ncalls);
    STORE(t->c.lost_b, t->c.lost_b + bytes);
    STORE(t->c.live, t->c.live + (int64_t)bytes);
    peak_publish_live(t, (int64_t)bytes, 0);
}
