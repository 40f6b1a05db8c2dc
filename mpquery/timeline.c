/* Memory over time from the snapshots and ticks, for timeline and
 * report. Per process, its totals at each of its snapshots (peak
 * snapshots aside) and ticks (the points the recorder takes every few
 * milliseconds, format version 4), in time order; for the whole tree, at
 * each moment a process has a point, the sum of the processes' latest (a
 * process that has ended holds no live bytes any more, its calls and
 * bytes stay counted); the N stacks that held the most at the processes'
 * peak snapshots, as more series; each process's peak snapshot, and the
 * process peak (timeline_process_peak: the one figure every view prints
 * as "peak"). The plot is timeline_svg.c's. */
#include "procs.h"
#include "timeline.h"
#include "output.h"
#include "select.h"

#include <stdlib.h>
#include <string.h>

static const int t_counter[NT] = { NCALLS, MEMTOT, MEMLIVE, MAXLIVE, MEMLIVE };   /* RSS: a size, as memlive */

/* The processes of the selection, by start. */
static void pick_processes(struct timeline *tl, const struct selection *sel)
{
    const struct profile *p = tl->p;
    tl->procs = xmalloc((p->nprocs ? p->nprocs : 1) * sizeof *tl->procs);
    for (uint32_t i = 0; i < p->nprocs; i++)
        if (sel->proc_snapshot[i] != NONE) tl->procs[tl->nprocs++] = i;
    qsort_r(tl->procs, tl->nprocs, sizeof *tl->procs, procs_by_start, (void *)p);
}

/* The snapshot whose stacks the plot shows for process proc: its peak
 * snapshot (the latest of reason 'peak' with totals), else its last. */
static uint32_t shown_snapshot(const struct profile *p, uint32_t proc)
{
    uint32_t peak = timeline_peak_snapshot(p, proc), last = NONE;
    const struct process *pr = &p->procs[proc];
    for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++)
        if (!p->snapshots[j].peak) last = j;
    return peak != NONE ? peak : last;
}

/* What a stack's rows count towards: its display node's series (with
 * tl->stack_node), else its own. */
static uint32_t key_of(const struct timeline *tl, uint32_t stack)
{
    return tl->stack_node ? tl->stack_node[stack] : stack;
}

static size_t nkeys(const struct timeline *tl)
{
    size_t n = tl->stack_node ? tl->nnodes : tl->p->nstacks;
    return n ? n : 1;
}

/* Per key (key_of), the series it is (-1: none). */
static int32_t *chosen_keys(const struct timeline *tl)
{
    int32_t *chosen = xmalloc(nkeys(tl) * sizeof *chosen);
    for (size_t s = 0; s < nkeys(tl); s++) chosen[s] = -1;
    for (size_t k = 0; k < tl->nstacks; k++) chosen[key_of(tl, tl->stacks[k])] = (int32_t)k;
    return chosen;
}

/* The n keys (key_of) whose stacks held the most (held: per stack) into
 * tl->stacks, each as its stack that held most; ties, as top breaks
 * them: the lower stack id. */
static void choose(struct timeline *tl, const int64_t *held, size_t n)
{
    const struct profile *p = tl->p;
    int64_t *sum = xcalloc(nkeys(tl), sizeof *sum);
    uint32_t *rep = none_array(nkeys(tl));
    for (uint32_t s = 0; s < p->nstacks; s++) {
        uint32_t k = key_of(tl, s);
        if (held[s] <= 0 || k == NONE) continue;
        sum[k] = sat_add(sum[k], held[s]);
        if (rep[k] == NONE || held[s] > held[rep[k]] || (held[s] == held[rep[k]] && p->stacks[s].id < p->stacks[rep[k]].id))
            rep[k] = s;
    }
    tl->stacks = xmalloc((n ? n : 1) * sizeof *tl->stacks);
    for (size_t i = 0; i < n; i++) {
        uint32_t best = NONE;
        for (uint32_t k = 0; k < nkeys(tl); k++)
            if (sum[k] > 0 && (best == NONE || sum[k] > sum[best] ||
                               (sum[k] == sum[best] && p->stacks[rep[k]].id < p->stacks[rep[best]].id)))
                best = k;
        if (best == NONE) break;
        tl->stacks[tl->nstacks++] = rep[best];
        sum[best] = 0;
    }
    free(sum);
    free(rep);
}

