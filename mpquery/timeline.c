/* Memory over time from the snapshots, for timeline and report. Per
 * process, its totals at each of its snapshots (peak snapshots aside);
 * for the whole tree, at each moment a snapshot was taken, the sum of the
 * processes' latest totals (a process that has ended holds no live bytes
 * any more, its calls and bytes stay counted); the N stacks whose live
 * bytes grew most over the run (from nothing at its start to what the
 * processes held at their last snapshots), as more series. The plot: three
 * panels (live bytes, bytes allocated, calls) over the time from the
 * run's start. */
#include "procs.h"
#include "timeline.h"
#include "output.h"
#include "select.h"

#include <stdlib.h>
#include <string.h>

static const int t_counter[NT] = { NCALLS, MEMTOT, MEMLIVE, MAXLIVE };

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

/* Each process's points (its snapshots, peaks aside), with the chosen
 * stacks' live bytes: its rows of those stacks swept in snapshot order,
 * the latest value of each (stack, thread) kept. */
static void process_points(struct timeline *tl)
{
    const struct profile *p = tl->p;
    double t0 = tl->t0;
    int32_t *chosen = xmalloc((p->nstacks ? p->nstacks : 1) * sizeof *chosen);
    for (size_t s = 0; s < p->nstacks; s++) chosen[s] = -1;
    for (size_t k = 0; k < tl->nstacks; k++) chosen[tl->stacks[k]] = (int32_t)k;
    tl->first = xcalloc(tl->nprocs + 1, sizeof *tl->first);
    tl->count = xcalloc(tl->nprocs + 1, sizeof *tl->count);
    tl->pts = xcalloc(p->nsnapshots * 2 + 1, sizeof *tl->pts);
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
        for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++) {
            const struct snapshot *sn = &p->snapshots[j];
            if (sn->peak) continue;
            for (size_t i = 0; i < nrows; i++) {
                const struct sample *sa = &p->samples[rows[i]];
                if (sa->snapshot != j) continue;
                int created;
                uint32_t *v = idmap_put(&last, (uint64_t)sa->thread << 32 | (uint32_t)chosen[sa->stack], &created);
                cur[chosen[sa->stack]] = sat_add(cur[chosen[sa->stack]], sa->c.v[MEMLIVE] - (created ? 0 : p->samples[*v].c.v[MEMLIVE]));
                *v = rows[i];
            }
            struct point *pt = &tl->pts[tl->npts++];
            const struct total *tot = snapshot_total(p, j);
            *pt = (struct point){ sn->time - t0, pr->pid, sn->seq, sn->reason, sn->label, { 0 }, NULL };
            for (int c = 0; c < NT; c++) pt->v[c] = tot ? tot->c.v[t_counter[c]] : 0;
            pt->stack_live = xmalloc((tl->nstacks + 1) * sizeof *pt->stack_live);
            memcpy(pt->stack_live, cur, tl->nstacks * sizeof *cur);
        }
        tl->count[k] = tl->npts - tl->first[k];
        idmap_free(&last);
        free(cur);
    }
    free(rows);
    free(chosen);
}

