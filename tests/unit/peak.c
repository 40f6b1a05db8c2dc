/* The peak (prof/core/peak.c, peak.h) with its readers (prof/core/readers.c), on the
 * real thread registry and slots (threads.c, slots.c):
 *  - copy on write on one thread: captures at exact points, a thread's
 *    counters and a slot read as at each epoch, saved by their first change
 *    after it, untouched ones read as they are, a slot made after a capture
 *    zeros there;
 *  - remote claims: threads freeing another's blocks at once in a new
 *    epoch, one of them saves the *_remote pair, exactly what came before;
 *  - captures and reads at once: writer threads allocate (their slots and
 *    their counters in one operation, captures as the process's live bytes
 *    pass each point) while a reader holds the peak and reads every thread
 *    twice: each thread whole (slot and counters agree) and the same values
 *    both times, although the threads went on (READS held reads at least).
 *  - what the flush compares between snapshots (slot_read's whole numbers).
 * Operations are made as record.c makes them: peak_touch_thread, the slot's
 * touch and its counters, record_thread_alloc (hot.h), peak_op_end. */
#include "unit.h"

#include <stdio.h>
#include "hot.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ what the files under test use */
struct mp_next mp_next;
int mp_track_all = 1;
_Atomic int mp_active = 1;
_Atomic long mp_threshold;
void (*mp_run_pending)(void);
MP_TLS struct mp_tls mp_tls;     /* base/proc.c's */
_Atomic int mp_initialized = 1;
void unwind_thread_init(struct mp_walker *w) { (void)w; }
void ptrmap_share(void) {}
void time_in_profiler(int enter) { (void)enter; }
void record_memory_after_fork(int fork_child) { (void)fork_child; }
_Atomic unsigned mp_maps_gen;
double mp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One allocation of `size` bytes counted in slot idx, as record.c does. */
static void op_alloc(struct mp_thread *t, uint32_t idx, uint64_t size)
{
    struct mp_slot *s = slot_at(idx);
    peak_touch_thread(t);
    peak_touch_slot(t, s, idx);
    STORE(s->ncalls, s->ncalls + WEIGHT_ONE);
    STORE(s->memtot, s->memtot + size * WEIGHT_ONE);
    STORE(s->live_n, s->live_n + WEIGHT_ONE);
    STORE(s->live_b, s->live_b + size * WEIGHT_ONE);
    record_thread_alloc(t, size, size, 1);
    peak_op_end(t);
}

/* A free by thread t (not the owner) of a block of slot idx, under t's
 * epoch, as record.c's remote side does. */
static void op_remote_free(struct mp_thread *t, uint32_t idx, uint64_t size)
{
    struct mp_slot *s = slot_at(idx);
    struct mp_thread *owner = thread_by_seq(s->thread_seq);
    peak_touch_thread(t);
    peak_touch_remote_slot(s, slot_side(idx), idx, t->epoch);
    atomic_fetch_add_explicit(&s->nfree_remote, WEIGHT_ONE, RELAXED);
    atomic_fetch_add_explicit(&s->freed_remote, size * WEIGHT_ONE, RELAXED);
    peak_touch_remote_thread(owner, t->epoch);
    atomic_fetch_add_explicit(&owner->nfree_remote, 1, RELAXED);
    atomic_fetch_add_explicit(&owner->freed_remote, size, RELAXED);
    peak_op_end(t);
}

/* its calls: the histogram's (thread_calls) */
static uint64_t calls_of(struct thread_counts c)
{
    uint64_t n, b;
    thread_calls(&c, &n, &b);
    return n;
}

static struct thread_counts counts(struct mp_thread *t, uint32_t e)
{
    struct thread_counts c;
    thread_counts(t, e, &c);
    return c;
}

static struct slot_raw raw(uint32_t idx, uint32_t e)
{
    struct slot_raw v;
    slot_raw(idx, e, &v);
    return v;
}

/* ------------------------------------------------------------ the expensive level */

