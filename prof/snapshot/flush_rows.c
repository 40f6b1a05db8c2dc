/* The rows of a snapshot, inside the flush's transaction: the snapshot
 * row, each thread's exact totals and the process's, and the samples: one
 * row per (stack, thread) whose values changed since the previous snapshot
 * (the process's and threads' rows: flush_process.c); then the process's
 * points of memory over time (flush_ticks.c). What is kept here is this process's own: what it wrote
 * last; a fork child starts it anew (rows_forget). */
#define _GNU_SOURCE
#include "flush.h"
#include "maps.h"
#include "cold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const reason_names[] = { "exit", "interval", "api", "signal", "exec", "signal", "detach", "near-limit" };

struct class_v { uint64_t ncalls, memtot, live_n, live_b; };      /* fixed point */
/* A sample row's values: the slots' counters, and their cold blocks
 * (cold.c; 0 without MP_COLD). A row is written when any of them changed. */
struct row_v { struct slot_counts c; uint64_t memcold, coldage; };        /* words only (words_digest) */
struct other { uint32_t slot, cls, next; struct class_v v; };
struct row_classes { unsigned n, cls[MP_HIST_CLASSES]; struct class_v v[MP_HIST_CLASSES]; };

static struct {
    uint64_t *prev, (*prev_cold)[2];    /* by canonical slot: its values' digest in the previous snapshot, */
    size_t nprev_cold;                  /* and their memcold, coldage (MP_COLD only: a peak's) */
    struct slot_counts *peakv;      /* by slot: values at the peak (within write_peak) */
    size_t npeakv;
    uint32_t peak_epoch;            /* of the latest peak snapshot written */
    double peak_time;               /* its time */
    /* what a failed flush made this process forget (rows_forget) of the
     * latest peak snapshot it wrote: the file may hold it still */
    uint32_t forgot_epoch;
    double forgot_time;
    size_t nprev;
    /* Several counter slots of a thread can be one row (stack, thread) of
     * the database: stacks that differ only in addresses of an object
     * loaded twice (dlclose, dlopen again elsewhere) have the same frames.
     * The first slot mapped to a row is its canonical slot; the row is the
     * sum of the slots chained from it. */
    uint32_t *canon, *alias_next;   /* by slot; canon 0 = not mapped yet */
    size_t ncanon, nalias;
    struct node_map rows;       /* (database stack, thread seq) → canonical slot */
    /* the size classes per stack: the threads' entries of this flush,
     * (slot, class) → index into other (1..nother), listed per slot from
     * other_head; and the rows written, (canonical slot, class) → index
     * into class_prev, their values in the previous snapshot */
    struct node_map other_map, class_rows;
    struct other *other;
    size_t nother, other_cap;
    uint32_t *other_head;
    size_t nother_head;
    int other_failed;
    struct class_v *class_prev;
    size_t nclass_prev;
} r;

/* new_process: a fork child (same run, new process row); else another
 * database altogether. */
void rows_forget(int new_process)
{
    process_rows_forget(new_process);
    maps_rows_forget();
    if (new_process) r.forgot_epoch = 0;
    else if (r.peak_epoch) r.forgot_epoch = r.peak_epoch, r.forgot_time = r.peak_time;     /* peak_recall */
    r.peak_epoch = 0;
    free(r.prev), r.prev = NULL, r.nprev = 0, free(r.prev_cold), r.prev_cold = NULL, r.nprev_cold = 0;
    free(r.peakv), r.peakv = NULL, r.npeakv = 0;
    free(r.canon), r.canon = NULL, r.ncanon = 0;
    free(r.alias_next), r.alias_next = NULL, r.nalias = 0;
    node_clear(&r.rows);
    node_clear(&r.other_map), node_clear(&r.class_rows);
    free(r.other), r.other = NULL, r.nother = r.other_cap = 0;
    free(r.other_head), r.other_head = NULL, r.nother_head = 0;
    free(r.class_prev), r.class_prev = NULL, r.nclass_prev = 0;
}

/* ------------------------------------------------------------ totals */

/* A row of totals; the cheap modes' thread that freed more than it
 * allocated has a negative share of the live bytes, written as 0. */
