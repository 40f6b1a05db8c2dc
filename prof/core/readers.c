/* The readers used by the flush and dump: a thread's counters and totals,
 * the process's, a slot's, now (e = 0) or as at the peak of epoch e while
 * the threads go on (peak.h says how a record is read as at the peak).
 * They never write what they read; the current values of a record are read
 * between two operations of its owner (READ_BETWEEN_OPS). */
#include "hot.h"

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
        if (!(o) || (o) == mp_tls.self || tries_ == 16 ||                               \
            (!(b_ & 1) && __atomic_load_n(&(o)->busy, __ATOMIC_RELAXED) == b_))     \
            break;                                                                  \
        __builtin_ia32_pause();                                                     \
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
    if (e && peak_recheck(&t->epoch, 0, e)) load_words((uint64_t *)out, (const uint64_t *)&t->at_peak, COUNT_WORDS);
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
    peak_remote_at((_Atomic uint32_t *)&t->remote_epoch, e, &t->nfree_remote, &t->freed_remote,
              &t->nfree_remote_at_peak, &t->freed_remote_at_peak, &nfree_remote, &freed_remote);
    uint64_t ncalls, memtot;
    thread_calls(&c, &ncalls, &memtot);
    *out = (struct mp_totals){
        .ncalls = ncalls,
        .memtot = memtot,
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
    int64_t peak = e ? peak_info().live : peak_process_max();
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
        if (p && peak_recheck(&s->epoch, 1, e))
            load_words((uint64_t *)out, (const uint64_t *)p, sizeof *out / sizeof(uint64_t));
    }
    peak_remote_at(&side->remote_epoch, e, &s->nfree_remote, &s->freed_remote, p ? &p->nfree_remote : NULL,
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
    if (mp_opt.sample && !mp_track_all) {      /* full capture gone sampled (MP_MAX_MEMORY) keeps its own */
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
