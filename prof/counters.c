/* Per-thread state and counters: the recording path behind interpose.c
 * (whose inline part, the cheap modes' fast path, is hot.h).
 *
 * Full capture, record_alloc: unwind → per-thread stack cache
 * (→ stacks_intern on a miss) → the thread's counter slot for that stack →
 * ptrmap. record_free: ptrmap → the slot the block was counted in →
 * decrement. The cheap modes (mp_track_all unset): thread counters with
 * the allocator's block size, and only a block that gets a slot and is
 * sampled goes through the map (record_attribute, record_sampled_free).
 * A slot belongs to the thread that allocated; another thread's free adds
 * to the slot's *_remote atomics, so the common path writes only lines its
 * own thread owns.
 *
 * Slot counters are fixed point with 8 fractional bits (WEIGHT_ONE), so a
 * sampled block can stand for a fractional number of blocks (MP_SAMPLE);
 * the flush rounds. Thread totals are exact integers, sampled or not.
 *
 * Process peak: each thread accumulates its live-byte delta and publishes it
 * to one atomic when it exceeds PEAK_SLACK, without a shared write per
 * allocation; the process peak is the larger of the peak of that sum and of
 * every thread's own exact peak (with every block tracked, a thread's live
 * bytes never exceed the process's). Exact for a process with one thread,
 * within threads × PEAK_SLACK otherwise. */
#include "hot.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLOT_CHUNK 64
#define MAX_SLOT_CHUNKS (1u << 20)
#define MAX_THREADS 65536
#define READ_SAVED UINT32_MAX    /* mp_thread.read_busy: read as saved in the peak's epoch */

MP_TLS int mp_in_profiler;
int mp_track_all = 1;
MP_TLS struct mp_thread *mp_self;

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

/* A chunk is SLOT_CHUNK slots, then their sides, then their values as at
 * the peak: every slot has its peak copy from its creation, so that a
 * slot made after the latest capture reads as zeros there (its epoch is
 * the current one and its copy was never written). */
#define SLOT_CHUNK_BYTES (SLOT_CHUNK * (sizeof(struct mp_slot) + sizeof(struct mp_slot_side) + sizeof(struct slot_raw)))

struct mp_slot_side *slot_side(uint32_t idx)
{
    struct mp_slot *chunk = atomic_load_explicit(&slot_chunks[idx / SLOT_CHUNK], memory_order_acquire);
    return chunk ? (struct mp_slot_side *)(chunk + SLOT_CHUNK) + idx % SLOT_CHUNK : NULL;
}

struct slot_raw *slot_peak(uint32_t idx)
{
    struct mp_slot *chunk = atomic_load_explicit(&slot_chunks[idx / SLOT_CHUNK], memory_order_acquire);
    if (!chunk) return NULL;
    struct mp_slot_side *sides = (struct mp_slot_side *)(chunk + SLOT_CHUNK);
    return (struct slot_raw *)(sides + SLOT_CHUNK) + idx % SLOT_CHUNK;
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
        struct mp_slot *chunk = arena_alloc(SLOT_CHUNK_BYTES, stack_id != 0);
        if (!chunk) return 0;
        atomic_store_explicit(&slot_chunks[c], chunk, memory_order_release);
        t->slot_next = c * SLOT_CHUNK + (c == 0);   /* slot 0 means "none" */
        t->slot_end = (c + 1) * SLOT_CHUNK;
    }
    uint32_t idx = t->slot_next++;
    struct mp_slot *s = slot_at(idx);
    s->stack_id = stack_id;
    s->epoch = (uint16_t)peak_epoch();  /* nothing to save: it was all zeros at the peak (slot_peak) */
    STORE(s->thread_seq, (uint16_t)t->seq);
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
    if (likely(mp_self != NULL)) return mp_self;
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
    t->epoch = peak_epoch();    /* nothing to save: it was all zeros at the peak */
    t->read_busy = READ_SAVED;  /* made after a peak's reader began: zeros there */
    t->nostack_slot = slot_new(t, 0);
    atomic_store(&by_seq[seq], t);
    t->next = atomic_load(&threads);
    while (!atomic_compare_exchange_weak(&threads, &t->next, t)) {}
    atomic_fetch_add(&nalive, 1);
    mp_self = t;
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

