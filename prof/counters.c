/* Per-thread state and counters: the recording path behind interpose.c.
 *
 * record_alloc: unwind → per-thread stack cache (→ stacks_intern on a miss)
 * → the thread's counter slot for that stack → ptrmap. record_free: ptrmap
 * → the slot the block was counted in → decrement. A slot belongs to the
 * thread that allocated; another thread's free adds to the slot's *_remote
 * atomics, so the common path writes only lines its own thread owns.
 *
 * Slot counters are fixed point with 8 fractional bits (WEIGHT_ONE), so a
 * sampled block can stand for a fractional number of blocks (MP_SAMPLE);
 * the flush rounds. Thread totals are exact integers, sampled or not.
 *
 * Process peak: each thread accumulates its live-byte delta and publishes it
 * to one atomic when it exceeds PEAK_SLACK, without a shared write per
 * allocation; the process peak is the larger of the peak of that sum and of
 * every thread's own exact peak (a thread's live bytes never exceed the
 * process's). Exact for a process with one thread, within
 * threads × PEAK_SLACK otherwise. */
#include "record.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOT_CHUNK 64
#define MAX_SLOT_CHUNKS (1u << 20)
#define MAX_THREADS 65536
#define PEAK_SLACK (64 << 10)

MP_TLS int mp_in_profiler;
static MP_TLS struct mp_thread *self;

_Atomic int mp_active = 1;
_Atomic long mp_threshold;

static _Atomic(struct mp_thread *) threads;
static struct mp_thread *_Atomic by_seq[MAX_THREADS];
static _Atomic uint32_t nthreads, nalive;
static struct mp_slot *_Atomic slot_chunks[MAX_SLOT_CHUNKS];
static _Atomic uint32_t slot_chunks_used;
static _Atomic int64_t process_live, process_peak_bytes;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* ---------------------------------------------------------------- slots */

struct mp_slot *slot_at(uint32_t idx)
{
    struct mp_slot *chunk = atomic_load_explicit(&slot_chunks[idx / SLOT_CHUNK], memory_order_acquire);
    return chunk ? &chunk[idx % SLOT_CHUNK] : NULL;
}

uint32_t slot_limit(void)
{
    return atomic_load_explicit(&slot_chunks_used, memory_order_acquire) * SLOT_CHUNK;
}

/* A new slot for (stack_id, t), from the thread's current chunk. 0 = none. */
static uint32_t slot_new(struct mp_thread *t, uint32_t stack_id)
{
    if (t->slot_next == t->slot_end) {
        uint32_t c = atomic_fetch_add_explicit(&slot_chunks_used, 1, RELAXED);
        if (c >= MAX_SLOT_CHUNKS) return 0;
        struct mp_slot *chunk = arena_alloc(SLOT_CHUNK * sizeof *chunk, stack_id != 0);
        if (!chunk) return 0;
        atomic_store_explicit(&slot_chunks[c], chunk, memory_order_release);
        t->slot_next = c * SLOT_CHUNK + (c == 0);   /* slot 0 means "none" */
        t->slot_end = (c + 1) * SLOT_CHUNK;
    }
    uint32_t idx = t->slot_next++;
    struct mp_slot *s = slot_at(idx);
    s->stack_id = stack_id;
    STORE(s->thread_seq, t->seq);
    return idx;
}

static int slot_map_grow(struct mp_thread *t)
{
    uint32_t cap = t->slot_keys ? (t->slot_mask + 1) * 2 : 256;
    uint32_t *keys = mp_map((size_t)cap * 8, 1);
    if (!keys) return -1;
    uint32_t *vals = keys + cap;
    for (uint32_t i = 0; t->slot_keys && i <= t->slot_mask; i++) {
        uint32_t k = t->slot_keys[i];
        if (!k) continue;
        uint32_t j = (uint32_t)fib_hash(k, 32) & (cap - 1);
        while (keys[j]) j = (j + 1) & (cap - 1);
        keys[j] = k;
        vals[j] = t->slot_vals[i];
    }
    if (t->slot_keys) mp_unmap(t->slot_keys, (size_t)(t->slot_mask + 1) * 8);
    t->slot_keys = keys;
    t->slot_vals = vals;
    t->slot_mask = cap - 1;
    return 0;
}

