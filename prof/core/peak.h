/* The peak: the process's state at the moment its live bytes were highest
 * (heaptrack's "peak memory consumers"), all of its logic here and in
 * peak.c, its readers' part in readers.c.
 *
 * Live bytes. Each thread accumulates its live-byte delta and publishes it
 * to one atomic when it exceeds PEAK_SLACK (peak_publish), without a shared
 * write per allocation; the process's peak is the larger of the peak of
 * that sum and of every thread's own exact peak (with every block tracked,
 * a thread's live bytes never exceed the process's). Exact for a process
 * with one thread, within threads × PEAK_SLACK otherwise, and within
 * max(1/128, 4 KiB) of the peak: each time the live bytes pass the next
 * capture point, a capture starts a new epoch, a bounded number of them
 * (fewer than 4,300 up to 2^63 bytes), so that epochs fit 16 bits.
 *
 * Copy on write, at no cost to the moment of the capture: a record written
 * by one thread (a thread's counters, a counter slot) keeps the epoch of
 * its latest save, and its first write in a newer epoch first saves it as
 * it was. The values at the latest capture are then the saved ones when
 * the record's epoch is the current one, else its current ones (untouched
 * since); a record made after the capture has a saved copy of zeros. An
 * operation reads the epoch once, touching its thread first
 * (peak_touch_thread), and saves every record it changes under that epoch:
 * a capture by another thread in its middle finds it whole on one side.
 *
 * Remote claims: other threads' frees (the *_remote atomics) are saved the
 * same way, under an epoch of their own: the first of them in a new epoch
 * claims the pair (its epoch | PEAK_CLAIMED), copies it and publishes the
 * epoch; the others wait for the claim to end. An epoch only moves forward. */
#ifndef MP_PEAK_H
#define MP_PEAK_H

#include "record.h"

#define PEAK_SLACK (64 << 10)
#define PEAK_CLAIMED 0x80000000u        /* a *_remote epoch being saved (peak_claim_remote) */
#define READ_SAVED UINT32_MAX           /* mp_thread.read_busy: read as saved in the peak's epoch */

/* The current epoch and the live bytes at which the next capture starts,
 * read by every operation, written by captures. */
extern struct mp_peak_state { _Atomic uint32_t epoch; _Atomic int64_t next; } mp_peak;
static inline uint32_t peak_epoch(void) { return atomic_load_explicit(&mp_peak.epoch, RELAXED); }

/* ------------------------------------------------------------ the writers' side */
void peak_save_thread(struct mp_thread *t, uint32_t epoch);
void peak_save_slot(struct mp_slot *s, uint32_t idx, uint32_t epoch);
void peak_claim_remote(_Atomic uint32_t *remote_epoch, uint32_t epoch, _Atomic uint64_t *n, _Atomic uint64_t *b,
                       uint64_t *n_at_peak, uint64_t *b_at_peak);
void peak_reached(int64_t live);
void peak_publish(struct mp_thread *t);

/* A record made now was all zeros at the peak: nothing to save. */
static inline void peak_thread_born(struct mp_thread *t)
{
    t->epoch = peak_epoch();
    t->read_busy = READ_SAVED;  /* made after a peak's reader began: zeros there */
}
static inline void peak_slot_born(struct mp_slot *s) { s->epoch = (uint16_t)peak_epoch(); }

/* Before the thread changes its records, at the start of an operation:
 * the epoch read once for the whole operation (later touches in it are
 * no-ops), the thread saved first if a capture came since its latest
 * save, and busy odd until peak_op_end. */
static inline void peak_touch_thread(struct mp_thread *t)
{
    if (t->busy & 1) return;
    STORE(t->busy, t->busy + 1);
    atomic_thread_fence(memory_order_release);  /* before its changes (a compiler barrier on x86) */
    uint32_t e = peak_epoch();
    if (unlikely(t->epoch != e)) peak_save_thread(t, e);
}
/* The end of an operation that touched t: its changes before the even busy. */
static inline void peak_op_end(struct mp_thread *t)
{
    uint32_t b = t->busy;
    if (b & 1) __atomic_store_n(&t->busy, b + 1, __ATOMIC_RELEASE);   /* after its changes */
}

/* The same, where the operation is known to have touched t. */
static inline void peak_op_end_touched(struct mp_thread *t)
{
    MP_ASSERT(t->busy & 1);
    __atomic_store_n(&t->busy, t->busy + 1, __ATOMIC_RELEASE);
}

/* Before the owner t changes slot idx, in an operation that touched t
 * first: every record an operation changes is saved under the epoch of its
 * thread, read once, so that a capture made by another thread in the
 * middle of the operation finds it all before the peak or all after
 * (never its slot counted and its thread's totals not). */