/* The n stacks that held the most live bytes at the processes' peaks
 * (each process's peak snapshot, else its last), summed over processes:
 * the rows of `top --snapshot peak --by memlive`, newest per (thread,
 * stack) in the snapshot's chain (it, and the non-peak snapshots before
 * it). Each process's peak point gets the chosen stacks' values. */
static void pick_stacks(struct timeline *tl, size_t n)
{
    const struct profile *p = tl->p;
    int64_t *held = xcalloc(p->nstacks ? p->nstacks : 1, sizeof *held);
    uint32_t *at = xmalloc((p->nprocs ? p->nprocs : 1) * sizeof *at);
    for (size_t i = 0; i < p->nprocs; i++) at[i] = NONE;
    for (size_t k = 0; k < tl->nprocs; k++) at[tl->procs[k]] = shown_snapshot(p, tl->procs[k]);
    struct idmap newest;                /* (thread, stack) → its newest row in the chain */
    idmap_init(&newest, 1024);
    for (size_t r = 0; r < p->nsamples; r++) {
        const struct sample *sa = &p->samples[r];
        const struct snapshot *sn = &p->snapshots[sa->snapshot];
        uint32_t j = at[sn->process];
        if (j == NONE || (sa->snapshot != j && (sn->peak || sn->id > p->snapshots[j].id))) continue;
        int created;
        uint32_t *v = idmap_put(&newest, (uint64_t)sa->thread << 32 | sa->stack, &created);
        if (created || p->snapshots[p->samples[*v].snapshot].id < sn->id) *v = (uint32_t)r;
    }
    for (size_t i = 0; i < newest.cap; i++)
        if (newest.vals[i] != NONE)
            held[p->samples[newest.vals[i]].stack] = sat_add(held[p->samples[newest.vals[i]].stack],
                                                             p->samples[newest.vals[i]].c.v[MEMLIVE]);
    choose(tl, held, n);
    int32_t *chosen = chosen_keys(tl);
    for (size_t k = 0; k < tl->nprocs; k++) tl->peak[k].stack_live = xcalloc(tl->nstacks + 1, sizeof(int64_t));
    for (size_t i = 0; i < newest.cap; i++) {
        const struct sample *sa = newest.vals[i] != NONE ? &p->samples[newest.vals[i]] : NULL;
        uint32_t key = sa ? key_of(tl, sa->stack) : NONE;
        if (key == NONE || chosen[key] < 0 || !p->snapshots[at[p->snapshots[sa->snapshot].process]].peak) continue;
        for (size_t k = 0; k < tl->nprocs; k++)
            if (tl->procs[k] == p->snapshots[sa->snapshot].process)
                tl->peak[k].stack_live[chosen[key]] += sa->c.v[MEMLIVE];
    }
    idmap_free(&newest);
    free(chosen), free(at), free(held);
}

/* Process k's point at time t from snapshot j (tot: its totals) or a
 * tick (j NONE), with the chosen stacks' live bytes as of then. */