/* slots_validate on t's map with 300 more stacks (grown twice), then each
 * planted break found: a slot of another stack, a count, a hole. */
static void validate_slots(struct mp_thread *t)
{
    char why[256];
    for (uint32_t k = 1000; k < 1300; k++) CHECK(slot_of_stack(t, k) != 0);
    CHECK_EQ(slots_validate(t, why, sizeof why), 0);
    uint32_t i = 0;
    while (t->slot_keys[i] != 1000) i++;
    uint32_t v = t->slot_vals[i];
    t->slot_vals[i] = slot_of_stack(t, 1001);
    CHECK_EQ(slots_validate(t, why, sizeof why), -1);
    printf("  planted another stack's slot: %s\n", why);
    t->slot_vals[i] = v;
    t->slot_count++;
    CHECK_EQ(slots_validate(t, why, sizeof why), -1);
    printf("  planted a count: %s\n", why);
    t->slot_count--;
    /* a stack homed where stack 1000 is (Fibonacci hashing spreads 1000..1299
     * without one collision): it goes past its home, whose key is then cleared */
    uint32_t h = (uint32_t)fib_hash(1000, 32) & t->slot_mask, k = 100000;
    while (((uint32_t)fib_hash(k, 32) & t->slot_mask) != h) k++;
    CHECK(slot_of_stack(t, k) != 0);
    CHECK_EQ(slots_validate(t, why, sizeof why), 0);
    uint32_t hk = t->slot_keys[h];
    CHECK_EQ(hk, 1000);
    t->slot_keys[h] = 0;
    CHECK_EQ(slots_validate(t, why, sizeof why), -1);
    printf("  planted a hole: %s\n", why);
    t->slot_keys[h] = hk;
    CHECK_EQ(slots_validate(t, why, sizeof why), 0);
    OK("slots_validate: the thread's map whole with %u stacks; each planted break found", t->slot_count);
}

/* ------------------------------------------------------------ one thread */

static void copy_on_write(void)
{
    struct mp_thread *t = thread_self();
    CHECK(t && t->seq == 1 && thread_count() == 1);
    uint32_t a = slot_of_stack(t, 7);
    CHECK(a != 0 && a != t->nostack_slot && slot_of_stack(t, 7) == a);
    validate_slots(t);

    op_alloc(t, a, 10000);      /* past the first point (1): epoch 1 at 10000, next 14096 */
    struct peak_info p = peak_info();
    CHECK_EQ(p.epoch, 1);
    CHECK_EQ(p.live, 10000);
    CHECK_EQ(atomic_load(&mp_peak.next), 14096);
    /* the operation that made the capture counts before it, unsaved */
    CHECK_EQ(t->epoch, 0);
    CHECK_EQ(counts(t, 1).live, 10000);
    CHECK_EQ(raw(a, 1).ncalls, WEIGHT_ONE);
    OK("a capture at the first point; its own operation counts before it");

    op_alloc(t, a, 3000);       /* 13000: below the next point; saves the thread and the slot in epoch 1 */
    CHECK_EQ(t->epoch, 1);
    CHECK_EQ(slot_at(a)->epoch, 1);
    CHECK_EQ(counts(t, 1).live, 10000);
    CHECK_EQ(calls_of(counts(t, 1)), 1);
    CHECK_EQ(counts(t, 0).live, 13000);
    CHECK_EQ(calls_of(counts(t, 0)), 2);
    CHECK_EQ(raw(a, 1).memtot, 10000 * WEIGHT_ONE);
    CHECK_EQ(raw(a, 0).memtot, 13000 * WEIGHT_ONE);
    OK("the first change after a capture saves: the copy as at the peak, the record as now");

    uint32_t b = slot_of_stack(t, 8);   /* made after the capture: zeros at it */
    op_alloc(t, b, 2000);       /* 15000: epoch 2, next 19096 */
    p = peak_info();
    CHECK_EQ(p.epoch, 2);
    CHECK_EQ(p.live, 15000);
    CHECK_EQ(raw(b, 1).ncalls, 0);
    CHECK_EQ(raw(b, 2).ncalls, WEIGHT_ONE);
    CHECK_EQ(counts(t, 2).live, 15000);
    CHECK_EQ(raw(a, 2).memtot, 13000 * WEIGHT_ONE);     /* untouched since: read as it is */
    op_alloc(t, a, 100);
    CHECK_EQ(raw(a, 2).memtot, 13000 * WEIGHT_ONE);
    CHECK_EQ(raw(a, 0).memtot, 13100 * WEIGHT_ONE);
    CHECK_EQ(calls_of(counts(t, 2)), 3);
    CHECK_EQ(calls_of(counts(t, 0)), 4);
    CHECK_EQ(p.epoch, peak_info().epoch);
    OK("a slot made after a capture is zeros there; an untouched one reads as it is");

    struct mp_totals tt;
    thread_totals(t, 2, &tt);
    CHECK_EQ(tt.ncalls, 3);
    CHECK_EQ(tt.memtot, 15000);
    CHECK_EQ(tt.live, 15000);
    CHECK_EQ(tt.maxlive, 15000);
    process_totals(2, &tt);
    CHECK_EQ(tt.maxlive, 15000);
    process_totals(0, &tt);
    CHECK_EQ(tt.memtot, 15100);
    CHECK_EQ(tt.maxlive, 15100);
    OK("totals as at the peak and now");
}