/* The thread's slot for a stack, created on first use. 0 = out of memory. */
static uint32_t thread_slot(struct mp_thread *t, uint32_t stack_id)
{
    if ((!t->slot_keys || (t->slot_count + 1) * 4 > (t->slot_mask + 1) * 3) && slot_map_grow(t))
        return 0;
    uint32_t i = (uint32_t)fib_hash(stack_id, 32) & t->slot_mask;
    for (; t->slot_keys[i]; i = (i + 1) & t->slot_mask)
        if (t->slot_keys[i] == stack_id) return t->slot_vals[i];
    uint32_t slot = slot_new(t, stack_id);
    if (slot) {
        t->slot_keys[i] = stack_id;
        t->slot_vals[i] = slot;
        t->slot_count++;
    }
    return slot;
}

/* ---------------------------------------------------------------- threads */

static void on_thread_exit(void *arg)
{
    thread_exiting(arg);
}

static void make_exit_key(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
}

static void publish_live(struct mp_thread *t, int64_t delta, int force);

void thread_exiting(struct mp_thread *t)
{
    int saved = guard_enter();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)t->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, t->name, sizeof t->name - 1);
        if (n > 0 && t->name[n - 1] == '\n') n--;
        t->name[n > 0 ? n : 0] = 0;
        close(fd);
    }
    publish_live(t, 0, 1);
    if (!atomic_exchange(&t->exited, 1)) atomic_fetch_sub(&nalive, 1);
    guard_leave(saved);
}

struct mp_thread *thread_self(void)
{
    if (likely(self != NULL)) return self;
    mp_ensure_init();
    uint32_t seq = atomic_fetch_add(&nthreads, 1) + 1;
    if (seq > 1) ptrmap_share();    /* before this thread's first map operation */
    if (seq >= MAX_THREADS) return NULL;
    struct mp_thread *t = arena_alloc(sizeof *t, 0);
    if (!t) return NULL;
    t->seq = seq;
    t->tid = (pid_t)syscall(SYS_gettid);
    t->active = -1;
    t->rng = 0x2545F4914F6CDD1Dull ^ ((uint64_t)seq << 17);
    if (mp_opt.unwind != UNWIND_LIBUNWIND) unwind_thread_init(t);
    t->nostack_slot = slot_new(t, 0);
    atomic_store(&by_seq[seq], t);
    t->next = atomic_load(&threads);
    while (!atomic_compare_exchange_weak(&threads, &t->next, t)) {}
    atomic_fetch_add(&nalive, 1);
    self = t;
    pthread_once(&exit_key_once, make_exit_key);
    pthread_setspecific(exit_key, t);
    return t;
}

struct mp_thread *thread_list(void) { return atomic_load(&threads); }
uint32_t thread_count(void) { return atomic_load(&nthreads); }

struct mp_thread *thread_by_seq(uint32_t seq)
{
    return seq < MAX_THREADS ? atomic_load_explicit(&by_seq[seq], memory_order_acquire) : NULL;
}

int64_t process_peak(void)
{
    int64_t peak = atomic_load(&process_peak_bytes);
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        int64_t p = (int64_t)LOAD(t->peak);
        if (p > peak) peak = p;
    }
    return peak;
}

/* ---------------------------------------------------------------- counting */

static void publish_live(struct mp_thread *t, int64_t delta, int force)
{
    t->pending_live += delta;
    if (!force && t->pending_live < PEAK_SLACK && t->pending_live > -PEAK_SLACK) return;
    int64_t live = atomic_fetch_add(&process_live, t->pending_live) + t->pending_live;
    t->pending_live = 0;
    int64_t peak = atomic_load_explicit(&process_peak_bytes, RELAXED);
    while (live > peak && !atomic_compare_exchange_weak(&process_peak_bytes, &peak, live)) {}
}