/* With every block tracked, a thread's live bytes are those of the blocks
 * it allocated, never more than the process's; otherwise they are its
 * allocations less its frees, which may exceed the process's (a producer
 * whose consumer frees): its peak says something then only when it is the
 * one thread. */
int64_t process_peak(void)
{
    int64_t peak = atomic_load(&process_peak_bytes);
    if (!mp_track_all && thread_count() > 1) return peak;
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        int64_t p = (int64_t)LOAD(t->c.peak);
        if (p > peak) peak = p;
    }
    return peak;
}

/* ---------------------------------------------------------------- the peak */

struct mp_peak_state mp_peak __attribute__((aligned(CACHE_LINE))) = { 0, 1 };
static struct { int64_t live; double time; } captured;   /* by the latest capture */
static atomic_flag capturing = ATOMIC_FLAG_INIT;
#define REMOTE_CLAIMED 0x80000000u

struct peak_info peak_info(void)
{
    uint32_t e = atomic_load_explicit(&mp_peak.epoch, memory_order_acquire);
    return (struct peak_info){ e, LOAD(captured.live), captured.time };
}

/* The process's live bytes are `live`, past the next capture point: a new
 * epoch, and the next point max(1/128, 4 KiB) further. The records save
 * themselves as they change next (thread_touch, slot_touch). */
static void peak_capture(int64_t live)
{
    if (atomic_flag_test_and_set_explicit(&capturing, memory_order_acquire)) return;
    uint32_t e = atomic_load_explicit(&mp_peak.epoch, RELAXED);
    if (live >= atomic_load_explicit(&mp_peak.next, RELAXED) && e < UINT16_MAX) {
        STORE(captured.live, live);
        captured.time = mp_now();
        atomic_store_explicit(&mp_peak.next, live + (live / 128 > 4096 ? live / 128 : 4096), RELAXED);
        atomic_store_explicit(&mp_peak.epoch, e + 1, memory_order_release);
    }
    atomic_flag_clear_explicit(&capturing, memory_order_release);
}

/* The peak snapshot's reader holds captures off while it reads (it takes
 * the capture's flag), so that every record it reads has the one epoch to
 * be read at; a capture point passed meanwhile is taken by the next
 * operation past it. A fatal signal's flush may have interrupted a capture
 * on its own thread: after a few milliseconds it reads without the hold
 * (0). */
static int peak_held;

struct peak_info peak_hold(void)
{
    int tries = 0;
    while (atomic_flag_test_and_set_explicit(&capturing, memory_order_acquire))
        if (++tries == 2000) return peak_info();
        else if (tries > 100) sched_yield();
        else __builtin_ia32_pause();
    peak_held = 1;
    return peak_info();
}

void peak_release(void)
{
    if (peak_held) atomic_flag_clear_explicit(&capturing, memory_order_release);
    peak_held = 0;
}

/* A capture by one thread may find another in the middle of an operation
 * (or about to change its records under the epoch it read before): that
 * operation counts before the peak, and the reader must see it whole. So
 * it waits for the threads whose busy is odd and who did not save in
 * epoch e, and notes each one's busy; after reading, a thread whose busy
 * moved meanwhile was read as one state only if its first operation since
 * saved in epoch e (then every change it made was saved first). The
 * reader's own thread is not in an operation. */
void peak_read_begin(uint32_t e)
{
    double give_up = mp_now() + 0.05;
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        t->read_busy = READ_SAVED;
        if (t == mp_self || atomic_load(&t->exited)) continue;
        for (int spins = 0;; spins++) {
            uint32_t b = __atomic_load_n(&t->busy, __ATOMIC_ACQUIRE);
            if (__atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) == e) break;
            if (!(b & 1) || (spins > 100 && mp_now() > give_up)) {     /* a thread stopped in one: read again */
                t->read_busy = b;
                break;
            }
            if (spins > 100) sched_yield();
            else __builtin_ia32_pause();
        }
    }
}

int peak_read_end(uint32_t e)
{
    atomic_thread_fence(memory_order_acquire);
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        uint32_t was = t->read_busy;
        if (was == READ_SAVED) continue;
        if (__atomic_load_n(&t->busy, __ATOMIC_RELAXED) == was) continue;
        if (__atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) == e && __atomic_load_n(&t->busy_saved, __ATOMIC_RELAXED) == (was | 1))
            continue;
        return 0;
    }
    return 1;
}