static int by_time(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The tree's points: at each moment a snapshot was taken, every process's
 * latest point at or before it; a process past its last point holds no
 * live bytes (its calls and bytes stay). */
static void tree_points(struct timeline *tl)
{
    size_t n = tl->npts;
    double *times = xmalloc((n ? n : 1) * sizeof *times);
    for (size_t i = 0; i < n; i++) times[i] = tl->pts[i].t;
    qsort(times, n, sizeof *times, by_time);
    tl->tree_first = tl->npts;
    for (size_t i = 0; i < n; i++) {
        if (i && times[i] == times[i - 1]) continue;
        struct point *pt = &tl->pts[tl->npts++];
        *pt = (struct point){ times[i], 0, 0, "", "", { 0 }, xcalloc(tl->nstacks + 1, sizeof *pt->stack_live) };
        for (size_t k = 0; k < tl->nprocs; k++) {
            const struct point *latest = NULL;
            for (size_t q = tl->first[k]; q < tl->first[k] + tl->count[k] && tl->pts[q].t <= times[i]; q++) latest = &tl->pts[q];
            if (!latest) continue;
            int ended = latest == &tl->pts[tl->first[k] + tl->count[k] - 1] && latest->t < times[i];
            for (int c = 0; c < NT; c++) pt->v[c] = sat_add(pt->v[c], (ended && (c == T_MEMLIVE)) ? 0 : latest->v[c]);
            for (size_t s = 0; s < tl->nstacks && !ended; s++) pt->stack_live[s] = sat_add(pt->stack_live[s], latest->stack_live[s]);
        }
        pt->v[T_MAXLIVE] = 0;   /* a sum of peaks at different times means nothing */
    }
    tl->ntree = tl->npts - tl->tree_first;
    free(times);
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
            *pt = (struct point){ sn->time - tl->t0, pr->pid, sn->seq, sn->reason, sn->label, { 0 }, NULL };
            for (int c = 0; c < NT; c++) pt->v[c] = tot->c.v[t_counter[c]];
        }
    }
}

void timeline_build(struct timeline *tl, const struct profile *p, const struct selection *sel, size_t nstacks,
                    int from_start)
{
    memset(tl, 0, sizeof *tl);
    tl->p = p;
    pick_processes(tl, sel);
    if (!tl->nprocs) return;
    const struct process *first = &p->procs[tl->procs[0]];
    tl->t0 = p->nruns ? p->runs[first->run].start_time : 0;
    if (from_start && first->start_time < tl->t0) tl->t0 = first->start_time;
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

/* "#ID leaf": a stack's series name, the leaf's function as stored. */
static void stack_label(const struct profile *p, uint32_t s, char *buf, size_t n)
{
    const struct frame *f = &p->frames[p->stacks[s].frame];
    const char *name = f->function != NONE ? p->functions[f->function] : p->modules[f->module].path;
    snprintf(buf, n, "#%lld %s", (long long)p->stacks[s].id, name);
}

void timeline_table(const struct timeline *tl, struct table *tab, char (*names)[40])
{
    static const char *const base[] = { "time", "pid", "seq", "reason", "label", "ncalls", "memtot", "memlive", "maxlive" };
    const char **cols = xmalloc((9 + tl->nstacks) * sizeof *cols);
    memcpy(cols, base, sizeof base);
    for (size_t s = 0; s < tl->nstacks; s++) {
        snprintf(names[s], sizeof names[s], "stack_%lld", (long long)tl->p->stacks[tl->stacks[s]].id);
        cols[9 + s] = names[s];
    }
    table_init(tab, 9 + tl->nstacks, cols);
    free(cols);
    for (size_t i = 0; i < tl->npts; i++) {
        const struct point *pt = &tl->pts[i];
        table_num(tab, pt->t, 3);
        table_int(tab, pt->pid);
        if (pt->pid) table_int(tab, pt->seq), table_str(tab, pt->reason), table_str(tab, pt->label);
        else table_null(tab), table_null(tab), table_null(tab);
        table_int(tab, pt->v[T_NCALLS]), table_int(tab, pt->v[T_MEMTOT]), table_int(tab, pt->v[T_MEMLIVE]);
        if (pt->pid) table_int(tab, pt->v[T_MAXLIVE]);
        else table_null(tab);
        for (size_t s = 0; s < tl->nstacks; s++) table_int(tab, pt->stack_live[s]);
    }
}

/* ---------------------------------------------------------------- svg */

#define SVG_W 960
#define PANEL_H 220
#define MARGIN_L 90
#define MARGIN_R 230
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
    for (size_t i = 0; i < n; i++) {
        const struct point *pt = &tl->pts[from + i];
        double v = se->stack >= 0 ? (double)pt->stack_live[se->stack] : (double)pt->v[c];
        fprintf(f, "%s%.1f,%.1f", i ? " " : "", MARGIN_L + pt->t / tmax * (SVG_W - MARGIN_L - MARGIN_R),
                y0 + PANEL_H - v / vmax * PANEL_H);
    }
    fprintf(f, "\"/>");
    for (size_t i = 0; i < n; i++) {
        const struct point *pt = &tl->pts[from + i];
        int64_t v = se->stack >= 0 ? pt->stack_live[se->stack] : pt->v[c];
        char human[32];
        fmt_human(se->stack >= 0 ? MEMLIVE : t_counter[c], v, human, sizeof human);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>", MARGIN_L + pt->t / tmax * (SVG_W - MARGIN_L - MARGIN_R),
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
        double x = MARGIN_L + pt->t / tmax * (SVG_W - MARGIN_L - MARGIN_R);
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
    vmax = nice_max(vmax, c == T_NCALLS ? 1000 : 1024);
    fprintf(f, "<g class=\"panel\"><text x=\"%d\" y=\"%.0f\" font-weight=\"bold\">%s</text>\n", MARGIN_L, y0 - 6, titles[k]);
    fprintf(f, "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", MARGIN_L, y0,
            SVG_W - MARGIN_L - MARGIN_R, PANEL_H);
    for (int g = 0; g <= 4; g++) {
        char human[32];
        double y = y0 + PANEL_H - g * PANEL_H / 4.0;
        fmt_human(t_counter[c], (int64_t)(vmax * g / 4), human, sizeof human);
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                MARGIN_L, SVG_W - MARGIN_R, y, y, MARGIN_L - 6, y + 4, human);
    }
    int decimals = tmax < 0.05 ? 4 : tmax < 0.5 ? 3 : 2;   /* ticks a fifth of tmax apart, all different */
    for (int g = 0; g <= 5; g++)
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.*f s</text>\n",
                MARGIN_L + g / 5.0 * (SVG_W - MARGIN_L - MARGIN_R), y0 + PANEL_H + 16, decimals, tmax * g / 5);
    for (size_t i = 0; i < ns; i++)
        if (se[i].stack < 0 || c == T_MEMLIVE) svg_series(f, tl, &se[i], c, tmax, vmax, y0);
    if (o->peaks && c == T_MEMLIVE) svg_peaks(f, tl, se, tmax, vmax, y0);
    fprintf(f, "</g>\n");
}

