/* Turns the rows profile.c read into the in-memory profile: every database
 * id becomes a dense array index, every reference is checked (a dangling
 * one is "inconsistent profile (...)", exit 2), and stacks get depths and
 * a parents-first order. No SQL here. */
#include "ledger.h"
#include "procs.h"
#include "profile_link.h"

#include <stdlib.h>
#include <string.h>

/* rows: n structs of `stride` bytes whose first field is the int64 id */
static void idindex_build(struct idindex *ix, size_t n, const void *rows, size_t stride)
{
    ix->n = n;
    ix->dense = 1;
    for (size_t i = 0; i < n && ix->dense; i++)
        if (*(const int64_t *)((const char *)rows + i * stride) != (int64_t)i + 1) ix->dense = 0;
    if (ix->dense) return;
    idmap_init(&ix->map, n);
    for (size_t i = 0; i < n; i++) {
        int created;
        uint32_t *v = idmap_put(&ix->map, (uint64_t)*(const int64_t *)((const char *)rows + i * stride), &created);
        *v = (uint32_t)i;   /* duplicates cannot happen: ids are primary keys */
    }
}

static uint32_t idindex_get(const struct idindex *ix, int64_t id)
{
    if (ix->dense) return id >= 1 && (uint64_t)id <= ix->n ? (uint32_t)(id - 1) : NONE;
    return idmap_get(&ix->map, (uint64_t)id);
}

static void idindex_free(struct idindex *ix)
{
    if (!ix->dense) idmap_free(&ix->map);
}

/* ---------------------------------------------------------------- values */
/* Values no recorder writes: a counter below 0 or above COUNTER_MAX (sums
 * of them would overflow), more frees than allocations, more bytes live
 * than allocated. The columns as stored (nlive is derived). */
static const int stored_counters[] = { NCALLS, MEMTOT, NFREE, MEMLIVE, MAXLIVE, NTEMP, TIME, NMAP, MAPPED,
                                       MAXMAPPED, RSS, MEMCOLD, COLDAGE };

static int out_of_range(int64_t v) { return v < 0 || v > COUNTER_MAX; }

/* 0, or "corrupt profile (table TABLE, row ROW: why)" in err: the first
 * ncols stored counters of c (relations: sample rows' nfree <= ncalls and
 * memlive <= memtot) */
static int check_counters(struct loader *l, const counters *c, int ncols, int relations, const char *table,
                          const char *row)
{
    const char *why = NULL;
    char what[160];
    for (int i = 0; i < ncols && !why; i++) {
        int k = stored_counters[i];
        if (!out_of_range(c->v[k])) continue;
        snprintf(what, sizeof what, "%s %lld is out of range (0 to 2^62)", counter_name[k], (long long)c->v[k]);
        why = what;
    }
    if (!why && relations && c->v[NFREE] > c->v[NCALLS]) {
        snprintf(what, sizeof what, "nfree %lld > ncalls %lld", (long long)c->v[NFREE], (long long)c->v[NCALLS]);
        why = what;
    }
    if (!why && relations && c->v[MEMLIVE] > c->v[MEMTOT]) {
        snprintf(what, sizeof what, "memlive %lld > memtot %lld", (long long)c->v[MEMLIVE],
                 (long long)c->v[MEMTOT]);
        why = what;
    }
    if (!why) return 0;
    return profile_fail(l->err, l->errlen, "corrupt profile (table %s, row %s: %s)", table, row, why);
}

/* A sample row, converted as it is read (no raw copy of the largest table):
 * its references become indexes; the first dangling one, or the first
 * corrupt value, is the error. */
