/* Memory over time from the snapshots and ticks, for timeline and
 * report. Per process, its totals at each of its snapshots (peak
 * snapshots aside) and ticks (the points the recorder takes every few
 * milliseconds, format version 4), in time order; for the whole tree, at
 * each moment a process has a point, the sum of the processes' latest (a
 * process that has ended holds no live bytes any more, its calls and
 * bytes stay counted); the N stacks whose live bytes grew most over the
 * run (from nothing at its start to what the processes held at their
 * last snapshots), as more series. The plot: three panels (live bytes,
 * bytes allocated, calls) over the time from the first process's start,
 * the highest live bytes marked. */
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

/* The n stacks whose live bytes grew most over the run: from nothing at
 * its start to what each process still held at its last snapshot, summed
 * (only > 0). */
static void pick_stacks(struct timeline *tl, size_t n)
{
    const struct profile *p = tl->p;
    int64_t *growth = xcalloc(p->nstacks ? p->nstacks : 1, sizeof *growth);
    int64_t *last = xmalloc((p->nprocs ? p->nprocs : 1) * sizeof *last);
    for (size_t i = 0; i < p->nprocs; i++) last[i] = -1;
    for (size_t k = 0; k < tl->nprocs; k++) {
        const struct process *pr = &p->procs[tl->procs[k]];
        for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++)
            if (!p->snapshots[j].peak) last[tl->procs[k]] = p->snapshots[j].id;
    }
    struct idmap at;                    /* (thread, stack) → its newest row at or before the last snapshot */
    idmap_init(&at, 1024);
    for (size_t r = 0; r < p->nsamples; r++) {
        const struct sample *sa = &p->samples[r];
        const struct snapshot *sn = &p->snapshots[sa->snapshot];
        if (last[sn->process] < 0 || sn->peak || sn->id > last[sn->process]) continue;
        int created;
        uint32_t *v = idmap_put(&at, (uint64_t)sa->thread << 32 | sa->stack, &created);
        if (created || p->snapshots[p->samples[*v].snapshot].id < sn->id) *v = (uint32_t)r;
    }
    for (size_t i = 0; i < at.cap; i++)
        if (at.vals[i] != NONE)
            growth[p->samples[at.vals[i]].stack] = sat_add(growth[p->samples[at.vals[i]].stack], p->samples[at.vals[i]].c.v[MEMLIVE]);
    idmap_free(&at);
    free(last);
    tl->stacks = xmalloc((n ? n : 1) * sizeof *tl->stacks);
    for (size_t k = 0; k < n; k++) {
        uint32_t best = NONE;
        for (uint32_t s = 0; s < p->nstacks; s++)
            if (growth[s] > 0 && (best == NONE || growth[s] > growth[best])) best = s;
        if (best == NONE) break;
        tl->stacks[tl->nstacks++] = best;
        growth[best] = 0;
    }
    free(growth);
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
        int created;
        uint32_t *v = idmap_put(last, (uint64_t)sa->thread << 32 | (uint32_t)chosen[sa->stack], &created);
        cur[chosen[sa->stack]] = sat_add(cur[chosen[sa->stack]], sa->c.v[MEMLIVE] - (created ? 0 : p->samples[*v].c.v[MEMLIVE]));
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
    int32_t *chosen = xmalloc((p->nstacks ? p->nstacks : 1) * sizeof *chosen);
    for (size_t s = 0; s < p->nstacks; s++) chosen[s] = -1;
    for (size_t k = 0; k < tl->nstacks; k++) chosen[tl->stacks[k]] = (int32_t)k;
    tl->first = xcalloc(tl->nprocs + 1, sizeof *tl->first);
    tl->count = xcalloc(tl->nprocs + 1, sizeof *tl->count);
    tl->pts = xcalloc((p->nsnapshots + p->nticks) * 2 + 1, sizeof *tl->pts);
    uint32_t *rows = xmalloc((p->nsamples ? p->nsamples : 1) * sizeof *rows);
    size_t nrows = 0;
    for (size_t r = 0; tl->nstacks && r < p->nsamples; r++)
        if (chosen[p->samples[r].stack] >= 0) rows[nrows++] = (uint32_t)r;
    for (size_t k = 0; k < tl->nprocs; k++) {
        const struct process *pr = &p->procs[tl->procs[k]];
        tl->first[k] = tl->npts;
        int64_t *cur = xcalloc(tl->nstacks + 1, sizeof *cur);
        struct idmap last;                  /* (thread, k) → the row last seen */
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

/* Each process's peak snapshot (its latest of reason 'peak'): when, and
 * its totals. */
static void peak_points(struct timeline *tl)
{
    const struct profile *p = tl->p;
    tl->peak = xcalloc(tl->nprocs + 1, sizeof *tl->peak);
    for (size_t k = 0; k < tl->nprocs; k++) {
        const struct process *pr = &p->procs[tl->procs[k]];
        for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++) {
            const struct snapshot *sn = &p->snapshots[j];
            const struct total *tot = snapshot_total(p, j);
            if (!sn->peak || !tot) continue;
            struct point *pt = &tl->peak[k];
            *pt = (struct point){ sn->time - tl->t0, pr->pid, sn->seq, sn->reason, sn->label, 0, { 0 }, NULL };
            for (int c = 0; c < T_RSS; c++) pt->v[c] = tot->c.v[t_counter[c]];
        }
    }
}