static struct point make_point(const struct timeline *tl, size_t k, uint32_t j, const struct tick *tk,
                               const int64_t *cur)
{
    const struct profile *p = tl->p;
    const struct process *pr = &p->procs[tl->procs[k]];
    struct point pt = { 0 };
    pt.pid = pr->pid;
    pt.stack_live = xmalloc((tl->nstacks + 1) * sizeof *pt.stack_live);
    memcpy(pt.stack_live, cur, tl->nstacks * sizeof *cur);
    if (j != NONE) {
        const struct snapshot *sn = &p->snapshots[j];
        const struct total *tot = snapshot_total(p, j);
        pt.t = sn->time - tl->t0, pt.seq = sn->seq, pt.reason = sn->reason, pt.label = sn->label;
        for (int c = 0; c < T_RSS; c++) pt.v[c] = tot ? tot->c.v[t_counter[c]] : 0;
    } else {
        pt.t = tk->time - tl->t0, pt.reason = "tick", pt.label = "", pt.tick = 1;
        pt.v[T_NCALLS] = tk->ncalls, pt.v[T_MEMTOT] = tk->memtot, pt.v[T_MEMLIVE] = tk->memlive;
    }
    if (tk) pt.v[T_RSS] = tk->rss, pt.v[T_MAPPED] = tk->mapped;
    return pt;
}

/* The chosen stacks' rows of snapshot j applied to cur: the latest value
 * of each (stack, thread) kept in last. */
static void apply_rows(const struct timeline *tl, const int32_t *chosen, const uint32_t *rows, size_t nrows,
                       uint32_t j, struct idmap *last, int64_t *cur)
{
    const struct profile *p = tl->p;
    for (size_t i = 0; i < nrows; i++) {
        const struct sample *sa = &p->samples[rows[i]];
        if (sa->snapshot != j) continue;
        int created, k = chosen[key_of(tl, sa->stack)];
        uint32_t *v = idmap_put(last, (uint64_t)sa->thread << 32 | sa->stack, &created);
        cur[k] = sat_add(cur[k], sa->c.v[MEMLIVE] - (created ? 0 : p->samples[*v].c.v[MEMLIVE]));
        *v = rows[i];
    }
}

/* Each process's points in time order: its snapshots (peaks aside) and
 * its ticks; a tick at a snapshot's time (the one each snapshot writes)
 * is that snapshot's point, with its RSS. The chosen stacks' live bytes:
 * their rows swept in snapshot order (a tick has those of the snapshot
 * before it). */
static void process_points(struct timeline *tl)
{
    const struct profile *p = tl->p;
    int32_t *chosen = chosen_keys(tl);
    tl->first = xcalloc(tl->nprocs + 1, sizeof *tl->first);
    tl->count = xcalloc(tl->nprocs + 1, sizeof *tl->count);
    tl->pts = xcalloc((p->nsnapshots + p->nticks) * 2 + 1, sizeof *tl->pts);
    uint32_t *rows = xmalloc((p->nsamples ? p->nsamples : 1) * sizeof *rows);
    size_t nrows = 0;
    for (size_t r = 0; tl->nstacks && r < p->nsamples; r++)
        if (key_of(tl, p->samples[r].stack) != NONE && chosen[key_of(tl, p->samples[r].stack)] >= 0)
            rows[nrows++] = (uint32_t)r;
    for (size_t k = 0; k < tl->nprocs; k++) {
        const struct process *pr = &p->procs[tl->procs[k]];
        tl->first[k] = tl->npts;
        int64_t *cur = xcalloc(tl->nstacks + 1, sizeof *cur);
        struct idmap last;                  /* (thread, stack) → the row last seen */
        idmap_init(&last, 16);
        uint32_t j = pr->first_snapshot, jend = pr->first_snapshot + pr->nsnapshots;
        uint32_t q = pr->first_tick, qend = pr->first_tick + pr->nticks;
        for (;;) {
            while (j < jend && p->snapshots[j].peak) j++;
            if (j == jend && q == qend) break;
            const struct tick *tk = q < qend ? &p->ticks[q] : NULL;
            if (j < jend && (!tk || p->snapshots[j].time <= tk->time)) {
                int same = tk && p->snapshots[j].time == tk->time;
                apply_rows(tl, chosen, rows, nrows, j, &last, cur);
                tl->pts[tl->npts++] = make_point(tl, k, j, same ? tk : NULL, cur);
                j++, q += same;
            } else {
                tl->pts[tl->npts++] = make_point(tl, k, NONE, tk, cur);
                q++;
            }
        }
        tl->count[k] = tl->npts - tl->first[k];
        idmap_free(&last);
        free(cur);
    }
    free(rows);
    free(chosen);
}