void convert_sample(struct loader *l, const void *raw, void *stored)
{
    const struct raw_sample *r = raw;
    struct sample *s = stored;
    s->snapshot = idindex_get(&l->snapshot, r->snapshot);
    s->stack = idindex_get(&l->stack, r->stack);
    s->thread = idindex_get(&l->thread, r->thread);
    s->c = r->c;
    if (s->snapshot == NONE || s->stack == NONE || s->thread == NONE) {
        l->bad_ref = 1;
        profile_fail(l->err, l->errlen, "inconsistent profile (sample refers to missing %s %lld)",
             s->snapshot == NONE ? "snapshot" : s->stack == NONE ? "stack" : "thread",
             (long long)(s->snapshot == NONE ? r->snapshot : s->stack == NONE ? r->stack : r->thread));
        return;
    }
    char row[96];
    snprintf(row, sizeof row, "snapshot %lld stack %lld thread %lld", (long long)r->snapshot, (long long)r->stack,
             (long long)r->thread);
    counters neg = s->c;        /* a store's window: differences, a fall below 0 as in range as a rise */
    for (int k = 0; l->window && k < NSTACK_COUNTERS; k++) neg.v[k] = neg.v[k] < 0 ? -neg.v[k] : neg.v[k];
    if (check_counters(l, &neg, sizeof stored_counters / sizeof *stored_counters, !l->window, "sample", row)) {
        l->bad_ref = 1;
        return;
    }
    counters_derive(&s->c);
    /* what the tables then show (shown_counters) */
    if (s->c.v[NMAP] || s->c.v[MAXMAPPED]) l->p->has_mappings = 1;
    if (s->c.v[MEMCOLD] || s->c.v[COLDAGE]) l->p->has_cold = 1;
}

/* A histogram row's first dangling reference is the error, as a sample's. */
static void hist_dangling(struct loader *l, const char *table, const char *what, int64_t id)
{
    l->bad_ref = 1;
    profile_fail(l->err, l->errlen, "inconsistent profile (%s row refers to missing %s %lld)", table, what,
                 (long long)id);
}

void convert_hist(struct loader *l, const void *raw, void *stored)
{
    const struct raw_hist *r = raw;
    struct hist_row *h = stored;
    *h = (struct hist_row){ idindex_get(&l->snapshot, r->snapshot), r->lo, { r->v[0], r->v[1], r->v[2], r->v[3] } };
    if (h->snapshot == NONE) hist_dangling(l, "hist", "snapshot", r->snapshot);
}

void convert_stack_hist(struct loader *l, const void *raw, void *stored)
{
    const struct raw_stack_hist *r = raw;
    struct stack_hist_row *h = stored;
    *h = (struct stack_hist_row){ idindex_get(&l->snapshot, r->snapshot), idindex_get(&l->stack, r->stack),
                                  idindex_get(&l->thread, r->thread), r->lo,
                                  { r->v[0], r->v[1], r->v[2], r->v[3] } };
    if (h->snapshot == NONE) hist_dangling(l, "stack_hist", "snapshot", r->snapshot);
    else if (h->stack == NONE) hist_dangling(l, "stack_hist", "stack", r->stack);
    else if (h->thread == NONE) hist_dangling(l, "stack_hist", "thread", r->thread);
}

void convert_ledger(struct loader *l, const void *raw, void *stored)
{
    const struct raw_ledger *r = raw;
    *(struct ledger_row *)stored = (struct ledger_row){ idindex_get(&l->snapshot, r->snapshot), r->line, r->bytes, r->size };
}

/* ---------------------------------------------------------------- linking */
#define BAD(fmt, ...) profile_fail(l->err, l->errlen, "inconsistent profile (" fmt ")", __VA_ARGS__)

static int link_processes(struct loader *l)
{
    struct profile *p = l->p;
    for (size_t i = 0; i < p->nprocs; i++) {
        struct process *pr = &p->procs[i];
        pr->run = idindex_get(&l->run, pr->run_id);
        if (pr->run == NONE)
            return BAD("process %lld refers to missing run %lld", (long long)pr->id, (long long)pr->run_id);
        pr->name = procs_name_of(pr, &p->text);
        if (strstr(pr->settings, "MP_TIME=1")) p->has_time = 1;
        if (strstr(pr->settings, "MP_COLD=1")) p->has_cold = 1;
    }
    for (size_t i = 0; i < p->nmodules; i++) {
        p->modules[i].base = path_basename(p->modules[i].path);
        p->modules[i].special = p->modules[i].path[0] == '[';
    }
    p->nthreads = l->nthreads;
    p->threads = xmalloc(l->nthreads * sizeof *p->threads);
    for (size_t i = 0; i < l->nthreads; i++) {
        const struct raw_thread *r = &l->rthreads[i];
        p->threads[i] = r->t;
        p->threads[i].process = idindex_get(&l->proc, r->process);
        if (p->threads[i].process == NONE)
            return BAD("thread %lld refers to missing process %lld", (long long)r->t.id,
                       (long long)r->process);
    }
    return 0;
}

