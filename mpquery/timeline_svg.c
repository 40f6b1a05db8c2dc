/* The timeline's SVG plot (timeline.c builds the timeline): four panels
 * over the time from the first process's start, live bytes, resident
 * bytes (RSS: the ticks', a panel only when some point has it), bytes
 * allocated and calls; a line a process, the whole tree's, the chosen
 * stacks' (dashed, on the live bytes panel, through each process's peak
 * snapshot); each process's peak snapshot a diamond, the mark "peak" (a
 * single process's peak snapshot) or "highest sampled" (the tree's
 * highest point) in red. Every name is escaped (xml_write). */
#include "timeline.h"
#include "output.h"

#include <stdlib.h>
#include <string.h>

static const int t_counter[NT] = { NCALLS, MEMTOT, MEMLIVE, MAXLIVE, MEMLIVE };   /* RSS: a size, as memlive */

/* "#ID leaf": a stack's series name, the leaf's function as stored. */
static void stack_label(const struct profile *p, uint32_t s, char *buf, size_t n)
{
    const struct frame *f = &p->frames[p->stacks[s].frame];
    const char *name = f->function != NONE ? p->functions[f->function] : p->modules[f->module].path;
    snprintf(buf, n, "#%lld %s", (long long)p->stacks[s].id, name);
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

/* A vertex of a line: its time, value and, for a tooltip, its point. */
struct vertex { double t; int64_t v; const struct point *pt; size_t peak_of; };

static int by_vertex_time(const void *a, const void *b)
{
    const struct vertex *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/* Stack s's live bytes at a point, or the point's live bytes (s < 0). */
static int64_t live_of(const struct point *pt, int s)
{
    return s >= 0 ? pt->stack_live[s] : pt->v[T_MEMLIVE];
}

/* The tree's line at process k's peak snapshot, of stack s's live bytes
 * or all of them (s < 0): the tree's value at its latest moment before,
 * process k's share then replaced by its value at the peak (a stack's
 * share is the process's latest snapshot's: its ticks hold no stacks). */
static int64_t tree_at_peak(const struct timeline *tl, int s, size_t k)
{
    const struct point *pk = &tl->peak[k];
    int64_t tree = 0, own = 0;
    for (size_t i = tl->tree_first; i < tl->tree_first + tl->ntree && tl->pts[i].t <= pk->t; i++)
        tree = live_of(&tl->pts[i], s);
    for (size_t i = tl->first[k]; i < tl->first[k] + tl->count[k] && tl->pts[i].t <= pk->t; i++)
        if (s < 0 || !tl->pts[i].tick) own = live_of(&tl->pts[i], s);
    return tree - own + live_of(pk, s);
}

/* A line's vertices in time order: a process's points or the tree's, of
 * counter c (RSS: where known) or of a stack's live bytes (the
 * snapshots'); the live bytes through each process's peak snapshot too
 * (its own line, the tree's, the stacks'), so that no line passes below
 * the peak it marks; malloc'd, how many. */
static size_t vertices(const struct timeline *tl, const struct series *se, int c, struct vertex **out)
{
    size_t from = se->tree_points ? tl->tree_first : tl->first[se->proc];
    size_t n = se->tree_points ? tl->ntree : tl->count[se->proc], m = 0;
    struct vertex *v = xmalloc((n + tl->nprocs + 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        const struct point *pt = &tl->pts[from + i];
        if (se->stack >= 0 && pt->tick) continue;       /* a stack's values are the snapshots' */
        if (c == T_RSS && !pt->v[T_RSS]) continue;      /* not measured then */
        v[m++] = (struct vertex){ pt->t, se->stack >= 0 ? pt->stack_live[se->stack] : pt->v[c], pt, NONE };
    }
    for (size_t k = 0; k < tl->nprocs; k++) {
        if (!tl->peak[k].seq) continue;
        if (se->stack < 0 && (c != T_MEMLIVE || (!se->tree_points && se->proc != k))) continue;
        int64_t at = se->stack >= 0 || se->tree_points ? tree_at_peak(tl, se->stack, k) : tl->peak[k].v[T_MEMLIVE];
        v[m++] = (struct vertex){ tl->peak[k].t, at, &tl->peak[k], k };
    }
    qsort(v, m, sizeof *v, by_vertex_time);
    *out = v;
    return m;
}

static void svg_series(FILE *f, const struct timeline *tl, const struct series *se, int c, double tmax, double vmax,
                       double y0)
{
    struct vertex *v;
    size_t n = vertices(tl, se, c, &v);
    const char *stroke = se->color;
    fprintf(f, "<g class=\"series\"><title>");
    xml_write(f, se->name);
    fprintf(f, "</title><polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"", stroke,
            se->tree_points && se->stack < 0 ? "2.5" : "1.5", se->stack >= 0 ? " stroke-dasharray=\"6 3\"" : "");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%.1f,%.1f", i ? " " : "", MARGIN_L + v[i].t / tmax * PLOT_W, y0 + PANEL_H - (double)v[i].v / vmax * PANEL_H);
    fprintf(f, "\"/>");
    /* a dot with its tooltip at each snapshot (ticks are the line), and at
     * each of the tree's moments unless they are too many */
    for (size_t i = 0; i < n; i++) {
        const struct point *pt = v[i].pt;
        if (pt->tick || (!pt->pid && n > TREE_DOTS)) continue;
        char human[32];
        fmt_human(se->stack >= 0 ? MEMLIVE : t_counter[c], v[i].v, human, sizeof human);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>", MARGIN_L + v[i].t / tmax * PLOT_W,
                y0 + PANEL_H - (double)v[i].v / vmax * PANEL_H, stroke);
        xml_write(f, se->name);
        fprintf(f, " at %.3f s: %s (%lld)", v[i].t, human, (long long)v[i].v);
        if (v[i].peak_of != NONE) {
            fprintf(f, ", at pid %lld's peak snapshot %lld", (long long)pt->pid, (long long)pt->seq);
        } else if (pt->pid && *pt->reason) {
            fprintf(f, ", snapshot %lld (", (long long)pt->seq);
            xml_write(f, pt->reason);
            if (*pt->label) fputc(' ', f), xml_write(f, pt->label);
            fputc(')', f);
        }
        fprintf(f, "</title></circle>");
    }
    fprintf(f, "</g>\n");
    free(v);
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

/* The whole tree's highest sampled point (the curve's maximum, which can
 * miss a peak between two points), NULL without live bytes. */
static const struct point *highest_sampled(const struct timeline *tl)
{
    const struct point *best = NULL;
    for (size_t i = tl->tree_first; i < tl->tree_first + tl->ntree; i++)
        if (!best || tl->pts[i].v[T_MEMLIVE] > best->v[T_MEMLIVE]) best = &tl->pts[i];
    return best && best->v[T_MEMLIVE] > 0 ? best : NULL;
}

/* What the plot marks: a single process's peak snapshot ("peak
 * snapshot", the live bytes info and report say it holds), else the highest sampled
 * point ("highest sampled"); NULL without live bytes. */
static const struct point *the_peak(const struct timeline *tl, int *sampled)
{
    *sampled = 0;
    if (tl->nprocs == 1 && tl->peak[0].seq) return tl->peak[0].v[T_MEMLIVE] > 0 ? &tl->peak[0] : NULL;
    *sampled = 1;
    return highest_sampled(tl);
}

/* The peak on the live bytes panel: a ring and "peak 3.81 MiB at 1.234 s"
 * (or "highest sampled ...") beside it (on its left in the right half). */
static void svg_peak_mark(FILE *f, const struct point *pt, int sampled, double tmax, double vmax, double y0)
{
    char human[32], text[96];
    double x = MARGIN_L + pt->t / tmax * PLOT_W, y = y0 + PANEL_H - (double)pt->v[T_MEMLIVE] / vmax * PANEL_H;
    snprintf(text, sizeof text, "%s %s at %.3f s", sampled ? "highest sampled" : "peak snapshot",
             fmt_human(MEMLIVE, pt->v[T_MEMLIVE], human, sizeof human), pt->t);
    int left = x > MARGIN_L + PLOT_W / 2;
    fprintf(f, "<g class=\"peakmark\"><title>%s (%lld bytes%s)</title><circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"none\""
               " stroke=\"#d00\" stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"#d00\""
               " font-weight=\"bold\">%s</text></g>\n", text, (long long)pt->v[T_MEMLIVE],
            sampled ? ", the whole tree's highest point" : ", the peak snapshot", x, y, left ? x - 10 : x + 10,
            y < y0 + 14 ? y + 16 : y - 8, left ? "end" : "start", text);
}

/* The shaded time (o->shade) on a panel whose top is y0, under its lines;
 * its tooltip the times as +S (offset: the plot's time to it). */
static void svg_shade(FILE *f, const struct timeline_svg *o, double tmax, double y0, double offset)
{
    double a = o->shade_from < 0 ? 0 : o->shade_from, b = o->shade_to > tmax ? tmax : o->shade_to;
    if (!o->shade || a > tmax || b < 0 || b < a) return;
    double w = (b - a) / tmax * PLOT_W;
    fprintf(f, "<rect class=\"range\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"#f0b400\""
               " fill-opacity=\"0.3\"><title>the time range ", MARGIN_L + a / tmax * PLOT_W, y0, w < 1 ? 1 : w, PANEL_H);
    if (o->shade_from < 0) fputs("start", f);
    else fprintf(f, "%+.3f", o->shade_from + offset);
    if (o->shade_to >= 1e300) fputs("..end", f);
    else fprintf(f, "..%+.3f", o->shade_to + offset);
    fputs(" s</title></rect>\n", f);
}

/* One panel: counter c of every series (stacks: on the live bytes panel
 * only), its axes scaled to the largest value shown. */
static void svg_panel(FILE *f, const struct timeline *tl, const struct timeline_svg *o, const struct series *se,
                      size_t ns, int c, int k, double tmax, double offset)
{
    static const char *const titles[NT] = { [T_MEMLIVE] = "live bytes (memlive)", [T_RSS] = "resident bytes (RSS)",
                                            [T_MEMTOT] = "bytes allocated (memtot)", [T_NCALLS] = "allocations (ncalls)" };
    double y0 = MARGIN_T + k * (PANEL_H + 60) + 20, vmax = 0;
    for (size_t i = 0; i < tl->npts; i++) {
        if ((double)tl->pts[i].v[c] > vmax) vmax = (double)tl->pts[i].v[c];
        for (size_t s = 0; c == T_MEMLIVE && s < tl->nstacks; s++)
            if ((double)tl->pts[i].stack_live[s] > vmax) vmax = (double)tl->pts[i].stack_live[s];
    }
    /* the lines through each peak snapshot: the process's, the tree's, the stacks' */
    for (size_t k = 0; c == T_MEMLIVE && k < tl->nprocs; k++)
        for (int s = -1; tl->peak[k].seq && s < (int)tl->nstacks; s++) {
            double at = (double)tree_at_peak(tl, s, k);
            if (at > vmax) vmax = at;
            if (s < 0 && (double)tl->peak[k].v[c] > vmax) vmax = (double)tl->peak[k].v[c];
        }
    int sampled = 0;
    const struct point *peak = c == T_MEMLIVE ? the_peak(tl, &sampled) : NULL;
    if (peak && (double)peak->v[c] > vmax) vmax = (double)peak->v[c];
    vmax = nice_max(vmax, c == T_NCALLS ? 1000 : 1024);
    fprintf(f, "<g class=\"panel\"><text x=\"%d\" y=\"%.0f\" font-weight=\"bold\">%s</text>\n", MARGIN_L, y0 - 6, titles[c]);
    fprintf(f, "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", MARGIN_L, y0,
            PLOT_W, PANEL_H);
    svg_shade(f, o, tmax, y0, offset);
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
    if (peak) svg_peak_mark(f, peak, sampled, tmax, vmax, y0);
    /* the peak snapshot is captured within max(1/128, 4 KiB) below the
     * high-water mark: a curve above it is marked too, as what it is */
    const struct point *top = peak && !sampled ? highest_sampled(tl) : NULL;
    if (top && top->v[T_MEMLIVE] > peak->v[T_MEMLIVE]) svg_peak_mark(f, top, 1, tmax, vmax, y0);
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
    int panels[4] = { T_MEMLIVE, T_RSS, T_MEMTOT, T_NCALLS }, npanels = 4;
    size_t with_rss = 0;
    for (size_t i = 0; i < tl->npts; i++) with_rss += tl->pts[i].v[T_RSS] != 0;
    if (!with_rss) panels[1] = T_MEMTOT, panels[2] = T_NCALLS, npanels = 3;     /* no tick: no RSS known */
    int width = PLOT_R + legend_width(se, ns), height = MARGIN_T + npanels * (PANEL_H + 60);
    if (MARGIN_T + 30 + (int)(ns + 2) * 18 > height) height = MARGIN_T + 30 + (int)(ns + 2) * 18;
    double offset = tl->t0 - window_run_start(p, p->procs[tl->procs[0]].run);
    if (!o->in_page) fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f, "<svg%s width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\""
               " data-plot-left=\"%d\" data-plot-width=\"%d\" data-tmax=\"%.6f\" data-run-offset=\"%.6f\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n<text x=\"%d\" y=\"24\" font-size=\"16\">",
            o->in_page ? " class=\"timeline\"" : " xmlns=\"http://www.w3.org/2000/svg\"", width, height, width, height,
            MARGIN_L, PLOT_W, tmax, offset, MARGIN_L);
    xml_write(f, p->path);
    fprintf(f, ": memory over time</text>\n");
    for (int k = 0; k < npanels; k++) svg_panel(f, tl, o, se, ns, panels[k], k, tmax, offset);
    svg_legend(f, tl, o, se, ns);
    fprintf(f, "</svg>\n");
    free(names);
    free(se);
}