/* ------------------------------------------------------------ remote claims */

#define FREERS 4
#define FREES 5000
static uint32_t shared_slot;
static pthread_barrier_t freers_go, freers_phase, freers_next;

static void *freer(void *arg)
{
    (void)arg;
    struct mp_thread *t = thread_self();
    CHECK(t != NULL);
    pthread_barrier_wait(&freers_go);
    for (int i = 0; i < FREES; i++) op_remote_free(t, shared_slot, 16);
    pthread_barrier_wait(&freers_phase);        /* the owner makes a capture */
    pthread_barrier_wait(&freers_next);
    for (int i = 0; i < FREES; i++) op_remote_free(t, shared_slot, 16);
    return NULL;
}

static void remote_claims(void)
{
    struct mp_thread *owner = thread_self();
    shared_slot = slot_of_stack(owner, 9);
    pthread_t th[FREERS];
    pthread_barrier_init(&freers_go, NULL, FREERS + 1);
    pthread_barrier_init(&freers_phase, NULL, FREERS + 1);
    pthread_barrier_init(&freers_next, NULL, FREERS + 1);
    for (int i = 0; i < FREERS; i++) CHECK(pthread_create(&th[i], NULL, freer, NULL) == 0);
    pthread_barrier_wait(&freers_go);
    pthread_barrier_wait(&freers_phase);
    uint32_t e0 = peak_info().epoch;
    /* several threads now: the owner's live bytes reach the process's
     * through publishing; one big block passes the next point */
    op_alloc(owner, owner->nostack_slot, 200000);
    CHECK_EQ(peak_info().epoch, e0 + 1);
    uint32_t e = e0 + 1;
    pthread_barrier_wait(&freers_next);
    for (int i = 0; i < FREERS; i++) pthread_join(th[i], NULL);

    struct slot_raw at = raw(shared_slot, e), now = raw(shared_slot, 0);
    CHECK_EQ(atomic_load(&slot_side(shared_slot)->remote_epoch), e);
    CHECK_EQ(at.nfree_remote, (uint64_t)FREERS * FREES * WEIGHT_ONE);
    CHECK_EQ(at.freed_remote, (uint64_t)FREERS * FREES * 16 * WEIGHT_ONE);
    CHECK_EQ(now.nfree_remote, (uint64_t)2 * FREERS * FREES * WEIGHT_ONE);
    CHECK_EQ(now.freed_remote, (uint64_t)2 * FREERS * FREES * 16 * WEIGHT_ONE);
    struct mp_totals tt;
    thread_totals(owner, e, &tt);
    CHECK_EQ(tt.nfree, (uint64_t)FREERS * FREES);
    thread_totals(owner, 0, &tt);
    CHECK_EQ(tt.nfree, (uint64_t)2 * FREERS * FREES);
    OK("%d threads claim a new epoch at once: the pair saved once, exactly the %d frees before",
       FREERS, FREERS * FREES);
}