/* Point indexes by time (then process: a point's index orders them). */
static int by_time(const void *a, const void *b, void *ctx)
{
    const struct point *pts = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (pts[x].t != pts[y].t) return pts[x].t < pts[y].t ? -1 : 1;
    return (x > y) - (x < y);
}

/* The tree's point at each moment a process has one: every process's
 * latest point at or before it summed; a process past its last point
 * holds no live bytes (its calls and bytes stay). One sweep over the
 * points in time order, each process's share replaced as it moves. */
static void tree_points(struct timeline *tl)
{
    size_t n = tl->npts, *order = xmalloc((n ? n : 1) * sizeof *order);
    size_t *proc_of = xmalloc((n ? n : 1) * sizeof *proc_of);
    for (size_t k = 0; k < tl->nprocs; k++)
        for (size_t i = tl->first[k]; i < tl->first[k] + tl->count[k]; i++) proc_of[i] = k;
    for (size_t i = 0; i < n; i++) order[i] = i;
    qsort_r(order, n, sizeof *order, by_time, tl->pts);
    const struct point **share = xcalloc(tl->nprocs + 1, sizeof *share);   /* each process's latest point */
    int64_t *rss = xcalloc(tl->nprocs + 1, sizeof *rss);                   /* its latest known RSS */
    int64_t *mapped = xcalloc(tl->nprocs + 1, sizeof *mapped);             /* and mapped bytes */
    uint8_t *ended = xcalloc(tl->nprocs + 1, 1);
    tl->tree_first = tl->npts;
    for (size_t i = 0; i < n;) {
        double t = tl->pts[order[i]].t;
        for (; i < n && tl->pts[order[i]].t == t; i++) {
            size_t k = proc_of[order[i]];
            share[k] = &tl->pts[order[i]];
            if (share[k]->v[T_RSS]) rss[k] = share[k]->v[T_RSS], mapped[k] = share[k]->v[T_MAPPED];
        }
        struct point *pt = &tl->pts[tl->npts++];
        *pt = (struct point){ t, 0, 0, "", "", 0, { 0 }, xcalloc(tl->nstacks + 1, sizeof *pt->stack_live) };
        for (size_t k = 0; k < tl->nprocs; k++) {
            if (!share[k]) continue;
            for (int c = 0; c < T_RSS; c++)
                pt->v[c] = sat_add(pt->v[c], ended[k] && c == T_MEMLIVE ? 0 : share[k]->v[c]);
            if (!ended[k]) pt->v[T_RSS] = sat_add(pt->v[T_RSS], rss[k]);
            if (!ended[k]) pt->v[T_MAPPED] = sat_add(pt->v[T_MAPPED], mapped[k]);
            for (size_t s = 0; s < tl->nstacks && !ended[k]; s++)
                pt->stack_live[s] = sat_add(pt->stack_live[s], share[k]->stack_live[s]);
        }
        pt->v[T_MAXLIVE] = 0;   /* a sum of peaks at different times means nothing */
        for (size_t k = 0; k < tl->nprocs; k++)     /* past its last point from the next moment on */
            if (share[k] == &tl->pts[tl->first[k] + tl->count[k] - 1]) ended[k] = 1;
    }
    tl->ntree = tl->npts - tl->tree_first;
    free(order), free(proc_of), free(share), free(rss), free(mapped), free(ended);
}

/* A window (sel->proc_since, select.h): each process's points from its
 * snapshot at since (NONE: its start) to its snapshot at until, each
 * counter and stack less its value at the first (rss and mapped as they
 * are): its last point is what top totals over the same window. */