static int any_peak(const struct timeline *tl)
{
    for (size_t k = 0; k < tl->nprocs; k++)
        if (tl->peak[k].seq) return 1;
    return 0;
}

static void svg_legend(FILE *f, const struct timeline *tl, const struct timeline_svg *o, const struct series *se,
                       size_t ns)
{
    for (size_t i = 0; i < ns; i++) {
        double y = MARGIN_T + 30 + i * 18.0;
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"2\"%s/>"
                   "<text x=\"%d\" y=\"%.0f\">", SVG_W - MARGIN_R + 12, SVG_W - MARGIN_R + 36, y, y, se[i].color,
                se[i].stack >= 0 ? " stroke-dasharray=\"6 3\"" : "", SVG_W - MARGIN_R + 42, y + 4);
        xml_write(f, se[i].name);
        fprintf(f, "</text>\n");
    }
    if (o->peaks && any_peak(tl)) {
        double x = SVG_W - MARGIN_R + 24, y = MARGIN_T + 30 + ns * 18.0;
        fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#fff\" stroke=\"#000\""
                   " stroke-width=\"0.8\"/><text x=\"%d\" y=\"%.0f\">a process's peak</text>\n",
                x, y - 6, x + 5, y, x, y + 6, x - 5, y, SVG_W - MARGIN_R + 42, y + 4);
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
    int height = MARGIN_T + 3 * (PANEL_H + 60);
    if (!o->in_page) fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f, "<svg%s width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n<text x=\"%d\" y=\"24\" font-size=\"16\">",
            o->in_page ? " class=\"timeline\"" : " xmlns=\"http://www.w3.org/2000/svg\"", SVG_W, height, SVG_W, height,
            MARGIN_L);
    xml_write(f, p->path);
    fprintf(f, ": memory over time</text>\n");
    for (int k = 0; k < 3; k++) svg_panel(f, tl, o, se, ns, k, tmax);
    svg_legend(f, tl, o, se, ns);
    fprintf(f, "</svg>\n");
    free(names);
    free(se);
}