static int write_totals(struct writer *w, int64_t snapshot, int64_t thread, const struct mp_totals *t)
{
    const int64_t row[FC_totals_N] = {
        [FC_totals_snapshot] = snapshot, [FC_totals_thread] = thread,
        [FC_totals_ncalls] = (int64_t)t->ncalls, [FC_totals_memtot] = (int64_t)t->memtot,
        [FC_totals_nfree] = (int64_t)t->nfree, [FC_totals_memlive] = t->live > 0 ? (int64_t)t->live : 0,
        [FC_totals_maxlive] = (int64_t)t->maxlive, [FC_totals_ncalls_nostack] = (int64_t)t->ncalls_nostack,
        [FC_totals_memtot_nostack] = (int64_t)t->memtot_nostack, [FC_totals_nfree_unknown] = (int64_t)t->nfree_unknown,
    };
    for (int i = 0; i < FC_totals_N; i++) sqlite3_bind_int64(w->totals, i + 1, row[i]);
    return step_done(w, w->totals);
}

/* The totals and the size histogram of a snapshot, read before any is
 * written: each thread's exact totals from its own counters, the
 * process's, and the threads' size classes summed. */
struct cut {
    size_t nthreads;
    struct { struct mp_thread *t; struct mp_totals v; } *threads;
    struct mp_totals process;
    int64_t hist[MP_HIST_CLASSES][4];       /* ncalls, memtot, nlive, memlive */
};
static struct cut cut;
static size_t cut_cap;

static int cut_reserve(void)      /* room for every thread */
{
    size_t n = 1;
    for (struct mp_thread *t = thread_list(); t; t = t->next) n++;
    return grow_array(&cut.threads, &cut_cap, n + 16, sizeof *cut.threads);
}

/* After cut_reserve (threads made since, left out, have no counts yet). */
static void cut_read(uint32_t e)
{
    memset(cut.hist, 0, sizeof cut.hist);
    cut.nthreads = 0;
    cut.process = (struct mp_totals){ 0 };
    struct thread_counts tc;
    for (struct mp_thread *t = thread_list(); t && cut.nthreads < cut_cap; t = t->next) {
        thread_counts(t, e, &tc);      /* once: the thread's totals and its classes agree */
        cut.threads[cut.nthreads].t = t;
        thread_totals_of(t, e, &tc, &cut.threads[cut.nthreads].v);
        process_add(&cut.process, &cut.threads[cut.nthreads++].v);
        for (unsigned c = 0; c < MP_HIST_CLASSES; c++) {
            int64_t *v = cut.hist[c];
            v[0] += (int64_t)tc.hist[c].ncalls, v[1] += (int64_t)tc.hist[c].memtot;
            v[2] += (int64_t)(tc.hist[c].ncalls - tc.hist[c].nfree);
            v[3] += (int64_t)(tc.hist[c].live_in - tc.hist[c].live_out);
        }
    }
    process_end(e, &cut.process);      /* the threads' rows, summed: the process row agrees */
}

static int write_cut(struct writer *w, int64_t snapshot)
{
    for (size_t i = 0; i < cut.nthreads; i++) {
        const struct mp_totals *tt = &cut.threads[i].v;
        if (!tt->ncalls && !tt->nfree && !tt->nfree_unknown) continue;
        int64_t tid = process_rows_thread(w, cut.threads[i].t);
        if (!tid || write_totals(w, snapshot, tid, tt)) return -1;
    }
    if (write_totals(w, snapshot, 0, &cut.process)) return -1;
    sqlite3_stmt *st = prepare_insert(w, "INSERT", FT_hist, 1);
    if (!st) return -1;
    int rc = 0;
    for (unsigned c = 0; c < MP_HIST_CLASSES && !rc; c++) {
        const int64_t *v = cut.hist[c];
        if (!v[0] && !v[2]) continue;
        const int64_t row[FC_hist_N] = {
            [FC_hist_snapshot] = snapshot, [FC_hist_lo] = c ? (int64_t)((uint64_t)1 << (c - 1)) : 0,
            [FC_hist_ncalls] = v[0], [FC_hist_memtot] = v[1], [FC_hist_nlive] = v[2], [FC_hist_memlive] = v[3],
        };
        for (int k = 0; k < FC_hist_N; k++) sqlite3_bind_int64(st, k + 1, row[k]);
        rc = step_done(w, st);
    }
    sqlite3_finalize(st);
    return rc;
}

/* ------------------------------------------------------------ samples */

/* Maps slot i to its database stack and thread, and to the canonical slot of
 * that row (itself if it is the first). */