/* A frame reference that is not NULL (-1) must resolve. */
static int link_frame(struct loader *l, const struct raw_frame *r, struct frame *f)
{
    *f = (struct frame){ .id = r->id, .offset = r->offset, .inline_depth = r->inline_depth, .line = r->line };
    f->module = idindex_get(&l->module, r->module);
    f->function = r->function < 0 ? NONE : idindex_get(&l->function, r->function);
    f->file = r->file < 0 ? NONE : idindex_get(&l->file, r->file);
    if (f->module == NONE)
        return BAD("frame %lld refers to missing module %lld", (long long)f->id, (long long)r->module);
    if (r->function >= 0 && f->function == NONE)
        return BAD("frame %lld refers to missing function %lld", (long long)f->id, (long long)r->function);
    if (r->file >= 0 && f->file == NONE)
        return BAD("frame %lld refers to missing file %lld", (long long)f->id, (long long)r->file);
    return 0;
}

/* Function and file names: dense arrays by index; then the frames. */
static int link_frames(struct loader *l)
{
    struct profile *p = l->p;
    p->nfunctions = l->nfunctions;
    p->functions = xmalloc(l->nfunctions * sizeof *p->functions);
    for (size_t i = 0; i < l->nfunctions; i++) p->functions[i] = l->rfunctions[i].name;
    p->nfiles = l->nfiles;
    p->files = xmalloc(l->nfiles * sizeof *p->files);
    for (size_t i = 0; i < l->nfiles; i++) p->files[i] = l->rfiles[i].name;
    p->nframes = l->nframes;
    p->frames = xmalloc(l->nframes * sizeof *p->frames);
    int rc = 0;
    for (size_t i = 0; i < l->nframes && !rc; i++) rc = link_frame(l, &l->rframes[i], &p->frames[i]);
    return rc;
}

/* Computes stack depths (root = 0) and an order with parents first,
 * rejecting parent cycles and stacks deeper than the recorder writes
 * (possible only in a corrupted file). */
static int order_stacks(struct loader *l)
{
    struct profile *p = l->p;
    size_t n = p->nstacks;
    uint8_t *state = xcalloc(n, 1);      /* 0 new, 1 on the walk, 2 done */
    uint32_t *walk = xmalloc(n * sizeof *walk);
    uint32_t maxdepth = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        size_t w = 0;
        uint32_t cur = (uint32_t)i;
        while (cur != NONE && state[cur] == 0) {
            state[cur] = 1;
            walk[w++] = cur;
            cur = p->stacks[cur].parent;
        }
        if (cur != NONE && state[cur] == 1) {
            rc = BAD("stack %lld is its own ancestor", (long long)p->stacks[cur].id);
            break;
        }
        uint32_t d = cur == NONE ? 0 : p->stacks[cur].depth + 1;
        while (w-- > 0) {
            p->stacks[walk[w]].depth = d++;
            state[walk[w]] = 2;
        }
        if (d > maxdepth) maxdepth = d;
        if (d > STACK_DEPTH_MAX) {      /* d: stack i's frames */
            rc = profile_fail(l->err, l->errlen, "corrupt profile (table stack, row %lld: %lu frames deep, the "
                              "recorder writes at most %d)", (long long)p->stacks[i].id, (unsigned long)d,
                              STACK_DEPTH_MAX);
            break;
        }
    }
    free(state);
    free(walk);
    if (rc) return rc;
    uint32_t *count = xcalloc((size_t)maxdepth + 2, sizeof *count);
    for (size_t i = 0; i < n; i++) count[p->stacks[i].depth + 1]++;
    for (size_t d = 1; d <= maxdepth + 1; d++) count[d] += count[d - 1];
    p->stack_order = xmalloc(n * sizeof *p->stack_order);
    for (size_t i = 0; i < n; i++) p->stack_order[count[p->stacks[i].depth]++] = (uint32_t)i;
    free(count);
    return 0;
}