/* Weight of a block in WEIGHT_ONE units: 1 unless sampling, where a block of
 * `size` bytes is sampled with probability p = 1 - exp(-size / MP_SAMPLE)
 * and stands for 1/p blocks (an unbiased estimate). Deterministic in size,
 * so the free subtracts exactly what the allocation added. */
static inline uint64_t block_weight(const struct mp_slot *s, uint64_t size)
{
    if (likely(!mp_opt.sample) || !s->stack_id) return WEIGHT_ONE;
    double p = -expm1(-(double)size / (double)mp_opt.sample);
    return p > 0 ? (uint64_t)(WEIGHT_ONE / p + 0.5) : WEIGHT_ONE;
}

/* Sampling decision: a Poisson process over allocated bytes. The next sample
 * point is an exponential draw of mean MP_SAMPLE bytes away. */
static int sample_hit(struct mp_thread *t, size_t size)
{
    t->sample_countdown -= (int64_t)size;
    if (t->sample_countdown > 0) return 0;
    while (t->sample_countdown <= 0) {
        t->rng ^= t->rng << 13, t->rng ^= t->rng >> 7, t->rng ^= t->rng << 17;
        double u = ((t->rng >> 11) + 0.5) * (1.0 / 9007199254740992.0);
        t->sample_countdown += (int64_t)(-log(u) * (double)mp_opt.sample) + 1;
    }
    return 1;
}

static inline int wants_stack(struct mp_thread *t, size_t size)
{
    int on = t->active >= 0 ? t->active : atomic_load_explicit(&mp_active, RELAXED);
    if (!on) return 0;
    long th = atomic_load_explicit(&mp_threshold, RELAXED);
    if (th > 0 ? size < (size_t)th : th < 0 && size >= (size_t)-th) return 0;
    return likely(!mp_opt.sample) || sample_hit(t, size);
}

/* Unwind and find this thread's slot for the stack. 0 = count without stack. */
static uint32_t stack_slot(struct mp_thread *t)
{
    uintptr_t ret_addrs[MP_CAPTURE_ROOM + MP_MAX_TAGS];
    struct mp_hash h = MP_HASH_INIT;
    int truncated;
    unsigned gen = atomic_load_explicit(&mp_maps_gen, RELAXED);
    if (unlikely(t->maps_gen != gen)) {         /* an object was unloaded: both caches are stale */
        memset(t->cache, 0, sizeof t->cache);
        memset(t->rules, 0, sizeof t->rules);
        t->maps_gen = gen;
    }
    int n = unwind_capture(t, ret_addrs, mp_opt.depth, &truncated, &h);
    /* tags are the outermost frames: appended after the root, innermost tag first */
    for (int i = (t->ntags < MP_MAX_TAGS ? t->ntags : MP_MAX_TAGS) - 1; i >= 0; i--) {
        ret_addrs[n++] = t->tags[i];
        hash_add(&h, t->tags[i]);
    }
    unsigned flags = truncated ? STACK_TRUNCATED : 0;
    uint64_t hash = hash_final(h, n, flags);
    uint32_t shape = (uint32_t)n | flags << 16;
    struct mp_stack_cache *c = &t->cache[(hash >> 7) & (MP_CACHE_SIZE - 1)];
    if (c->hash == hash && c->leaf == ret_addrs[0] && c->shape == shape) return c->slot;
    uint32_t id = stacks_intern(ret_addrs, n, flags, hash);
    if (!id) return 0;
    uint32_t slot = thread_slot(t, id);
    if (slot) *c = (struct mp_stack_cache){ hash, ret_addrs[0], shape, slot };
    return slot;
}

static inline void count_alloc(struct mp_thread *t, uint32_t idx, uint64_t size)
{
    struct mp_slot *s = slot_at(idx);
    MP_ASSERT(s && s->thread_seq == t->seq);            /* a thread counts only in its own slots */
    uint64_t w = block_weight(s, size);
    STORE(s->ncalls, s->ncalls + w);
    STORE(s->memtot, s->memtot + size * w);
    uint64_t live = s->memtot - s->freed - atomic_load_explicit(&s->freed_remote, RELAXED);
    if (live > s->maxlive) STORE(s->maxlive, live);
    STORE(t->ncalls, t->ncalls + 1);
    STORE(t->alloc_bytes, t->alloc_bytes + size);
    uint64_t tlive = t->alloc_bytes - t->freed_local - atomic_load_explicit(&t->freed_remote, RELAXED);
    if (tlive > t->peak) STORE(t->peak, tlive);
    publish_live(t, (int64_t)size, 0);
}