/* ------------------------------------------------------------ captures and reads at once */

#define WRITERS 3
#define WRITER_OPS 100000       /* at least; then until the reader read READS times (or 10 s) */
#define READS 20
#define BLOCK 4096
static _Atomic int writers_done, writers_stop;    /* stop: the reader read enough */
static struct mp_thread *writer_t[WRITERS];
static uint32_t writer_slot[WRITERS];
static pthread_barrier_t writers_ready;

static void *writer(void *arg)
{
    int w = (int)(intptr_t)arg;
    struct mp_thread *t = thread_self();
    writer_t[w] = t;
    writer_slot[w] = slot_of_stack(t, 100 + (uint32_t)w);
    pthread_barrier_wait(&writers_ready);
    for (int i = 0; i < WRITER_OPS || !atomic_load(&writers_stop); i++) op_alloc(t, writer_slot[w], BLOCK);
    atomic_fetch_add(&writers_done, 1);
    return NULL;
}

struct seen { struct thread_counts c[WRITERS]; struct slot_raw s[WRITERS]; };

static int read_peak(uint32_t e, struct seen *out)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        peak_read_begin(e);
        for (int w = 0; w < WRITERS; w++) {
            thread_counts(writer_t[w], e, &out->c[w]);
            slot_raw(writer_slot[w], e, &out->s[w]);
        }
        if (!peak_read_end(e)) continue;
        /* the reader waits 50 ms at most for a thread in the middle of an
         * operation (a thread stopped by a fatal signal's flush), then reads
         * it as it is: exact only when no writer stalled that long (a busy
         * machine); such a read is not checked */
        int stalled = 0;
        for (int w = 0; w < WRITERS; w++)
            stalled |= writer_t[w]->read_busy != READ_SAVED && (writer_t[w]->read_busy & 1);
        return !stalled;
    }
    return 0;
}

static void concurrent(void)
{
    pthread_t th[WRITERS];
    pthread_barrier_init(&writers_ready, NULL, WRITERS + 1);
    for (int w = 0; w < WRITERS; w++) CHECK(pthread_create(&th[w], NULL, writer, (void *)(intptr_t)w) == 0);
    pthread_barrier_wait(&writers_ready);
    uint32_t first = peak_info().epoch;
    int reads = 0, changed = 0;
    static struct seen a, b;
    uint32_t last = first;
    double give_up = mp_now() + 10;
    while (atomic_load(&writers_done) < WRITERS) {
        if (reads >= READS || mp_now() > give_up) atomic_store(&writers_stop, 1);
        if (peak_info().epoch == last) {        /* captures are held off while the reader holds */
            sched_yield();
            continue;
        }
        struct peak_info p = peak_hold();
        last = p.epoch;
        if (!read_peak(p.epoch, &a)) {
            peak_release();
            continue;
        }
        for (int w = 0; w < WRITERS; w++) {     /* each thread whole: its slot agrees with its counters */
            uint64_t ncalls, bytes;
            thread_calls(&a.c[w], &ncalls, &bytes);
            CHECK_EQ(bytes, ncalls * BLOCK);
            CHECK_EQ(a.s[w].ncalls, ncalls * WEIGHT_ONE);
            CHECK_EQ(a.s[w].memtot, ncalls * BLOCK * WEIGHT_ONE);
            CHECK_EQ((uint64_t)a.c[w].live, ncalls * BLOCK);
            CHECK_EQ(a.c[w].hist[hist_class(BLOCK)].ncalls, ncalls);
        }
        for (int spin = 0; spin < 2000; spin++) __builtin_ia32_pause();     /* the writers go on */
        if (read_peak(p.epoch, &b)) {
            CHECK(!memcmp(&a, &b, sizeof a));   /* the same epoch reads the same, whatever came since */
            CHECK_EQ(peak_info().epoch, p.epoch);
            for (int w = 0; w < WRITERS; w++) changed += calls_of(counts(writer_t[w], 0)) != calls_of(a.c[w]);
            reads++;
        }
        peak_release();
    }
    for (int w = 0; w < WRITERS; w++) pthread_join(th[w], NULL);
    CHECK(reads >= READS && changed > 0);
    uint32_t e = peak_info().epoch;
    CHECK(e > first);
    CHECK(read_peak(e, &a));
    uint64_t sum = 0;
    for (int w = 0; w < WRITERS; w++) {
        uint64_t now_n, at_n, bytes;
        struct thread_counts c = counts(writer_t[w], 0);
        thread_calls(&c, &now_n, &bytes);
        thread_calls(&a.c[w], &at_n, &bytes);
        CHECK(now_n >= WRITER_OPS);
        CHECK_EQ(a.s[w].ncalls, at_n * WEIGHT_ONE);
        sum += at_n;
    }
    CHECK(sum > 0);
    OK("captures while %d threads allocate: reads of a held peak, each thread whole, the same twice", WRITERS);
}