static int link_stacks(struct loader *l)
{
    struct profile *p = l->p;
    p->nstacks = l->nstacks;
    p->stacks = xmalloc(l->nstacks * sizeof *p->stacks);
    for (size_t i = 0; i < l->nstacks; i++) p->stacks[i].id = l->rstacks[i].id;
    idindex_build(&l->stack, l->nstacks, p->stacks, sizeof *p->stacks);
    for (size_t i = 0; i < l->nstacks; i++) {
        const struct raw_stack *r = &l->rstacks[i];
        struct stack *s = &p->stacks[i];
        s->frame = idindex_get(&l->frame, r->frame);
        s->parent = r->parent == 0 ? NONE : idindex_get(&l->stack, r->parent);
        s->depth = 0;
        if (s->frame == NONE || (r->parent != 0 && s->parent == NONE))
            return BAD("stack %lld refers to missing %s %lld", (long long)s->id,
                       s->frame == NONE ? "frame" : "stack",
                       (long long)(s->frame == NONE ? r->frame : r->parent));
    }
    return order_stacks(l);
}

/* Snapshots arrive sorted by (process, seq): each process owns a range. */
static int link_snapshots(struct loader *l)
{
    struct profile *p = l->p;
    p->nsnapshots = l->nsnapshots;
    p->snapshots = xmalloc(l->nsnapshots * sizeof *p->snapshots);
    for (size_t i = 0; i < l->nsnapshots; i++) {
        const struct raw_snapshot *r = &l->rsnapshots[i];
        uint32_t pi = idindex_get(&l->proc, r->process);
        if (pi == NONE)
            return BAD("snapshot %lld refers to missing process %lld", (long long)r->s.id,
                       (long long)r->process);
        if (out_of_range(r->s.profiler_memory))
            return profile_fail(l->err, l->errlen, "corrupt profile (table snapshot, row %lld: profiler_memory "
                                "%lld is out of range (0 to 2^62))", (long long)r->s.id,
                                (long long)r->s.profiler_memory);
        p->snapshots[i] = r->s;
        p->snapshots[i].process = pi;
        p->snapshots[i].peak = !strcmp(r->s.reason, "peak");
        if (p->procs[pi].nsnapshots++ == 0) p->procs[pi].first_snapshot = (uint32_t)i;
    }
    idindex_build(&l->snapshot, l->nsnapshots, p->snapshots, sizeof *p->snapshots);
    return 0;
}

void link_recorded(struct profile *p)
{
    p->recorded_of = none_array(p->nstacks ? p->nstacks : 1);
    for (size_t i = 0; i < p->nsamples; i++) p->recorded_of[p->samples[i].stack] = 0;
    p->nrecorded = 0;
    for (size_t s = 0; s < p->nstacks; s++)
        if (p->recorded_of[s] != NONE) p->recorded_of[s] = (uint32_t)p->nrecorded++;
    p->recorded = xmalloc((p->nrecorded ? p->nrecorded : 1) * sizeof *p->recorded);
    for (size_t s = 0; s < p->nstacks; s++)
        if (p->recorded_of[s] != NONE) p->recorded[p->recorded_of[s]] = (uint32_t)s;
    for (size_t i = 0; i < p->nsamples; i++) p->samples[i].rec = p->recorded_of[p->samples[i].stack];
}