static inline void peak_touch_slot(const struct mp_thread *t, struct mp_slot *s, uint32_t idx)
{
    MP_ASSERT(s->thread_seq == t->seq);                     /* only the owner writes a slot */
    MP_ASSERT(t->busy & 1);                                 /* inside an operation that touched t */
    MP_ASSERT((int32_t)(peak_epoch() - t->epoch) >= 0);
    if (unlikely(s->epoch != (uint16_t)t->epoch)) peak_save_slot(s, idx, t->epoch);
}

/* Before another thread's free adds to a *_remote pair, under the freeing
 * operation's epoch e (its thread's, or the current one for a thread not
 * recorded); then a release fence orders the add after the epoch this
 * thread found (a compiler barrier on x86). */
static inline void peak_touch_remote_thread(struct mp_thread *owner, uint32_t e)
{
    if (unlikely(atomic_load_explicit(&owner->remote_epoch, RELAXED) != e))
        peak_claim_remote(&owner->remote_epoch, e, &owner->nfree_remote, &owner->freed_remote,
                          &owner->nfree_remote_at_peak, &owner->freed_remote_at_peak);
    atomic_thread_fence(memory_order_release);
}
static inline void peak_touch_remote_slot(struct mp_slot *s, struct mp_slot_side *side, uint32_t idx, uint32_t e)
{
    if (unlikely(atomic_load_explicit(&side->remote_epoch, RELAXED) != e)) {
        struct slot_raw *p = slot_peak(idx);
        peak_claim_remote(&side->remote_epoch, e, &s->nfree_remote, &s->freed_remote, &p->nfree_remote,
                          &p->freed_remote);
    }
    atomic_thread_fence(memory_order_release);
}

/* The thread's own live bytes are `now` (the thread touched): its peak,
 * and a capture when they pass the next capture point. */
static inline void peak_thread_live(struct mp_thread *t, int64_t now)
{
    if (now > t->c.peak) {
        STORE(t->c.peak, now);
        if (unlikely(now >= atomic_load_explicit(&mp_peak.next, RELAXED))) peak_reached(now);
    }
}
/* A change of the thread's live bytes, published past the slack (force:
 * now, as the thread exits). */
static inline void peak_publish_live(struct mp_thread *t, int64_t delta, int force)
{
    t->pending_live += delta;
    if (unlikely(force || t->pending_live >= PEAK_SLACK || t->pending_live <= -PEAK_SLACK)) peak_publish(t);
}

/* ------------------------------------------------------------ the readers' side */
struct peak_info { uint32_t epoch; int64_t live; double time; };   /* epoch 0: no capture yet */
struct peak_info peak_info(void);
/* The peak's reader: captures held off between the two (the latest
 * capture stays the one read). */
struct peak_info peak_hold(void);
void peak_release(void);
/* Reads the peak of epoch e (held) as one state: read(e, arg) reads the
 * records (readers.c), called again while one of them changed meanwhile
 * under an older epoch (4 times at most). peak_read_begin and _end are
 * its steps around each call (the unit tests check their outcome). */
void peak_read(uint32_t e, void (*read)(uint32_t e, void *arg), void *arg);
void peak_read_begin(uint32_t e);       /* waits for the operations a capture found in their middle */
int peak_read_end(uint32_t e);          /* 1: every thread's records read as one state */
/* The process's highest live bytes so far (now, not as at a capture). */
int64_t peak_process_max(void);

/* Reading as at the peak of epoch e while the threads go on: a record
 * whose epoch is e was saved at its first change after the capture, and
 * its copy is read; otherwise its current values are, and then its epoch
 * again, after an acquire fence (peak_recheck): if its owner saved it
 * meanwhile (and may have changed it since), the copy is what the capture
 * saw. The save's release fence pairs with it. */
static inline int peak_recheck(const void *epoch, int bits16, uint32_t e)
{
    atomic_thread_fence(memory_order_acquire);
    return bits16 ? __atomic_load_n((const uint16_t *)epoch, __ATOMIC_RELAXED) == (uint16_t)e
                  : __atomic_load_n((const uint32_t *)epoch, __ATOMIC_RELAXED) == e;
}
/* A *_remote pair as at epoch e (0: now): saved (n_at_peak not NULL), or
 * untouched since. */
void peak_remote_at(_Atomic uint32_t *remote_epoch, uint32_t e, const _Atomic uint64_t *n, const _Atomic uint64_t *b,
                    const uint64_t *n_at_peak, const uint64_t *b_at_peak, uint64_t *on, uint64_t *ob);

void peak_after_fork_child(void);       /* no capture yet, every thread's peak state zeros */

#endif