void timeline_build(struct timeline *tl, const struct profile *p, const struct selection *sel, size_t nstacks)
{
    memset(tl, 0, sizeof *tl);
    tl->p = p;
    pick_processes(tl, sel);
    if (!tl->nprocs) return;
    tl->t0 = p->procs[tl->procs[0]].start_time;     /* the earliest start: procs are by start */
    pick_stacks(tl, nstacks);
    process_points(tl);
    tree_points(tl);
    peak_points(tl);
}

void timeline_free(struct timeline *tl)
{
    for (size_t i = 0; i < tl->npts; i++) free(tl->pts[i].stack_live);
    free(tl->pts), free(tl->first), free(tl->count), free(tl->procs), free(tl->stacks), free(tl->peak);
    memset(tl, 0, sizeof *tl);
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
    snprintf(buf, size, "memory over time: %u points, +%.3fs to +%.3fs; peak memlive %s at +%.3fs, peak RSS %s at +%.3fs",
             pr->nticks, tk->time - pr->start_time, tk[pr->nticks - 1].time - pr->start_time,
             fmt_human(MEMLIVE, live->memlive, h1, sizeof h1), live->time - pr->start_time,
             fmt_human(MEMLIVE, rss->rss, h2, sizeof h2), rss->time - pr->start_time);
    return 1;
}

/* "#ID leaf": a stack's series name, the leaf's function as stored. */
static void stack_label(const struct profile *p, uint32_t s, char *buf, size_t n)
{
    const struct frame *f = &p->frames[p->stacks[s].frame];
    const char *name = f->function != NONE ? p->functions[f->function] : p->modules[f->module].path;
    snprintf(buf, n, "#%lld %s", (long long)p->stacks[s].id, name);
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

/* ---------------------------------------------------------------- svg */

#define PLOT_W 640                              /* the panels' width */
#define PANEL_H 220
#define MARGIN_L 90
#define PLOT_R (MARGIN_L + PLOT_W)              /* their right edge; the legend right of it */
#define LEGEND_CHARS 90                         /* a longer name is shortened in the legend (its tooltip has it) */
#define CHAR_W 7                                /* the widest mean character width at font-size 12 */
#define MARGIN_T 40

/* A "nice" axis maximum: 1, 2 or 5 times a power of the unit's base. */
static double nice_max(double v, double base)
{
    if (v <= 0) return 1;
    double m = 1;
    while (m * base <= v) m *= base;
    while (m > v && m > 1) m /= base;
    static const double steps[] = { 1, 2, 5, 10 };
    for (double unit = m;; unit *= 10)
        for (int i = 0; i < 4; i++) if (unit * steps[i] >= v) return unit * steps[i];
}

#define TREE_DOTS 400      /* the most moments of the tree that get a dot each */

static const char *const palette[] = { "#1f5fa8", "#c0392b", "#27864a", "#8e44ad", "#d35400", "#16a085",
                                       "#7f6000", "#b03a6e", "#2c3e50", "#6d8a00" };

/* A line: a process's points, or the tree's (tree_points), of a counter
 * or of a stack's live bytes (stack >= 0: dashed). */
struct series { const char *name; int stack; size_t proc; int tree_points; const char *color; };

static void svg_series(FILE *f, const struct timeline *tl, const struct series *se, int c, double tmax, double vmax,
                       double y0)
{
    size_t from = se->tree_points ? tl->tree_first : tl->first[se->proc];
    size_t n = se->tree_points ? tl->ntree : tl->count[se->proc];
    const char *stroke = se->color;
    fprintf(f, "<g class=\"series\"><title>");
    xml_write(f, se->name);
    fprintf(f, "</title><polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"", stroke,
            se->tree_points && se->stack < 0 ? "2.5" : "1.5", se->stack >= 0 ? " stroke-dasharray=\"6 3\"" : "");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const struct point *pt = &tl->pts[from + i];
        if (se->stack >= 0 && pt->tick) continue;       /* a stack's values are the snapshots' */
        double v = se->stack >= 0 ? (double)pt->stack_live[se->stack] : (double)pt->v[c];
        fprintf(f, "%s%.1f,%.1f", first ? "" : " ", MARGIN_L + pt->t / tmax * PLOT_W,
                y0 + PANEL_H - v / vmax * PANEL_H);
        first = 0;
    }
    fprintf(f, "\"/>");
    /* a dot with its tooltip at each snapshot (ticks are the line), and at
     * each of the tree's moments unless they are too many */
    for (size_t i = 0; i < n; i++) {
        const struct point *pt = &tl->pts[from + i];
        if (pt->tick || (!pt->pid && n > TREE_DOTS)) continue;
        int64_t v = se->stack >= 0 ? pt->stack_live[se->stack] : pt->v[c];
        char human[32];
        fmt_human(se->stack >= 0 ? MEMLIVE : t_counter[c], v, human, sizeof human);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>", MARGIN_L + pt->t / tmax * PLOT_W,
                y0 + PANEL_H - (double)v / vmax * PANEL_H, stroke);
        xml_write(f, se->name);
        fprintf(f, " at %.3f s: %s (%lld)", pt->t, human, (long long)v);
        if (pt->pid && *pt->reason) {
            fprintf(f, ", snapshot %lld (", (long long)pt->seq);
            xml_write(f, pt->reason);
            if (*pt->label) fputc(' ', f), xml_write(f, pt->label);
            fputc(')', f);
        }
        fprintf(f, "</title></circle>");
    }
    fprintf(f, "</g>\n");
}