static int map_slot(struct writer *w, uint32_t i)
{
    const struct mp_slot *s = slot_at(i);
    if (!s || !s->stack_id || !LOAD(s->thread_seq)) return 0;
    struct mp_thread *t = thread_by_seq(s->thread_seq);
    int64_t stack = mirror_stack(w, s->stack_id);
    int64_t thread = !t ? 0 : t->seq < flush_ids.nthreads && flush_ids.threads[t->seq] ? flush_ids.threads[t->seq]
                   : process_rows_thread(w, t);
    if (!stack || !thread) return fail(w, "cannot write a stack");
    uint32_t c = node_get(&r.rows, (uint32_t)stack, s->thread_seq);
    if (!c) {
        if (node_put(&r.rows, (uint32_t)stack, s->thread_seq, i)) return fail(w, "out of memory");
        r.canon[i] = i;
    } else {
        r.canon[i] = c;
        r.alias_next[i] = r.alias_next[c];
        r.alias_next[c] = i;
    }
    return 0;
}

/* Every slot mapped to its row, so that a row's sum includes slots new in
 * this snapshot. The rows' map is sized for every slot at once: grown by
 * half at a time, clang's 85,000 rows rehashed it 9 times in its first
 * snapshot. */
static int map_slots(struct writer *w, uint32_t limit)
{
    if (grow_array(&r.prev, &r.nprev, limit, sizeof *r.prev) || grow_array(&r.canon, &r.ncanon, limit, sizeof *r.canon) ||
        (mp_opt.cold && grow_array(&r.prev_cold, &r.nprev_cold, limit, sizeof *r.prev_cold)) ||
        grow_array(&r.alias_next, &r.nalias, limit, sizeof *r.alias_next) || mirror_reserve() ||
        node_reserve(&r.rows, limit > r.rows.count ? limit - r.rows.count : 0))
        return fail(w, "out of memory");
    for (uint32_t i = 1; i < limit; i++)
        if (!r.canon[i] && map_slot(w, i)) return -1;
    return 0;
}

/* A slot's values: now, or those read at the peak (r.peakv). */
static void slot_values(uint32_t i, int at_peak, struct slot_counts *v)
{
    if (at_peak) *v = r.peakv[i];
    else slot_read(i, 0, v);
}

/* The cold blocks of canonical slot i's row, from the latest scan: at a
 * peak, the previous snapshot's (no scan there). A block freed during the
 * scan may have counted: never more than the row's live bytes. */
static void row_cold(uint32_t i, int at_peak, struct row_v *v)
{
    if (at_peak) {
        v->memcold = r.prev_cold ? r.prev_cold[i][0] : 0, v->coldage = r.prev_cold ? r.prev_cold[i][1] : 0;
        return;
    }
    v->memcold = v->coldage = 0;
    for (uint32_t j = i; j; j = r.alias_next[j]) {
        uint64_t bytes, age;
        cold_of(j, &bytes, &age);
        v->memcold += bytes;
        if (age > v->coldage) v->coldage = age;
    }
    if (v->memcold > v->c.memlive) v->memcold = v->c.memlive;
    if (!v->memcold) v->coldage = 0;
}

/* The value of canonical slot i's row: the sum of its slots. */
static struct row_v row_values(uint32_t i, int at_peak)
{
    struct row_v rv;
    struct slot_counts *v = &rv.c, a;
    slot_values(i, at_peak, v);
    for (uint32_t j = r.alias_next[i]; j; j = r.alias_next[j]) {
        slot_values(j, at_peak, &a);
        v->ncalls += a.ncalls, v->memtot += a.memtot, v->nfree += a.nfree;
        v->memlive += a.memlive, v->maxlive += a.maxlive, v->ntemp += a.ntemp, v->time += a.time;
    }
    row_cold(i, at_peak, &rv);
    return rv;
}

/* The rows whose values (counters or cold blocks) changed since the
 * previous snapshot (at_peak: the values read at the peak, against the
 * previous snapshot that is not a peak: the rows of a peak snapshot are not
 * in the chain of the others).
 * Slots 1 .. limit-1 mapped (map_slots). */