/* ------------------------------------------------------------ what the flush compares */

/* The flush writes a (stack, thread) row when its slot_read values differ
 * from the previous snapshot's (flush_rows.c, write_samples): the whole
 * numbers of the fixed-point slot, exact, unchanged while nothing happens. */
static void delta_inputs(void)
{
    struct mp_thread *t = thread_self();
    uint32_t s = slot_of_stack(t, 11);
    struct slot_counts v0, v1, v2;
    slot_read(s, 0, &v0);
    CHECK(v0.ncalls == 0 && v0.memtot == 0 && v0.nfree == 0 && v0.memlive == 0);
    for (int i = 0; i < 3; i++) op_alloc(t, s, 1000);
    slot_read(s, 0, &v1);
    CHECK_EQ(v1.ncalls, 3);
    CHECK_EQ(v1.memtot, 3000);
    CHECK_EQ(v1.memlive, 3000);
    CHECK_EQ(v1.nfree, 0);
    slot_read(s, 0, &v2);
    CHECK(!memcmp(&v1, &v2, sizeof v1));
    OK("a slot read twice without a change reads the same (no row)");

    struct mp_slot *sl = slot_at(s);
    peak_touch_thread(t);       /* the owner frees one (live side down by a block) */
    peak_touch_slot(t, sl, s);
    STORE(sl->live_n, sl->live_n - WEIGHT_ONE);
    STORE(sl->live_b, sl->live_b - 1000 * WEIGHT_ONE);
    peak_op_end(t);
    atomic_fetch_add(&sl->nfree_remote, WEIGHT_ONE);    /* another thread frees one */
    atomic_fetch_add(&sl->freed_remote, 1000 * WEIGHT_ONE);
    slot_read(s, 0, &v2);
    CHECK_EQ(v2.ncalls, 3);
    CHECK_EQ(v2.memtot, 3000);
    CHECK_EQ(v2.nfree, 2);
    CHECK_EQ(v2.memlive, 1000);
    OK("frees by the owner and by another thread: nfree 2, memlive 1000, the rest as it was");

    STORE(sl->memtot, sl->memtot + WEIGHT_ONE / 2 - 1);  /* below half a byte: rounds away */
    slot_read(s, 0, &v1);
    CHECK_EQ(v1.memtot, 3000);
    STORE(sl->memtot, sl->memtot + 1);                  /* half: rounds up */
    slot_read(s, 0, &v1);
    CHECK_EQ(v1.memtot, 3001);
    OK("fixed point rounds to the nearest whole number, half up");
}

int main(void)
{
    copy_on_write();
    delta_inputs();
    remote_claims();
    concurrent();
    return 0;
}