static inline void count_free(struct mp_thread *t, uint32_t idx, uint64_t size)
{
    struct mp_slot *s = slot_at(idx);
    uint64_t w = block_weight(s, size);
    if (t && s->thread_seq == t->seq) {
        STORE(s->nfree, s->nfree + w);
        STORE(s->freed, s->freed + size * w);
        STORE(t->nfree_local, t->nfree_local + 1);
        STORE(t->freed_local, t->freed_local + size);
    } else {
        struct mp_thread *owner = thread_by_seq(s->thread_seq);
        atomic_fetch_add_explicit(&s->nfree_remote, w, RELAXED);
        atomic_fetch_add_explicit(&s->freed_remote, size * w, RELAXED);
        atomic_fetch_add_explicit(&owner->nfree_remote, 1, RELAXED);
        atomic_fetch_add_explicit(&owner->freed_remote, size, RELAXED);
    }
    if (t) publish_live(t, -(int64_t)size, 0);
}

/* runs inside malloc, the thread marked (interpose.c): see the file comment */
void record_alloc(void *p, size_t size)
{
    struct mp_thread *t = thread_self();
    if (likely(t != NULL)) {
        uint32_t slot = 0;
        if (wants_stack(t, size)) slot = stack_slot(t);
        if (!slot) slot = t->nostack_slot;
        count_alloc(t, slot, size);
        ptrmap_insert((uintptr_t)p, slot, size);
    }
}

/* runs inside free, before the real free (so the address cannot be reused
 * by another thread's malloc while it is still in the map) */
void record_free(void *p)
{
    struct mp_thread *t = thread_self();
    uint32_t slot;
    uint64_t size;
    if (ptrmap_remove((uintptr_t)p, &slot, &size)) {
        if (t) count_free(t, slot, size);
    } else if (t) {
        STORE(t->nfree_unknown, t->nfree_unknown + 1);
    }
}

int record_realloc_take(void *old, uint32_t *slot, uint64_t *size)
{
    thread_self();      /* a thread's first operation may be this one (ptrmap_share) */
    return ptrmap_remove((uintptr_t)old, slot, size);
}

/* After the real realloc: p == NULL && new_size != 0 means it failed and the
 * old block lives on; otherwise the old block is gone (freed or moved). */
void record_realloc_done(void *old, uint32_t slot, uint64_t size, void *p, size_t new_size)
{
    struct mp_thread *t = thread_self();
    if (!p && new_size != 0) {
        if (slot) ptrmap_insert((uintptr_t)old, slot, size);
        return;
    }
    if (t) {
        if (slot) count_free(t, slot, size);
        else STORE(t->nfree_unknown, t->nfree_unknown + 1);
    }
    if (p) record_alloc(p, new_size);
}

/* ---------------------------------------------------------------- signal handlers */

/* Per thread, a log of the allocations and frees of signal handlers that
 * interrupted the allocator or the profiler, written only by them and read
 * by the thread at its way out. It grows with mmap (a system call, safe in
 * a handler): a slow stretch inside the profiler (computing an unwind rule
 * the first time) can see hundreds of signals. */
enum { EV_ALLOC, EV_PAIR, EV_FREE };
struct handler_event { void *p; uint64_t size; int kind; };
static MP_TLS struct {
    struct handler_event *ev;
    uint32_t n, cap;
    uint64_t lost_ncalls, lost_memtot;  /* no room: counted; their frees will be unknown ones */
} hlog;