/* Each process's peak on the live bytes panel: a diamond in its line's
 * colour (se[1 + k] is process k's series). */
static void svg_peaks(FILE *f, const struct timeline *tl, const struct series *se, double tmax, double vmax,
                      double y0)
{
    for (size_t k = 0; k < tl->nprocs; k++) {
        const struct point *pt = &tl->peak[k];
        if (!pt->seq) continue;
        double x = MARGIN_L + pt->t / tmax * PLOT_W;
        double y = y0 + PANEL_H - (double)pt->v[T_MEMLIVE] / vmax * PANEL_H;
        char human[32];
        fprintf(f, "<polygon class=\"peak\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\""
                   " stroke=\"#000\" stroke-width=\"0.8\"><title>", x, y - 6, x + 5, y, x, y + 6, x - 5, y,
                se[1 + k].color);
        xml_write(f, se[1 + k].name);
        fprintf(f, ": peak at %.3f s: %s (%lld), snapshot %lld (peak)</title></polygon>\n", pt->t,
                fmt_human(MEMLIVE, pt->v[T_MEMLIVE], human, sizeof human), (long long)pt->v[T_MEMLIVE],
                (long long)pt->seq);
    }
}

/* The peak the plot marks: the whole tree's highest live bytes, or a
 * single process's peak snapshot when that is higher (it is exact, the
 * points are taken every few milliseconds); NULL without live bytes. */
static const struct point *the_peak(const struct timeline *tl)
{
    const struct point *best = NULL;
    for (size_t i = tl->tree_first; i < tl->tree_first + tl->ntree; i++)
        if (!best || tl->pts[i].v[T_MEMLIVE] > best->v[T_MEMLIVE]) best = &tl->pts[i];
    if (tl->nprocs == 1 && tl->peak[0].seq && (!best || tl->peak[0].v[T_MEMLIVE] > best->v[T_MEMLIVE]))
        best = &tl->peak[0];
    return best && best->v[T_MEMLIVE] > 0 ? best : NULL;
}

/* The peak on the live bytes panel: a ring and "peak 3.81 MiB at 1.234 s"
 * beside it (on its left in the right half of the panel). */