static void window_points(struct timeline *tl, const struct selection *sel)
{
    const struct profile *p = tl->p;
    int64_t *base_live = xmalloc((tl->nstacks + 1) * sizeof *base_live);
    size_t n = 0;
    for (size_t k = 0; k < tl->nprocs; k++) {
        uint32_t from = sel->proc_since[tl->procs[k]], to = sel->proc_snapshot[tl->procs[k]];
        double lo = from == NONE ? -1e300 : p->snapshots[from].time - tl->t0, hi = p->snapshots[to].time - tl->t0;
        int64_t base[NT] = { 0 };
        memset(base_live, 0, (tl->nstacks + 1) * sizeof *base_live);
        for (size_t i = tl->first[k]; from != NONE && i < tl->first[k] + tl->count[k]; i++)
            if (!tl->pts[i].tick && tl->pts[i].seq == p->snapshots[from].seq) {
                memcpy(base, tl->pts[i].v, sizeof base);
                memcpy(base_live, tl->pts[i].stack_live, tl->nstacks * sizeof *base_live);
            }
        size_t first = n;
        for (size_t i = tl->first[k]; i < tl->first[k] + tl->count[k]; i++) {
            struct point pt = tl->pts[i];
            if (pt.t < lo || pt.t > hi) { free(pt.stack_live); continue; }
            for (int c = 0; c < T_RSS; c++) pt.v[c] -= base[c];
            for (size_t s = 0; s < tl->nstacks; s++) pt.stack_live[s] -= base_live[s];
            tl->pts[n++] = pt;
        }
        tl->first[k] = first, tl->count[k] = n - first;
    }
    tl->npts = n;
    free(base_live);
}

/* Each process's peak snapshot (its latest of reason 'peak'): when, and
 * its totals. */
static void peak_points(struct timeline *tl)
{
    const struct profile *p = tl->p;
    for (size_t k = 0; k < tl->nprocs; k++) {
        uint32_t j = timeline_peak_snapshot(p, tl->procs[k]);
        if (j == NONE) continue;
        const struct snapshot *sn = &p->snapshots[j];
        const struct total *tot = snapshot_total(p, j);
        struct point *pt = &tl->peak[k];
        int64_t *stacks = pt->stack_live;
        *pt = (struct point){ sn->time - tl->t0, p->procs[tl->procs[k]].pid, sn->seq, sn->reason, sn->label, 0,
                              { 0 }, stacks };
        for (int c = 0; c < T_RSS; c++) pt->v[c] = tot->c.v[t_counter[c]];
    }
}

void timeline_build(struct timeline *tl, const struct profile *p, const struct selection *sel, size_t nstacks)
{
    const uint32_t *stack_node = tl->stack_node;
    size_t nnodes = tl->nnodes;
    memset(tl, 0, sizeof *tl);
    tl->p = p, tl->stack_node = stack_node, tl->nnodes = nnodes;
    pick_processes(tl, sel);
    if (!tl->nprocs) return;
    tl->t0 = p->procs[tl->procs[0]].start_time;     /* the earliest start: procs are by start */
    tl->peak = xcalloc(tl->nprocs + 1, sizeof *tl->peak);
    pick_stacks(tl, nstacks);
    process_points(tl);
    if (sel->proc_since) window_points(tl, sel);
    tree_points(tl);
    if (!sel->proc_since) peak_points(tl);      /* a window: no peak marks */
}

void timeline_free(struct timeline *tl)
{
    for (size_t i = 0; i < tl->npts; i++) free(tl->pts[i].stack_live);
    for (size_t k = 0; tl->peak && k < tl->nprocs; k++) free(tl->peak[k].stack_live);
    free(tl->pts), free(tl->first), free(tl->count), free(tl->procs), free(tl->stacks), free(tl->peak);
    memset(tl, 0, sizeof *tl);
}

uint32_t timeline_peak_snapshot(const struct profile *p, uint32_t proc)
{
    const struct process *pr = &p->procs[proc];
    uint32_t found = NONE;
    for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++)
        if (p->snapshots[j].peak && snapshot_total(p, j)) found = j;
    return found;
}