static struct handler_event *handler_append(void)
{
    if (hlog.n == hlog.cap) {
        uint32_t cap = hlog.cap ? hlog.cap * 2 : 256;
        struct handler_event *ev = mp_map((size_t)cap * sizeof *ev, 0);
        if (!ev) return NULL;
        if (hlog.ev) {
            memcpy(ev, hlog.ev, (size_t)hlog.n * sizeof *ev);
            mp_unmap(hlog.ev, (size_t)hlog.cap * sizeof *ev);
        }
        hlog.ev = ev;
        hlog.cap = cap;
    }
    mp_pending |= PENDING_HANDLER;
    return &hlog.ev[hlog.n++];
}

void handler_alloc(void *p, size_t size)
{
    struct handler_event *e = handler_append();
    if (e) *e = (struct handler_event){ p, size, EV_ALLOC };
    else hlog.lost_ncalls++, hlog.lost_memtot += size;
}

static struct handler_event *handler_block(const void *p)
{
    for (uint32_t i = hlog.n; i-- > 0;)
        if (hlog.ev[i].p == p && hlog.ev[i].kind == EV_ALLOC) return &hlog.ev[i];
    return NULL;
}

int handler_owns(const void *p)
{
    return handler_block(p) != NULL;
}

int handler_free(void *p)
{
    struct handler_event *e = handler_block(p);
    if (e) {
        e->kind = EV_PAIR;      /* allocated and freed by handlers: free it now */
        return 0;
    }
    /* a block the map may hold: freed for real once it is out of the map, so
     * the allocator cannot give its address out again before; with no room
     * left, kept (a leak is safe, a stale map entry is not) */
    e = handler_append();
    if (e) *e = (struct handler_event){ p, 0, EV_FREE };
    return 1;
}

/* At the thread's way out of the profiler, signals blocked: the events in
 * order, the blocks without a stack. */
void handler_drain(void)
{
    struct mp_thread *t = thread_self();
    for (uint32_t i = 0; i < hlog.n; i++) {
        struct handler_event *e = &hlog.ev[i];
        if (e->kind == EV_FREE) {
            record_free(e->p);
            free(e->p);                 /* marked inside: the real free */
        } else if (t) {
            count_alloc(t, t->nostack_slot, e->size);
            if (e->kind == EV_ALLOC) ptrmap_insert((uintptr_t)e->p, t->nostack_slot, e->size);
            else count_free(t, t->nostack_slot, e->size);
        }
    }
    hlog.n = 0;
    if (t && hlog.lost_ncalls) {
        struct mp_slot *ns = slot_at(t->nostack_slot);
        STORE(ns->ncalls, ns->ncalls + hlog.lost_ncalls * WEIGHT_ONE);
        STORE(ns->memtot, ns->memtot + hlog.lost_memtot * WEIGHT_ONE);
        STORE(t->ncalls, t->ncalls + hlog.lost_ncalls);
        STORE(t->alloc_bytes, t->alloc_bytes + hlog.lost_memtot);
        publish_live(t, (int64_t)hlog.lost_memtot, 0);
    }
    hlog.lost_ncalls = hlog.lost_memtot = 0;
}

/* ---------------------------------------------------------------- fork */

/* The child is a new process: it starts with empty counters and forgets the
 * parent's blocks (their frees count as "unknown"). Only the forking thread
 * survives; stacks stay interned. */
void counters_after_fork_child(void)
{
    uint32_t limit = slot_limit();
    for (uint32_t i = 1; i < limit; i++) {
        struct mp_slot *s = slot_at(i);
        if (!s || !s->thread_seq) continue;
        uint32_t stack_id = s->stack_id, seq = s->thread_seq;
        memset(s, 0, sizeof *s);
        s->stack_id = stack_id;
        s->thread_seq = seq;
    }
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        t->ncalls = t->nfree_local = t->alloc_bytes = t->freed_local = 0;
        t->nfree_unknown = t->peak = 0;
        t->pending_live = 0;
        atomic_store(&t->nfree_remote, 0);
        atomic_store(&t->freed_remote, 0);
        if (t != self) atomic_store(&t->exited, 1);
    }
    if (self) self->tid = (pid_t)syscall(SYS_gettid);
    atomic_store(&nalive, self ? 1 : 0);
    atomic_store(&process_live, 0);
    atomic_store(&process_peak_bytes, 0);
    ptrmap_reset();
}