static int write_samples(struct writer *w, int64_t snapshot, int at_peak, uint32_t limit, int64_t *nrows)
{
    for (uint32_t i = 1; i < limit; i++) {
        if (r.canon[i] != i) continue;
        struct row_v rv = row_values(i, at_peak);
        uint64_t digest = words_digest((const uint64_t *)&rv, sizeof rv / sizeof(uint64_t));
        if (digest == r.prev[i]) continue;
        const struct slot_counts v = rv.c;
        const struct mp_slot *s = slot_at(i);
        const int64_t row[FC_sample_N] = {
            [FC_sample_snapshot] = snapshot, [FC_sample_stack] = mirror_stack(w, s->stack_id),
            [FC_sample_thread] = flush_ids.threads[s->thread_seq], [FC_sample_ncalls] = (int64_t)v.ncalls,
            [FC_sample_memtot] = (int64_t)v.memtot, [FC_sample_nfree] = (int64_t)v.nfree,
            [FC_sample_memlive] = (int64_t)v.memlive, [FC_sample_maxlive] = (int64_t)v.maxlive,
            [FC_sample_ntemp] = (int64_t)v.ntemp, [FC_sample_time] = (int64_t)v.time,
            [FC_sample_memcold] = (int64_t)rv.memcold, [FC_sample_coldage] = (int64_t)rv.coldage,
        };
        if (batch_add(w, &w->samples, row)) return -1;
        if (!at_peak) r.prev[i] = digest;
        if (!at_peak && r.prev_cold) r.prev_cold[i][0] = rv.memcold, r.prev_cold[i][1] = rv.coldage;
        ++*nrows;
    }
    return mirror_write_run(w) || batch_flush(w, &w->samples) ? -1 : 0;
}

/* ------------------------------------------------------------ size classes per stack */

/* The threads' entries for the slots' other classes (stack_hist.c), summed
 * per (slot, class) at each flush: listed per slot from r.other_head. */
static void other_add(const struct stack_hist_entry *e, void *arg)
{
    (void)arg;
    uint32_t slot = (uint32_t)(e->key >> 7), cls = (uint32_t)(e->key & 127);
    if (slot >= r.ncanon || !r.canon[slot] || r.other_failed) return;   /* a slot of no stack */
    uint32_t k = node_get(&r.other_map, slot, cls);
    if (!k) {
        k = (uint32_t)r.nother + 1;
        if (grow_array(&r.other, &r.other_cap, k + 1, sizeof *r.other) || node_put(&r.other_map, slot, cls, k)) {
            r.other_failed = 1;
            return;
        }
        r.nother++;
        r.other[k] = (struct other){ .slot = slot, .cls = cls, .next = r.other_head[slot] };
        r.other_head[slot] = k;
    }
    struct class_v *v = &r.other[k].v;
    v->ncalls += e->ncalls, v->memtot += e->memtot, v->live_n += e->live_n, v->live_b += e->live_b;
}

static void class_v_add(struct row_classes *rc, unsigned cls, const struct class_v *v)
{
    unsigned i = 0;
    while (i < rc->n && rc->cls[i] != cls) i++;
    if (i == rc->n) rc->cls[rc->n++] = cls, rc->v[i] = (struct class_v){ 0 };
    rc->v[i].ncalls += v->ncalls, rc->v[i].memtot += v->memtot;
    rc->v[i].live_n += v->live_n, rc->v[i].live_b += v->live_b;
}

/* The classes of canonical row c (its slots': each slot's first class is
 * what the slot counted less its other classes); 0 when it has one class
 * only, which the row's sample values say in full. */
static unsigned row_classes(uint32_t c, struct row_classes *rc)
{
    uint8_t first = slot_side(c)->class0;
    int several = 0;
    for (uint32_t j = c; j && !several; j = r.alias_next[j])
        several = r.other_head[j] || slot_side(j)->class0 != first;
    if (!several) return 0;
    rc->n = 0;
    for (uint32_t j = c; j; j = r.alias_next[j]) {
        struct slot_raw raw;
        slot_raw(j, 0, &raw);
        struct class_v rest = { raw.ncalls, raw.memtot, raw.live_n - raw.nfree_remote, raw.live_b - raw.freed_remote };
        for (uint32_t k = r.other_head[j]; k; k = r.other[k].next) {
            const struct class_v *o = &r.other[k].v;
            class_v_add(rc, r.other[k].cls, o);
            rest.ncalls -= o->ncalls, rest.memtot -= o->memtot, rest.live_n -= o->live_n, rest.live_b -= o->live_b;
        }
        if (slot_side(j)->class0) class_v_add(rc, slot_side(j)->class0 - 1u, &rest);
    }
    return rc->n > 1 ? rc->n : 0;
}

