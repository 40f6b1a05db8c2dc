/* The peak (peak.h): captures and their epochs, the saves of the records
 * (copy on write, remote claims), the process's live bytes, and the peak's
 * reader's hold and checks. Invariants (MP_ASSERT): an epoch only moves
 * forward, by captures alone, fewer than 2^16 of them; a record is saved
 * once per epoch, by its owner, inside one of its operations; a *_remote
 * pair is claimed by one thread at a time. */
#include "hot.h"

#include <sched.h>
#include <string.h>

struct mp_peak_state mp_peak __attribute__((aligned(CACHE_LINE))) = { 0, 1 };
static struct { int64_t live; double time; } captured;   /* by the latest capture */
static atomic_flag capturing = ATOMIC_FLAG_INIT;
static _Atomic int64_t process_live, process_peak_bytes;

struct peak_info peak_info(void)
{
    uint32_t e = atomic_load_explicit(&mp_peak.epoch, memory_order_acquire);
    return (struct peak_info){ e, LOAD(captured.live), captured.time };
}

/* The process's live bytes are `live`, past the next capture point: a new
 * epoch, and the next point max(1/128, 4 KiB) further. The records save
 * themselves as they change next (peak_touch_thread, peak_touch_slot). */
static void peak_capture(int64_t live)
{
    if (atomic_flag_test_and_set_explicit(&capturing, memory_order_acquire)) return;
    uint32_t e = atomic_load_explicit(&mp_peak.epoch, RELAXED);
    if (live >= atomic_load_explicit(&mp_peak.next, RELAXED) && e < UINT16_MAX) {
        MP_ASSERT(live > LOAD(captured.live) || e == 0);
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
        if (t == mp_tls.self || atomic_load(&t->exited)) continue;
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

void peak_read(uint32_t e, void (*read)(uint32_t e, void *arg), void *arg)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        peak_read_begin(e);
        read(e, arg);
        if (peak_read_end(e)) return;
    }
}

/* A thread's own live bytes passed the next capture point: they are the
 * process's when it is the one thread (exact, without the publishing
 * slack); otherwise peak_publish decides. */
void peak_reached(int64_t live)
{
    if (thread_count() == 1) peak_capture(live);
}

void peak_publish(struct mp_thread *t)
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
 * epoch too (peak_recheck). */
void peak_save_thread(struct mp_thread *t, uint32_t epoch)
{
    MP_ASSERT(t == mp_tls.self && (t->busy & 1));          /* by its owner, in an operation */
    MP_ASSERT((int32_t)(epoch - t->epoch) > 0);         /* once per epoch, forward */
    t->busy_saved = t->busy;
    t->at_peak = t->c;
    atomic_store_explicit((_Atomic uint32_t *)&t->epoch, epoch, memory_order_release);
    atomic_thread_fence(memory_order_release);
}

void peak_save_slot(struct mp_slot *s, uint32_t idx, uint32_t epoch)
{
    /* once per epoch (a slot made in an operation after its thread's touch
     * may be newer than the operation's epoch: saved under it all the same) */
    MP_ASSERT(s == slot_at(idx) && s->epoch != (uint16_t)epoch && epoch <= UINT16_MAX);
    struct slot_raw *p = slot_peak(idx);
    const struct mp_slot_side *side = slot_side(idx);
    p->ncalls = s->ncalls, p->memtot = s->memtot, p->live_n = s->live_n, p->live_b = s->live_b;
    p->maxlive = s->maxlive, p->ntemp = side->ntemp, p->time = side->time;
    __atomic_store_n(&s->epoch, (uint16_t)epoch, __ATOMIC_RELEASE);
    atomic_thread_fence(memory_order_release);
}

/* Before another thread adds to a record's *_remote pair (n, b): the first
 * one in a new epoch claims the pair and saves it, the others wait for it
 * (adds during the copy would count before the peak). An operation under
 * an older epoch than the pair's adds without saving (it counts after the
 * peak's copy was taken, as it should: its thread was read at its own,
 * older, state). */
void peak_claim_remote(_Atomic uint32_t *remote_epoch, uint32_t epoch, _Atomic uint64_t *n, _Atomic uint64_t *b,
                       uint64_t *n_at_peak, uint64_t *b_at_peak)
{
    MP_ASSERT(!(epoch & PEAK_CLAIMED) && epoch <= peak_epoch());
    for (;;) {
        uint32_t seen = atomic_load_explicit(remote_epoch, memory_order_acquire);
        if (seen == epoch || (!(seen & PEAK_CLAIMED) && (int32_t)(seen - epoch) > 0)) return;
        if (seen & PEAK_CLAIMED) { __builtin_ia32_pause(); continue; }
        if (!atomic_compare_exchange_weak(remote_epoch, &seen, epoch | PEAK_CLAIMED)) continue;
        MP_ASSERT((int32_t)(epoch - seen) > 0);         /* a claim moves the epoch forward */
        STORE(*n_at_peak, atomic_load_explicit(n, RELAXED));
        STORE(*b_at_peak, atomic_load_explicit(b, RELAXED));
        MP_ASSERT(atomic_load_explicit(remote_epoch, RELAXED) == (epoch | PEAK_CLAIMED));  /* ours alone */
        atomic_store_explicit(remote_epoch, epoch, memory_order_release);
        return;
    }
}

void peak_remote_at(_Atomic uint32_t *remote_epoch, uint32_t e, const _Atomic uint64_t *n, const _Atomic uint64_t *b,
                    const uint64_t *n_at_peak, const uint64_t *b_at_peak, uint64_t *on, uint64_t *ob)
{
    if (e && n_at_peak && atomic_load_explicit(remote_epoch, memory_order_acquire) == e) {
        *on = LOAD(*n_at_peak), *ob = LOAD(*b_at_peak);
        return;
    }
    *on = atomic_load_explicit(n, RELAXED), *ob = atomic_load_explicit(b, RELAXED);
    if (e && n_at_peak && peak_recheck(remote_epoch, 0, e)) *on = LOAD(*n_at_peak), *ob = LOAD(*b_at_peak);
}

/* With every block tracked, a thread's live bytes are those of the blocks
 * it allocated, never more than the process's; otherwise they are its
 * allocations less its frees, which may exceed the process's (a producer
 * whose consumer frees): its peak says something then only when it is the
 * one thread. */
int64_t peak_process_max(void)
{
    int64_t peak = atomic_load(&process_peak_bytes);
    if (!mp_track_all && thread_count() > 1) return peak;
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        int64_t p = (int64_t)LOAD(t->c.peak);
        if (p > peak) peak = p;
    }
    return peak;
}

void peak_after_fork_child(void)
{
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        memset(&t->at_peak, 0, sizeof t->at_peak);
        t->epoch = t->busy = t->busy_saved = 0;
        atomic_store(&t->remote_epoch, 0);
        t->nfree_remote_at_peak = t->freed_remote_at_peak = 0;
    }
    atomic_store(&process_live, 0);
    atomic_store(&process_peak_bytes, 0);
    atomic_store(&mp_peak.epoch, 0);
    atomic_store(&mp_peak.next, 1);
    captured.live = 0, captured.time = 0;
    atomic_flag_clear(&capturing);
}