static void svg_peak_mark(FILE *f, const struct point *pt, double tmax, double vmax, double y0)
{
    char human[32], text[96];
    double x = MARGIN_L + pt->t / tmax * PLOT_W, y = y0 + PANEL_H - (double)pt->v[T_MEMLIVE] / vmax * PANEL_H;
    snprintf(text, sizeof text, "peak %s at %.3f s", fmt_human(MEMLIVE, pt->v[T_MEMLIVE], human, sizeof human), pt->t);
    int left = x > MARGIN_L + PLOT_W / 2;
    fprintf(f, "<g class=\"peakmark\"><title>%s (%lld bytes)</title><circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"none\""
               " stroke=\"#d00\" stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"#d00\""
               " font-weight=\"bold\">%s</text></g>\n", text, (long long)pt->v[T_MEMLIVE], x, y, left ? x - 10 : x + 10,
            y < y0 + 14 ? y + 16 : y - 8, left ? "end" : "start", text);
}

/* One panel: counter c of every series (stacks: on the live bytes panel
 * only), its axes scaled to the largest value shown. */
static void svg_panel(FILE *f, const struct timeline *tl, const struct timeline_svg *o, const struct series *se,
                      size_t ns, int k, double tmax)
{
    static const int panels[] = { T_MEMLIVE, T_MEMTOT, T_NCALLS };
    static const char *const titles[] = { "live bytes (memlive)", "bytes allocated (memtot)", "allocations (ncalls)" };
    int c = panels[k];
    double y0 = MARGIN_T + k * (PANEL_H + 60) + 20, vmax = 0;
    for (size_t i = 0; i < tl->npts; i++) {
        if ((double)tl->pts[i].v[c] > vmax) vmax = (double)tl->pts[i].v[c];
        for (size_t s = 0; c == T_MEMLIVE && s < tl->nstacks; s++)
            if ((double)tl->pts[i].stack_live[s] > vmax) vmax = (double)tl->pts[i].stack_live[s];
    }
    for (size_t i = 0; o->peaks && c == T_MEMLIVE && i < tl->nprocs; i++)
        if (tl->peak[i].seq && (double)tl->peak[i].v[c] > vmax) vmax = (double)tl->peak[i].v[c];
    const struct point *peak = c == T_MEMLIVE ? the_peak(tl) : NULL;
    if (peak && (double)peak->v[c] > vmax) vmax = (double)peak->v[c];
    vmax = nice_max(vmax, c == T_NCALLS ? 1000 : 1024);
    fprintf(f, "<g class=\"panel\"><text x=\"%d\" y=\"%.0f\" font-weight=\"bold\">%s</text>\n", MARGIN_L, y0 - 6, titles[k]);
    fprintf(f, "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", MARGIN_L, y0,
            PLOT_W, PANEL_H);
    for (int g = 0; g <= 4; g++) {
        char human[32];
        double y = y0 + PANEL_H - g * PANEL_H / 4.0;
        fmt_human(t_counter[c], (int64_t)(vmax * g / 4), human, sizeof human);
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                MARGIN_L, PLOT_R, y, y, MARGIN_L - 6, y + 4, human);
    }
    int decimals = tmax < 0.05 ? 4 : tmax < 0.5 ? 3 : 2;   /* ticks a fifth of tmax apart, all different */
    for (int g = 0; g <= 5; g++)
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.*f s</text>\n",
                MARGIN_L + g / 5.0 * PLOT_W, y0 + PANEL_H + 16, decimals, tmax * g / 5);
    for (size_t i = 0; i < ns; i++)
        if (se[i].stack < 0 || c == T_MEMLIVE) svg_series(f, tl, &se[i], c, tmax, vmax, y0);
    if (o->peaks && c == T_MEMLIVE) svg_peaks(f, tl, se, tmax, vmax, y0);
    if (peak) svg_peak_mark(f, peak, tmax, vmax, y0);
    fprintf(f, "</g>\n");
}

static int any_peak(const struct timeline *tl)
{
    for (size_t k = 0; k < tl->nprocs; k++)
        if (tl->peak[k].seq) return 1;
    return 0;
}

/* Characters of a UTF-8 name (continuation bytes aside). */
static size_t name_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* A series' name in the legend: whole up to LEGEND_CHARS characters,
 * else cut there with "…" (the tooltip has it whole). */
static void legend_name(FILE *f, const char *name)
{
    if (name_chars(name) <= LEGEND_CHARS) {
        xml_write(f, name);
    } else {
        char cut[4 * LEGEND_CHARS + 4];
        size_t n = 0, b = 0;
        for (; name[b] && b < sizeof cut - 4; b++) {
            if (((unsigned char)name[b] & 0xc0) != 0x80 && ++n == LEGEND_CHARS) break;
            cut[b] = name[b];
        }
        memcpy(cut + b, "\xe2\x80\xa6", 4);     /* "…" and the NUL */
        xml_write(f, cut);
    }
    fputs("<title>", f);
    xml_write(f, name);
    fputs("</title>", f);
}