/* A thread's own live bytes passed the next capture point: they are the
 * process's when it is the one thread (exact, without the publishing
 * slack); otherwise publish_pending decides. */
void peak_reached(int64_t live)
{
    if (thread_count() == 1) peak_capture(live);
}

void publish_pending(struct mp_thread *t)
{
    int64_t live = atomic_fetch_add(&process_live, t->pending_live) + t->pending_live;
    t->pending_live = 0;
    int64_t peak = atomic_load_explicit(&process_peak_bytes, RELAXED);
    while (live > peak && !atomic_compare_exchange_weak(&process_peak_bytes, &peak, live)) {}
    if (live > peak && live >= atomic_load_explicit(&mp_peak.next, RELAXED)) peak_capture(live);
}

/* A save: the copy, then the record's epoch (release: a reader finding
 * the epoch finds the copy), then a release fence before the changes that
 * follow, so that a reader who sees one of them and then fences finds the
 * epoch too (record_check). */
void thread_save(struct mp_thread *t, uint32_t epoch)
{
    t->busy_saved = t->busy;
    t->at_peak = t->c;
    atomic_store_explicit((_Atomic uint32_t *)&t->epoch, epoch, memory_order_release);
    atomic_thread_fence(memory_order_release);
}

/* Before the owner t changes slot idx, in an operation that touched t
 * first (thread_touch): every record an operation changes is saved under
 * the epoch of its thread, read once, so that a capture made by another
 * thread in the middle of the operation finds it all before the peak or
 * all after (never its slot counted and its thread's totals not). */
static inline void slot_touch(const struct mp_thread *t, struct mp_slot *s, uint32_t idx)
{
    MP_ASSERT((int32_t)(peak_epoch() - t->epoch) >= 0);     /* t touched in this operation */
    if (unlikely(s->epoch != (uint16_t)t->epoch)) slot_save(s, idx, t->epoch);
}

void slot_save(struct mp_slot *s, uint32_t idx, uint32_t epoch)
{
    struct slot_raw *p = slot_peak(idx);
    const struct mp_slot_side *side = slot_side(idx);
    p->ncalls = s->ncalls, p->memtot = s->memtot, p->live_n = s->live_n, p->live_b = s->live_b;
    p->maxlive = s->maxlive, p->ntemp = side->ntemp, p->time = side->time;
    __atomic_store_n(&s->epoch, (uint16_t)epoch, __ATOMIC_RELEASE);
    atomic_thread_fence(memory_order_release);
}

/* Before another thread adds to a record's *_remote pair (n, b): the first
 * one in a new epoch saves the pair, the others wait for it (adds during
 * the copy would count before the peak). */
void remote_save(_Atomic uint32_t *remote_epoch, uint32_t epoch, _Atomic uint64_t *n, _Atomic uint64_t *b,
                 uint64_t *n_at_peak, uint64_t *b_at_peak)
{
    for (;;) {
        uint32_t seen = atomic_load_explicit(remote_epoch, memory_order_acquire);
        if (seen == epoch || (!(seen & REMOTE_CLAIMED) && (int32_t)(seen - epoch) > 0)) return;
        if (seen & REMOTE_CLAIMED) { __builtin_ia32_pause(); continue; }
        if (!atomic_compare_exchange_weak(remote_epoch, &seen, epoch | REMOTE_CLAIMED)) continue;
        STORE(*n_at_peak, atomic_load_explicit(n, RELAXED));
        STORE(*b_at_peak, atomic_load_explicit(b, RELAXED));
        atomic_store_explicit(remote_epoch, epoch, memory_order_release);
        return;
    }
}

/* Before a remote add, whoever saved: orders the add after the epoch this
 * thread found (a compiler barrier on x86). */
#define REMOTE_ADD_FENCE() atomic_thread_fence(memory_order_release)

/* Other threads' frees, under the freeing operation's epoch e (its
 * thread's, or the current one for a thread not recorded). */