static int64_t whole_or_0(uint64_t fixed)
{
    return (int64_t)fixed > 0 ? (int64_t)((fixed + WEIGHT_ONE / 2) / WEIGHT_ONE) : 0;
}

/* The (stack, thread, class) rows of the rows with several classes whose
 * values changed since the previous snapshot (a row with one class has
 * none: its sample row says it all). After write_samples mapped every slot
 * to its row. */
static int write_stack_hist(struct writer *w, int64_t snapshot)
{
    uint32_t limit = slot_limit();
    if (grow_array(&r.other_head, &r.nother_head, limit, sizeof *r.other_head)) return fail(w, "out of memory");
    r.nother = 0, r.other_failed = 0;
    stack_hist_each(other_add, NULL);
    int rc = r.other_failed ? fail(w, "out of memory") : 0;
    struct row_classes classes;
    for (uint32_t c = 1; c < limit && !rc; c++) {
        if (c >= r.ncanon || r.canon[c] != c || !row_classes(c, &classes)) continue;
        const struct mp_slot *s = slot_at(c);
        for (unsigned i = 0; i < classes.n && !rc; i++) {
            uint32_t k = node_get(&r.class_rows, c, classes.cls[i]);
            if (!k) {
                k = (uint32_t)r.class_rows.count + 1;
                if (grow_array(&r.class_prev, &r.nclass_prev, k + 1, sizeof *r.class_prev) ||
                    node_put(&r.class_rows, c, classes.cls[i], k)) {
                    rc = fail(w, "out of memory");
                    break;
                }
            }
            const struct class_v *v = &classes.v[i];
            if (!memcmp(v, &r.class_prev[k], sizeof *v)) continue;
            unsigned cls = classes.cls[i];
            const int64_t row[FC_stack_hist_N] = {
                [FC_stack_hist_snapshot] = snapshot, [FC_stack_hist_stack] = mirror_stack(w, s->stack_id),
                [FC_stack_hist_thread] = flush_ids.threads[s->thread_seq],
                [FC_stack_hist_lo] = cls ? (int64_t)((uint64_t)1 << (cls - 1)) : 0,
                [FC_stack_hist_ncalls] = whole_or_0(v->ncalls), [FC_stack_hist_memtot] = whole_or_0(v->memtot),
                [FC_stack_hist_nlive] = whole_or_0(v->live_n), [FC_stack_hist_memlive] = whole_or_0(v->live_b),
            };
            rc = batch_add(w, &w->stack_hists, row);
            r.class_prev[k] = *v;
        }
    }
    for (size_t k = 1; k <= r.nother; k++) r.other_head[r.other[k].slot] = 0;
    node_clear(&r.other_map);
    return rc ? -1 : batch_flush(w, &w->stack_hists);
}

/* ------------------------------------------------------------ snapshot */

static int64_t snapshot_row(struct writer *w, const char *reason, const char *label, double time)
{
    sqlite3_stmt *st = prepare_insert(w, "INSERT", FT_snapshot, 1);
    if (!st) return 0;
    sqlite3_bind_int64(st, FORMAT_PARAM(snapshot, process), flush_ids.process);
    sqlite3_bind_int64(st, FORMAT_PARAM(snapshot, seq), flush_ids.snapshot_seq + 1);
    sqlite3_bind_double(st, FORMAT_PARAM(snapshot, time), time);
    sqlite3_bind_text(st, FORMAT_PARAM(snapshot, reason), reason, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, FORMAT_PARAM(snapshot, label), label, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, FORMAT_PARAM(snapshot, profiler_memory), (int64_t)mp_memory_used());
    int rc = step_done(w, st);
    sqlite3_finalize(st);
    return rc ? 0 : sqlite3_last_insert_rowid(w->db);
}

/* A snapshot of now: read and written as the threads go on (a cut only
 * when they are stopped: exit, exec, with one thread). */