/* The legend's width: the plot's and its longest name's, at least 230. */
static int legend_width(const struct series *se, size_t ns)
{
    size_t most = 0;
    for (size_t i = 0; i < ns; i++) {
        size_t n = name_chars(se[i].name);
        if (n > most) most = n;
    }
    if (most > LEGEND_CHARS) most = LEGEND_CHARS + 1;
    int w = 42 + CHAR_W * (int)most + 12;
    return w > 230 ? w : 230;
}

static void svg_legend(FILE *f, const struct timeline *tl, const struct timeline_svg *o, const struct series *se,
                       size_t ns)
{
    for (size_t i = 0; i < ns; i++) {
        double y = MARGIN_T + 30 + i * 18.0;
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"2\"%s/>"
                   "<text x=\"%d\" y=\"%.0f\">", PLOT_R + 12, PLOT_R + 36, y, y, se[i].color,
                se[i].stack >= 0 ? " stroke-dasharray=\"6 3\"" : "", PLOT_R + 42, y + 4);
        legend_name(f, se[i].name);
        fprintf(f, "</text>\n");
    }
    if (o->peaks && any_peak(tl)) {
        double x = PLOT_R + 24, y = MARGIN_T + 30 + ns * 18.0;
        fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#fff\" stroke=\"#000\""
                   " stroke-width=\"0.8\"/><text x=\"%d\" y=\"%.0f\">a process's peak</text>\n",
                x, y - 6, x + 5, y, x, y + 6, x - 5, y, PLOT_R + 42, y + 4);
    }
}

void timeline_svg(FILE *f, const struct timeline *tl, const struct timeline_svg *o)
{
    const struct profile *p = tl->p;
    size_t nseries = tl->nprocs + 1 + tl->nstacks;
    struct series *se = xcalloc(nseries, sizeof *se);
    char (*names)[160] = xcalloc(nseries, sizeof *names);
    size_t ns = 0;
    se[ns++] = (struct series){ "whole tree", -1, 0, 1, "#000" };
    for (size_t k = 0; k < tl->nprocs; k++) {
        const struct process *pr = &p->procs[tl->procs[k]];
        const char *base = strrchr(pr->exe, '/');
        snprintf(names[ns], sizeof names[ns], "%lld %s", (long long)pr->pid, base ? base + 1 : pr->exe);
        se[ns] = (struct series){ names[ns], -1, k, 0, palette[ns % 10] };
        ns++;
    }
    for (size_t s = 0; s < tl->nstacks; s++) {
        if (o->stack_names)
            snprintf(names[ns], sizeof names[ns], "#%lld %s", (long long)p->stacks[tl->stacks[s]].id, o->stack_names[s]);
        else
            stack_label(p, tl->stacks[s], names[ns], sizeof names[ns]);
        se[ns] = (struct series){ names[ns], (int)s, 0, 1, palette[ns % 10] };
        ns++;
    }
    double tmax = 0;
    for (size_t i = 0; i < tl->npts; i++) if (tl->pts[i].t > tmax) tmax = tl->pts[i].t;
    for (size_t k = 0; o->peaks && k < tl->nprocs; k++) if (tl->peak[k].seq && tl->peak[k].t > tmax) tmax = tl->peak[k].t;
    tmax = tmax > 0 ? tmax * 1.02 : 1;
    /* the legend whole: as wide as its longest name, as tall as its lines */
    int width = PLOT_R + legend_width(se, ns), height = MARGIN_T + 3 * (PANEL_H + 60);
    if (MARGIN_T + 30 + (int)(ns + 2) * 18 > height) height = MARGIN_T + 30 + (int)(ns + 2) * 18;
    if (!o->in_page) fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f, "<svg%s width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n<text x=\"%d\" y=\"24\" font-size=\"16\">",
            o->in_page ? " class=\"timeline\"" : " xmlns=\"http://www.w3.org/2000/svg\"", width, height, width, height,
            MARGIN_L);
    xml_write(f, p->path);
    fprintf(f, ": memory over time</text>\n");
    for (int k = 0; k < 3; k++) svg_panel(f, tl, o, se, ns, k, tmax);
    svg_legend(f, tl, o, se, ns);
    fprintf(f, "</svg>\n");
    free(names);
    free(se);
}