static inline void thread_remote_touch(struct mp_thread *owner, uint32_t e)
{
    if (unlikely(atomic_load_explicit(&owner->remote_epoch, RELAXED) != e))
        remote_save(&owner->remote_epoch, e, &owner->nfree_remote, &owner->freed_remote,
                    &owner->nfree_remote_at_peak, &owner->freed_remote_at_peak);
    REMOTE_ADD_FENCE();
}

static inline void slot_remote_touch(struct mp_slot *s, struct mp_slot_side *side, uint32_t idx, uint32_t e)
{
    if (unlikely(atomic_load_explicit(&side->remote_epoch, RELAXED) != e)) {
        struct slot_raw *p = slot_peak(idx);
        remote_save(&side->remote_epoch, e, &s->nfree_remote, &s->freed_remote, &p->nfree_remote, &p->freed_remote);
    }
    REMOTE_ADD_FENCE();
}

/* ---------------------------------------------------------------- reading */

/* Reading as at the peak of epoch e, while the threads go on (an
 * interval, signal or API snapshot writes the peak too): a record whose
 * epoch is e was saved at its first change after the capture, and its
 * copy is read; otherwise its current values are, and then its epoch
 * again, after an acquire fence: if its owner saved it meanwhile (and may
 * have changed it since), the copy is what the capture saw. The peak's
 * reader holds captures off (peak_hold), so that e stays the latest and
 * no copy is saved again while it reads. */
static inline int record_check(const void *epoch, int bits16, uint32_t e)
{
    atomic_thread_fence(memory_order_acquire);
    return bits16 ? __atomic_load_n((const uint16_t *)epoch, __ATOMIC_RELAXED) == (uint16_t)e
                  : __atomic_load_n((const uint32_t *)epoch, __ATOMIC_RELAXED) == e;
}

static void load_words(uint64_t *out, const uint64_t *in, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = __atomic_load_n(&in[i], __ATOMIC_RELAXED);
}

/* A record's current values, read between two operations of its owner o:
 * o's busy even and the same around the read (a sequence lock; a few
 * tries, then as read). The reader's own records are still. */
#define READ_BETWEEN_OPS(o, read)                                                   \
    for (int tries_ = 0;; tries_++) {                                               \
        uint32_t b_ = (o) ? __atomic_load_n(&(o)->busy, __ATOMIC_ACQUIRE) : 0;     \
        read;                                                                       \
        atomic_thread_fence(memory_order_acquire);                                  \
        if (!(o) || (o) == mp_self || tries_ == 16 ||                               \
            (!(b_ & 1) && __atomic_load_n(&(o)->busy, __ATOMIC_RELAXED) == b_))     \
            break;                                                                  \
        __builtin_ia32_pause();                                                     \
    }

/* A *_remote pair as at epoch e (0: now): saved (n_at_peak not NULL), or
 * untouched since. */
static void remote_at(_Atomic uint32_t *remote_epoch, uint32_t e, const _Atomic uint64_t *n, const _Atomic uint64_t *b,
                      const uint64_t *n_at_peak, const uint64_t *b_at_peak, uint64_t *on, uint64_t *ob)
{
    if (e && n_at_peak && atomic_load_explicit(remote_epoch, memory_order_acquire) == e) {
        *on = LOAD(*n_at_peak), *ob = LOAD(*b_at_peak);
        return;
    }
    *on = atomic_load_explicit(n, RELAXED), *ob = atomic_load_explicit(b, RELAXED);
    if (e && n_at_peak && record_check(remote_epoch, 0, e)) *on = LOAD(*n_at_peak), *ob = LOAD(*b_at_peak);
}

/* Slot counters are fixed point (WEIGHT_ONE); rows hold whole numbers. */
static uint64_t whole(uint64_t fixed) { return (fixed + WEIGHT_ONE / 2) / WEIGHT_ONE; }

_Static_assert(sizeof(struct thread_counts) % sizeof(uint64_t) == 0, "thread_counts: 64-bit words");
#define COUNT_WORDS (sizeof(struct thread_counts) / sizeof(uint64_t))

void thread_counts(const struct mp_thread *t, uint32_t e, struct thread_counts *out)
{
    if (e && __atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE) == e) {
        load_words((uint64_t *)out, (const uint64_t *)&t->at_peak, COUNT_WORDS);
        return;
    }
    READ_BETWEEN_OPS(t, load_words((uint64_t *)out, (const uint64_t *)&t->c, COUNT_WORDS));
    if (e && record_check(&t->epoch, 0, e)) load_words((uint64_t *)out, (const uint64_t *)&t->at_peak, COUNT_WORDS);
}