int64_t timeline_process_maxlive(const struct profile *p, uint32_t proc)
{
    const struct process *pr = &p->procs[proc];
    int64_t most = -1;
    for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++)
        if (snapshot_total(p, j) && snapshot_total(p, j)->c.v[MAXLIVE] > most) most = snapshot_total(p, j)->c.v[MAXLIVE];
    return most;
}

int64_t timeline_process_peak(const struct profile *p, uint32_t proc, uint32_t *snap)
{
    *snap = timeline_peak_snapshot(p, proc);
    return timeline_process_maxlive(p, proc);
}

int64_t timeline_peak_snapshot_live(const struct profile *p, uint32_t snap)
{
    return snap != NONE && snapshot_total(p, snap) ? snapshot_total(p, snap)->c.v[MEMLIVE] : -1;
}

int timeline_process_line(const struct profile *p, uint32_t proc, char *buf, size_t size)
{
    const struct process *pr = &p->procs[proc];
    if (!pr->nticks) return 0;
    const struct tick *tk = &p->ticks[pr->first_tick], *live = tk, *rss = tk;
    for (uint32_t i = 1; i < pr->nticks; i++) {
        if (tk[i].memlive > live->memlive) live = &tk[i];
        if (tk[i].rss > rss->rss) rss = &tk[i];
    }
    char h1[32], h2[32];
    snprintf(buf, size, "memory over time: %u points, +%.3fs to +%.3fs; highest sampled memlive %s at +%.3fs, "
             "highest sampled RSS %s at +%.3fs",
             pr->nticks, tk->time - pr->start_time, tk[pr->nticks - 1].time - pr->start_time,
             fmt_human(MEMLIVE, live->memlive, h1, sizeof h1), live->time - pr->start_time,
             fmt_human(MEMLIVE, rss->rss, h2, sizeof h2), rss->time - pr->start_time);
    return 1;
}

void timeline_table(const struct timeline *tl, struct table *tab, char (*names)[40], int human)
{
    static const char *const base[] = { "time", "pid", "seq", "reason", "label", "ncalls", "memtot", "memlive",
                                        "maxlive", "rss", "mapped" };
    int with_mapped = tl->p->has_mappings;
    size_t nbase = sizeof base / sizeof *base - !with_mapped;
    const char **cols = xmalloc((nbase + tl->nstacks) * sizeof *cols);
    memcpy(cols, base, nbase * sizeof *base);
    for (size_t s = 0; s < tl->nstacks; s++) {
        snprintf(names[s], sizeof names[s], "stack_%lld", (long long)tl->p->stacks[tl->stacks[s]].id);
        cols[nbase + s] = names[s];
    }
    table_init(tab, nbase + tl->nstacks, cols);
    free(cols);
    for (size_t i = 0; i < tl->npts; i++) {
        const struct point *pt = &tl->pts[i];
        int snapshot = pt->pid && !pt->tick;
        table_num(tab, pt->t, 3);
        table_int(tab, pt->pid);
        if (snapshot) table_int(tab, pt->seq); else table_null(tab);
        if (pt->pid) table_str(tab, pt->reason); else table_null(tab);
        if (snapshot) table_str(tab, pt->label); else table_null(tab);
        table_counter(tab, NCALLS, pt->v[T_NCALLS], human), table_counter(tab, MEMTOT, pt->v[T_MEMTOT], human);
        table_counter(tab, MEMLIVE, pt->v[T_MEMLIVE], human);
        if (snapshot) table_counter(tab, MAXLIVE, pt->v[T_MAXLIVE], human); else table_null(tab);
        if (pt->v[T_RSS]) table_counter(tab, MEMLIVE, pt->v[T_RSS], human); else table_null(tab);
        if (with_mapped && (pt->v[T_RSS] || pt->v[T_MAPPED])) table_counter(tab, MAPPED, pt->v[T_MAPPED], human);
        else if (with_mapped) table_null(tab);
        for (size_t s = 0; s < tl->nstacks; s++)
            if (pt->tick) table_null(tab); else table_counter(tab, MEMLIVE, pt->stack_live[s], human);
    }
}