static int write_now(struct writer *w, enum flush_reason why, double time, const char *label, int64_t *nrows)
{
    const char *reason = reason_names[why];
    uint32_t limit = slot_limit();
    if (map_slots(w, limit) || cut_reserve()) return fail(w, "out of memory");
    cut_read(0);
    cold_scan(limit);
    int64_t snapshot = snapshot_row(w, reason, label, time);
    if (!snapshot || write_cut(w, snapshot) || write_samples(w, snapshot, 0, limit, nrows) || write_stack_hist(w, snapshot) ||
        maps_rows_write(w, snapshot, nrows) ||
        ledger_write(w, snapshot, why == FLUSH_FATAL))
        return -1;
    flush_ids.snapshot_seq++;
    return 0;
}

/* Every value of the peak snapshot, as at the peak of epoch e (peak_read). */
static void read_at_peak(uint32_t e, void *limit)
{
    cut_read(e);
    for (uint32_t i = 1; i < *(uint32_t *)limit; i++)
        if (slot_at(i)) slot_read(i, e, &r.peakv[i]);
}

/* After a failed flush this process forgot what it wrote (rows_forget),
 * but the file keeps what earlier transactions committed: the latest peak
 * snapshot it wrote, when the file has it still (its process row, its
 * time), is known again, so that no peak is written twice (issue 40: a
 * program out of descriptors had its first peak written again after its
 * interval snapshots failed). */
static int peak_recall(struct writer *w)
{
    uint32_t e = r.forgot_epoch;
    r.forgot_epoch = 0;
    sqlite3_stmt *st = prepare(w, "SELECT 1 FROM snapshot WHERE process = ? AND reason = 'peak' AND time = ?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, flush_ids.process);
    sqlite3_bind_double(st, 2, r.forgot_time);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW) r.peak_epoch = e, r.peak_time = r.forgot_time;
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(w, sqlite3_errmsg(w->db));
}

/* The snapshot of the latest peak: every value read in one stretch with
 * captures held off (peak_hold: one epoch for all), before any is
 * written; the slots then mapped to their rows. */
static int write_peak(struct writer *w, int64_t *nrows)
{
    if (r.forgot_epoch && peak_recall(w)) return -1;
    if (peak_info().epoch == r.peak_epoch) return 0;
    struct peak_info peak = peak_hold();
    uint32_t limit = slot_limit();
    int nomem = cut_reserve() || grow_array(&r.peakv, &r.npeakv, limit, sizeof *r.peakv);
    if (!nomem) peak_read(peak.epoch, read_at_peak, &limit);
    peak_release();
    int64_t snapshot = nomem || map_slots(w, limit) ? (fail(w, "out of memory"), 0) : snapshot_row(w, "peak", "", peak.time);
    int failed = !snapshot || write_cut(w, snapshot) || write_samples(w, snapshot, 1, limit, nrows);
    free(r.peakv), r.peakv = NULL, r.npeakv = 0;    /* this snapshot's only (clang: 5 MB kept until its exit) */
    if (failed) return -1;
    flush_ids.snapshot_seq++;
    r.peak_epoch = peak.epoch;
    r.peak_time = peak.time;
    return 0;
}

/* The peak is worth writing ahead of the snapshot that would carry it
 * (flush_ahead) once it is likely final: no new capture for `settle`
 * seconds and the process's live bytes now at most 3/4 of it. A peak
 * that a later one passes after all is written again with the next
 * snapshot (the latest peak snapshot is the process's peak). */
int rows_peak_due(double settle)
{
    struct peak_info peak = peak_info();
    if (!peak.epoch || peak.epoch == r.peak_epoch || mp_now() - peak.time < settle || cut_reserve()) return 0;
    cut_read(0);
    return cut.process.live <= peak.live / 4 * 3;
}

uint32_t rows_peak_epoch(void) { return r.peak_epoch; }

/* The peak snapshot alone, with the process's rows it needs: written
 * ahead, the snapshot that follows finds it written. */
int rows_write_peak(struct writer *w, int64_t *nrows)
{
    return process_rows_write(w, mp_now()) || write_peak(w, nrows) ? -1 : 0;
}

/* Everything of one snapshot, inside the open transaction; first, when
 * the process reached a new peak since the previous snapshot, a snapshot
 * of the peak (reason 'peak', at the time of the capture). */
int rows_write(struct writer *w, enum flush_reason reason, const char *label, int64_t *nrows)
{
    double now = mp_now();
    if (process_rows_write(w, now) || write_peak(w, nrows)) return -1;
    return write_now(w, reason, now, label, nrows) || ticks_rows_write(w, now, &cut.process) ? -1 : 0;
}