void thread_totals(const struct mp_thread *t, uint32_t e, struct mp_totals *out)
{
    struct thread_counts c;
    thread_counts(t, e, &c);
    thread_totals_of(t, e, &c, out);
}

void thread_totals_of(const struct mp_thread *t, uint32_t e, const struct thread_counts *cp, struct mp_totals *out)
{
    const struct thread_counts c = *cp;
    uint64_t nfree_remote, freed_remote;
    remote_at((_Atomic uint32_t *)&t->remote_epoch, e, &t->nfree_remote, &t->freed_remote,
              &t->nfree_remote_at_peak, &t->freed_remote_at_peak, &nfree_remote, &freed_remote);
    *out = (struct mp_totals){
        .ncalls = c.ncalls,
        .memtot = c.alloc_bytes,
        .nfree = c.nfree_local + nfree_remote,
        .maxlive = c.peak > 0 ? (uint64_t)c.peak : 0,
        .nfree_unknown = c.nfree_unknown,
        .live = c.live - (int64_t)freed_remote,
    };
    if (mp_track_all && t->nostack_slot) {
        struct slot_counts ns;
        slot_read(t->nostack_slot, e, &ns);
        out->ncalls_nostack = ns.ncalls;
        out->memtot_nostack = ns.memtot;
    } else {    /* the cheap modes: what got no slot */
        out->ncalls_nostack = out->ncalls - c.attr_n;
        out->memtot_nostack = out->memtot - c.attr_b;
    }
}

/* At the peak, the process's maxlive is its live bytes then (at least
 * the captured ones). */
void process_add(struct mp_totals *out, const struct mp_totals *tt)
{
    out->ncalls += tt->ncalls, out->memtot += tt->memtot, out->nfree += tt->nfree;
    out->nfree_unknown += tt->nfree_unknown, out->live += tt->live;
    out->ncalls_nostack += tt->ncalls_nostack, out->memtot_nostack += tt->memtot_nostack;
}

void process_end(uint32_t e, struct mp_totals *out)
{
    if (out->live < 0) out->live = 0;
    int64_t peak = e ? peak_info().live : process_peak();
    out->maxlive = (uint64_t)(peak > out->live ? peak : out->live);
}

void process_totals(uint32_t e, struct mp_totals *out)
{
    *out = (struct mp_totals){ 0 };
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        struct mp_totals tt;
        thread_totals(t, e, &tt);
        process_add(out, &tt);
    }
    process_end(e, out);
}

void slot_raw(uint32_t idx, uint32_t e, struct slot_raw *out)
{
    struct mp_slot *s = slot_at(idx);
    struct mp_slot_side *side = slot_side(idx);
    struct slot_raw *p = e ? slot_peak(idx) : NULL;
    if (p && __atomic_load_n(&s->epoch, __ATOMIC_ACQUIRE) == (uint16_t)e) {
        load_words((uint64_t *)out, (const uint64_t *)p, sizeof *out / sizeof(uint64_t));
    } else {
        const struct mp_thread *o = thread_by_seq(LOAD(s->thread_seq));
        READ_BETWEEN_OPS(o, *out = ((struct slot_raw){ LOAD(s->ncalls), LOAD(s->memtot), LOAD(s->live_n), LOAD(s->live_b),
                                                       LOAD(s->maxlive), LOAD(side->ntemp), 0, 0, LOAD(side->time) }));
        if (p && record_check(&s->epoch, 1, e))
            load_words((uint64_t *)out, (const uint64_t *)p, sizeof *out / sizeof(uint64_t));
    }
    remote_at(&side->remote_epoch, e, &s->nfree_remote, &s->freed_remote, p ? &p->nfree_remote : NULL,
              p ? &p->freed_remote : NULL, &out->nfree_remote, &out->freed_remote);
}

/* nfree: the attributed blocks not live (record.h); an estimate can come
 * out below zero, read as 0. Sampled, maxlive is the stack's live bytes at
 * the peak: a sampled stack's own peak has no unbiased estimate (the
 * largest of its estimates over time is inflated by each sampled block's
 * weight); its live bytes at a given moment have one. */