/* Totals of unknown threads are skipped (they only feed per-thread lines). */
int link_totals(struct loader *l)
{
    struct profile *p = l->p;
    p->totals = xmalloc(l->ntotals * sizeof *p->totals);
    for (size_t i = 0; i < l->ntotals; i++) {
        const struct raw_total *r = &l->rtotals[i];
        struct total t = r->t;
        char row[64];
        snprintf(row, sizeof row, "snapshot %lld thread %lld", (long long)r->snapshot, (long long)r->thread);
        int rc = check_counters(l, &t.c, NCOUNTERS - 1, 0, "totals", row);   /* all but nlive */
        const int64_t extra[] = { t.ncalls_nostack, t.memtot_nostack, t.nfree_unknown };
        static const char *const extra_name[] = { "ncalls_nostack", "memtot_nostack", "nfree_unknown" };
        for (int k = 0; k < 3 && !rc; k++)
            if (out_of_range(extra[k]))
                rc = profile_fail(l->err, l->errlen, "corrupt profile (table totals, row %s: %s %lld is out of "
                                  "range (0 to 2^62))", row, extra_name[k], (long long)extra[k]);
        if (rc) return rc;
        counters_derive(&t.c);
        t.snapshot = idindex_get(&l->snapshot, r->snapshot);
        t.thread = r->thread == 0 ? NONE : idindex_get(&l->thread, r->thread);
        if (t.snapshot == NONE)
            return BAD("totals refer to missing snapshot %lld", (long long)r->snapshot);
        if (r->thread != 0 && t.thread == NONE) continue;
        p->totals[p->ntotals++] = t;
    }
    p->snapshot_total = none_array(l->nsnapshots);
    for (size_t i = 0; i < p->ntotals; i++)
        if (p->totals[i].thread == NONE) p->snapshot_total[p->totals[i].snapshot] = (uint32_t)i;
    return 0;
}

int link_ticks(struct loader *l)
{
    struct profile *p = l->p;
    p->ticks = xmalloc((l->nticks ? l->nticks : 1) * sizeof *p->ticks);
    for (size_t i = 0; i < l->nticks; i++) {
        const struct raw_tick *r = &l->rticks[i];
        struct tick t = r->t;
        const int64_t v[] = { t.ncalls, t.memtot, t.memlive, t.rss, t.mapped };
        static const char *const name[] = { "ncalls", "memtot", "memlive", "rss", "mapped" };
        for (int k = 0; k < 5; k++)
            if (out_of_range(v[k]))
                return profile_fail(l->err, l->errlen, "corrupt profile (table tick, row process %lld time %.6f: "
                                    "%s %lld is out of range (0 to 2^62))", (long long)r->process, t.time, name[k],
                                    (long long)v[k]);
        t.process = idindex_get(&l->proc, r->process);
        if (t.process == NONE) return BAD("ticks refer to missing process %lld", (long long)r->process);
        if (p->nticks && p->ticks[p->nticks - 1].process > t.process)
            return BAD("ticks of process %lld out of order", (long long)r->process);
        struct process *pr = &p->procs[t.process];
        if (pr->nticks++ == 0) pr->first_tick = (uint32_t)p->nticks;
        p->ticks[p->nticks++] = t;
    }
    return 0;
}

void loader_free(struct loader *l)
{
    idindex_free(&l->run); idindex_free(&l->proc); idindex_free(&l->thread);
    idindex_free(&l->module); idindex_free(&l->function); idindex_free(&l->file);
    idindex_free(&l->frame); idindex_free(&l->stack); idindex_free(&l->snapshot);
    free(l->rthreads); free(l->rfunctions); free(l->rfiles); free(l->rframes);
    free(l->rstacks); free(l->rsnapshots); free(l->rtotals); free(l->rticks);
}


int link_dictionaries(struct loader *l)
{
    struct profile *p = l->p;
    idindex_build(&l->run, p->nruns, p->runs, sizeof *p->runs);
    idindex_build(&l->proc, p->nprocs, p->procs, sizeof *p->procs);
    idindex_build(&l->thread, l->nthreads, l->rthreads, sizeof *l->rthreads);
    idindex_build(&l->module, p->nmodules, p->modules, sizeof *p->modules);
    idindex_build(&l->function, l->nfunctions, l->rfunctions, sizeof *l->rfunctions);
    idindex_build(&l->file, l->nfiles, l->rfiles, sizeof *l->rfiles);
    idindex_build(&l->frame, l->nframes, l->rframes, sizeof *l->rframes);
    int rc;
    if ((rc = link_processes(l)) || (rc = link_frames(l)) || (rc = link_stacks(l))) return rc;
    return link_snapshots(l);
}