void slot_read(uint32_t idx, uint32_t e, struct slot_counts *out)
{
    struct slot_raw v;
    slot_raw(idx, e, &v);
    int64_t nlive = (int64_t)(v.live_n - v.nfree_remote), live = (int64_t)(v.live_b - v.freed_remote);
    int64_t nfree = (int64_t)v.ncalls - nlive;
    uint64_t maxlive = v.maxlive;
    if (mp_opt.sample) {
        struct slot_raw p = { 0 };      /* zeros before any capture */
        uint32_t latest = e ? e : peak_info().epoch;
        if (latest == e) p = v;
        else slot_raw(idx, latest, &p);
        maxlive = (int64_t)(p.live_b - p.freed_remote) > 0 ? p.live_b - p.freed_remote : 0;
    }
    *out = (struct slot_counts){
        .ncalls = whole(v.ncalls),
        .memtot = whole(v.memtot),
        .nfree = nfree > 0 ? whole((uint64_t)nfree) : 0,
        .memlive = live > 0 ? whole((uint64_t)live) : 0,
        .maxlive = whole(maxlive),
        .ntemp = whole(v.ntemp),
        .time = v.time,
    };
}

/* ---------------------------------------------------------------- counting */

void counters_init(void)
{
    mp_track_all = !mp_opt.sample && mp_opt.stacks == STACKS_UNWIND && mp_opt.enabled;
    ptrmap_init(!mp_track_all);
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

/* The thread's slot for a captured stack (unwound frames, then its tags
 * as the outermost frames; with MP_STACKS=tags only the tags). 0 = count
 * without stack. */
static uint32_t stack_slot(struct mp_thread *t, int unwind)
{
    uintptr_t *ret_addrs = t->capture;
    struct mp_hash h = MP_HASH_INIT;
    int truncated = 0, n = 0;
    unsigned gen = atomic_load_explicit(&mp_maps_gen, RELAXED);
    if (unlikely(t->maps_gen != gen)) {         /* an object was unloaded: both caches are stale */
        memset(t->cache, 0, sizeof t->cache);
        memset(t->rules, 0, sizeof t->rules);
        t->walk_n = 0;
        t->maps_gen = gen;
    }
    if (unwind) n = unwind_capture(t, ret_addrs, mp_opt.depth, &truncated, &h);
    /* tags are the outermost frames: appended after the root, innermost tag first */
    for (int i = (t->ntags < MP_MAX_TAGS ? t->ntags : MP_MAX_TAGS) - 1; i >= 0; i--) {
        ret_addrs[n++] = t->tags[i];
        hash_add(&h, t->tags[i]);
    }
    if (!n) return 0;
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
    struct mp_thread *t = mp_self;
    if (!t) return;
    if (enter) time_enter(t);
    else time_leave(t);
}

/* An allocation attributed to slot idx: counted with weight cw, tracked
 * (in the map) with weight lw, or not tracked (lw 0); MP_TIME: the
 * thread's time since its previous one, credited. */
static inline void slot_alloc(struct mp_thread *t, uint32_t idx, uint64_t size, uint64_t cw, uint64_t lw)
{
    struct mp_slot *s = slot_at(idx);
    MP_ASSERT(s && s->thread_seq == t->seq);            /* a thread counts only in its own slots */
    slot_touch(t, s, idx);
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
    if (!mp_opt.sample && live > s->maxlive) STORE(s->maxlive, live);
}

/* A tracked block of slot idx freed by thread t (NULL: an unrecorded thread;
 * else touched first) at address p: a temporary one if it is the thread's
 * latest allocation and the thread freed nothing since (heaptrack's
 * definition: the allocation is directly followed by its free; every free
 * clears last_block). */
static inline void slot_free(struct mp_thread *t, uint32_t idx, uint64_t size, uintptr_t p)
{
    uint64_t w = block_weight(size);
    struct mp_slot *s = slot_at(idx);
    struct mp_slot_side *side = slot_side(idx);
    struct stack_hist_entry *e = t && s->stack_id ? other_class(t, side, idx, size) : NULL;
    if (e) {
        STORE(e->live_n, e->live_n - w);
        STORE(e->live_b, e->live_b - size * w);
    }
    if (t && s->thread_seq == t->seq) {
        slot_touch(t, s, idx);
        if (p == t->last_block) {       /* its own latest allocation: the owner's slot */
            STORE(side->ntemp, side->ntemp + w);
            t->last_block = 0;
        }
        STORE(s->live_n, s->live_n - w);
        STORE(s->live_b, s->live_b - size * w);
    } else {
        slot_remote_touch(s, side, idx, t ? t->epoch : peak_epoch());
        atomic_fetch_add_explicit(&s->nfree_remote, w, RELAXED);
        atomic_fetch_add_explicit(&s->freed_remote, size * w, RELAXED);
    }
}

/* With every block tracked: a free of slot idx's block counts for the
 * thread that allocated it. */
static void tracked_free(struct mp_thread *t, uint32_t idx, uint64_t size, uintptr_t p)
{
    thread_touch(t);
    slot_free(t, idx, size, p);
    hist_free(t, size);
    struct mp_slot *s = slot_at(idx);
    if (s->thread_seq == t->seq) {
        STORE(t->c.nfree_local, t->c.nfree_local + 1);
        STORE(t->c.live, t->c.live - (int64_t)size);
    } else {
        struct mp_thread *owner = thread_by_seq(s->thread_seq);
        thread_remote_touch(owner, t->epoch);
        atomic_fetch_add_explicit(&owner->nfree_remote, 1, RELAXED);
        atomic_fetch_add_explicit(&owner->freed_remote, size, RELAXED);
    }
    publish_live(t, -(int64_t)size, 0);
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
    thread_touch(t);
    STORE(t->c.attr_n, t->c.attr_n + 1);
    STORE(t->c.attr_b, t->c.attr_b + size);
    slot_alloc(t, slot, size, cw, lw);
    if (lw) ptrmap_insert((uintptr_t)p, slot, size);
}

/* attribute, its time the profiler's (MP_TIME) */
void record_attribute(struct mp_thread *t, void *p, size_t size)
{
    time_enter(t);
    attribute(t, p, size);
    time_leave(t);
}

static void unknown_free(struct mp_thread *t)
{
    thread_touch(t);
    STORE(t->c.nfree_unknown, t->c.nfree_unknown + 1);
}

/* runs inside malloc, the thread marked (interpose.c), when record_cheap_alloc
 * (hot.h) did not: with every block tracked, or the thread's first time */
void record_alloc(void *p, size_t size)
{
    struct mp_thread *t = thread_self();
    if (unlikely(!t) || record_cheap_alloc(p, size)) return;
    time_enter(t);
    uint32_t slot = stack_wanted(t, size) ? stack_slot(t, 1) : 0;
    if (!slot) slot = t->nostack_slot;
    thread_touch(t);
    slot_alloc(t, slot, size, WEIGHT_ONE, WEIGHT_ONE);
    thread_alloc(t, size, size);
    t->last_block = (uintptr_t)p;
    ptrmap_insert((uintptr_t)p, slot, size);
    time_leave(t);
}

/* runs inside free, before the real free (so the address cannot be reused
 * by another thread's malloc while it is still in the map), when
 * record_cheap_free (hot.h) did not */
void record_free(void *p)
{
    struct mp_thread *t = thread_self();
    uint32_t slot;
    uint64_t size;
    if (t) time_enter(t);
    if (!mp_track_all) {
        if (t) untracked_free(t, mp_next.malloc_usable_size(p));
        if (ptrmap_may_hold((uintptr_t)p)) record_sampled_free(t, p);
    } else if (ptrmap_remove((uintptr_t)p, &slot, &size)) {
        if (t) tracked_free(t, slot, size, (uintptr_t)p);
    } else if (t) {
        unknown_free(t);
    }
    if (t) {
        t->last_block = 0;      /* any free ends "temporary" (heaptrack's definition) */
        time_leave(t);
    }
}

/* The cheap modes: a free whose filter bucket says the map may hold it. */
void record_sampled_free(struct mp_thread *t, void *p)
{
    uint32_t slot;
    uint64_t size;
    if (ptrmap_remove((uintptr_t)p, &slot, &size)) slot_free(t, slot, size, (uintptr_t)p);
}

void record_realloc_take(void *old, struct mp_block *b)
{
    thread_self();      /* a thread's first operation may be this one (ptrmap_share) */
    b->usable = mp_track_all ? 0 : mp_next.malloc_usable_size(old);
    if (!mp_track_all && !ptrmap_may_hold((uintptr_t)old)) b->slot = 0;
    else if (!ptrmap_remove((uintptr_t)old, &b->slot, &b->size)) b->slot = 0;
}

/* After the real realloc: p == NULL && new_size != 0 means it failed and the
 * old block lives on; otherwise the old block is gone (freed or moved). */
void record_realloc_done(void *old, const struct mp_block *b, void *p, size_t new_size)
{
    struct mp_thread *t = thread_self();
    if (!p && new_size != 0) {
        if (b->slot) ptrmap_insert((uintptr_t)old, b->slot, b->size);
        return;
    }
    if (mp_track_all) {
        if (t && b->slot) tracked_free(t, b->slot, b->size, (uintptr_t)old);
        else if (t) unknown_free(t);
    } else {
        if (t) untracked_free(t, b->usable);
        if (b->slot) slot_free(t, b->slot, b->size, (uintptr_t)old);
    }
    if (t) t->last_block = 0;
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

/* A signal handler's block, counted without a stack. With every block
 * tracked, a live one joins the map; in the cheap modes it is an untracked
 * block like any other. `freed`: the handler freed it too (it is gone). */
static void handler_block_record(struct mp_thread *t, void *p, uint64_t size, int freed)
{
    if (mp_track_all) {
        thread_touch(t);
        slot_alloc(t, t->nostack_slot, size, WEIGHT_ONE, WEIGHT_ONE);
        thread_alloc(t, size, size);
        if (freed) tracked_free(t, t->nostack_slot, size, 0);
        else ptrmap_insert((uintptr_t)p, t->nostack_slot, size);
        return;
    }
    thread_alloc(t, size, freed ? size : mp_next.malloc_usable_size(p));
    if (freed) untracked_free(t, size);
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
            handler_block_record(t, e->p, e->size, e->kind == EV_PAIR);
        }
    }
    hlog.n = 0;
    if (t && hlog.lost_ncalls) {
        struct mp_slot *ns = slot_at(t->nostack_slot);
        if (mp_track_all) {
            thread_touch(t);
            slot_touch(t, ns, t->nostack_slot);
            STORE(ns->ncalls, ns->ncalls + hlog.lost_ncalls * WEIGHT_ONE);
            STORE(ns->memtot, ns->memtot + hlog.lost_memtot * WEIGHT_ONE);
        }
        thread_touch(t);
        STORE(t->c.ncalls, t->c.ncalls + hlog.lost_ncalls);
        STORE(t->c.alloc_bytes, t->c.alloc_bytes + hlog.lost_memtot);
        STORE(t->c.live, t->c.live + (int64_t)hlog.lost_memtot);
        publish_live(t, (int64_t)hlog.lost_memtot, 0);
    }
    hlog.lost_ncalls = hlog.lost_memtot = 0;
    if (t) op_end(t);
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
        memset(slot_side(i), 0, sizeof(struct mp_slot_side));
        memset(slot_peak(i), 0, sizeof(struct slot_raw));
        s->stack_id = stack_id;
        s->thread_seq = (uint16_t)seq;
    }
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        memset(&t->c, 0, sizeof t->c);
        memset(&t->at_peak, 0, sizeof t->at_peak);
        t->epoch = t->busy = t->busy_saved = 0;
        t->pending_live = 0;
        atomic_store(&t->remote_epoch, 0);
        t->nfree_remote_at_peak = t->freed_remote_at_peak = 0;
        atomic_store(&t->nfree_remote, 0);
        atomic_store(&t->freed_remote, 0);
        if (t != mp_self) atomic_store(&t->exited, 1);
    }
    if (mp_self) mp_self->tid = (pid_t)syscall(SYS_gettid);
    atomic_store(&nalive, mp_self ? 1 : 0);
    atomic_store(&process_live, 0);
    atomic_store(&process_peak_bytes, 0);
    atomic_store(&mp_peak.epoch, 0);
    atomic_store(&mp_peak.next, 1);
    captured.live = 0, captured.time = 0;
    atomic_flag_clear(&capturing);
    ptrmap_reset();
    stack_hist_after_fork_child();
}
