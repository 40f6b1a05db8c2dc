/* The top of the report page (report.c's gathering done): the header with
 * the selection, the summary cards, memory over time (timeline.c's plot)
 * and a flame graph per view (flame.c). Writes only through report_page.c's
 * pieces, so every name is escaped. */
#include "flame.h"
#include "procs.h"
#include "report.h"
#include "timeline.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TIMELINE_STACKS 3    /* the stacks that held the most at the peak, in the plot */

static void put_snapshot_choice(struct page *pg, const struct select_opts *o)
{
    switch (o->snap_kind) {
    case SNAP_LAST: page_text(pg, "each process's last (at exit)"); break;
    case SNAP_PEAK: page_text(pg, "each process's peak"); break;
    case SNAP_SEQ: fprintf(pg->f, "the last with seq &lt;= %lld", (long long)o->snap_value); break;
    case SNAP_ID: fprintf(pg->f, "id %lld", (long long)o->snap_value); break;
    case SNAP_LABEL: page_text(pg, "label "); page_text(pg, o->snap_label); break;
    }
}

void report_write_head(struct report *r, const char *title)
{
    const struct profile *p = r->p;
    struct page *pg = &r->pg;
    char when[64];
    page_start(pg, title);
    fputs("<p class=\"meta\" id=\"selection\">", pg->f);
    page_text(pg, p->path);
    if (r->q->sel.run != NONE) {
        procs_fmt_date(p->runs[r->q->sel.run].start_time, when, sizeof when);
        fprintf(pg->f, " &middot; run %lld, started %s", (long long)p->runs[r->q->sel.run].id, when);
    }
    fputs(" &middot; snapshot: ", pg->f);
    put_snapshot_choice(pg, &r->c->sel);
    if (r->c->sel.has_pid) fprintf(pg->f, " &middot; pid %lld", (long long)r->c->sel.pid);
    if (r->c->sel.image) fprintf(pg->f, " image %lld", (long long)r->c->sel.image);
    if (r->c->sel.exe) {
        fputs(" &middot; executable ", pg->f);
        page_text(pg, r->c->sel.exe);
    }
    if (r->c->sel.has_tid) fprintf(pg->f, " &middot; thread %lld", (long long)r->c->sel.tid);
    if (r->c->sel.thread_re) {
        fputs(" &middot; threads ", pg->f);
        page_text(pg, r->c->sel.thread_re);
    }
    fprintf(pg->f, " &middot; mpquery %s</p>\n", MPQ_VERSION);
    page_nav(pg, report_has_ledger(r));
}

/* The whole selection's totals: its processes' rows or, with --thread,
 * its threads'. */
static struct total summary_totals(const struct report *r)
{
    const struct profile *p = r->p;
    struct total sum = { .thread = NONE };
    int by_thread = r->c->sel.has_tid || r->c->sel.thread_re;
    for (size_t i = 0; i < (by_thread ? p->nthreads : p->nprocs); i++) {
        uint32_t row = by_thread ? (r->q->sel.thread_ok[i] ? r->thread_total[i] : NONE) : r->proc_total[i];
        if (row == NONE) continue;
        const struct total *t = &p->totals[row];
        procs_total_add(&sum, t);
    }
    counters_derive(&sum.c);
    return sum;
}

/* The peak card: the largest process's peak (timeline_process_peak: its
 * maxlive, the figure the plot marks and info prints) and when its peak
 * snapshot was taken, from the process's start. */
static void card_peak(struct report *r)
{
    const struct profile *p = r->p;
    uint32_t best = NONE, snap = NONE;
    int64_t most = -1, sum = 0;
    for (size_t k = 0; k < r->nprocs; k++) {
        uint32_t j, i = r->procs[k];
        int64_t v = timeline_process_peak(p, i, &j);
        if (v < 0) continue;
        sum = sat_add(sum, v);
        if (v > most) best = i, most = v, snap = j;
    }
    struct page *pg = &r->pg;
    if (best == NONE) {
        page_card(pg, "peak live", NONE, 0, "no totals");
        return;
    }
    const struct process *pr = &p->procs[best];
    struct strbuf *sb = &pg->note;
    sb->len = 0;
    sb_printf(sb, "%lld bytes", (long long)most);
    if (r->nprocs > 1) sb_printf(sb, " in pid %lld (%s)", (long long)pr->pid, procs_name(pr));
    if (snap != NONE) sb_printf(sb, ", peak snapshot at +%.3f s", p->snapshots[snap].time - pr->start_time);
    else sb_printf(sb, " (no peak snapshot)");
    int64_t held = timeline_peak_snapshot_live(p, snap);
    if (held >= 0 && held != most)
        sb_printf(sb, " (holding %lld bytes: it is taken within 1/128 or 4 KiB below the peak)", (long long)held);
    if (r->nprocs > 1) {
        char h[64];
        sb_printf(sb, "; sum of the processes' peaks: %s", fmt_human(MEMLIVE, sum, h, sizeof h));
    }
    page_card(pg, "peak live", MEMLIVE, most, sb->s);
}

void report_write_summary(struct report *r)
{
    const struct profile *p = r->p;
    struct page *pg = &r->pg;
    struct total s = summary_totals(r);
    size_t nthreads = 0, nstacks = 0;
    double start = 0, end = 0;
    for (size_t t = 0; t < p->nthreads; t++) nthreads += r->q->sel.thread_ok[t];
    for (size_t i = 0; i < p->nrecorded; i++) nstacks += !counters_zero(&r->q->sel.stack_c[i]);
    for (size_t k = 0; k < r->nprocs; k++) {
        const struct process *pr = &p->procs[r->procs[k]];
        if (!k || pr->start_time < start) start = pr->start_time;
        if (pr->end_time > end) end = pr->end_time;
    }
    page_section(pg, "summary", "Summary");
    fputs("<div class=\"cards\">\n", pg->f);
    page_card(pg, "processes", NCALLS, (int64_t)r->nprocs, NULL);
    page_card(pg, "threads", NCALLS, (int64_t)nthreads, NULL);
    struct strbuf *sb = &pg->note;
    sb->len = 0;
    sb_printf(sb, "%.3f s", end > start ? end - start : 0.0);
    page_card(pg, "duration", NONE, 0, sb->s);
    page_card_counter(pg, "allocations", NCALLS, s.c.v[NCALLS], "calls");
    page_card_counter(pg, "bytes allocated", MEMTOT, s.c.v[MEMTOT], "bytes");
    page_card_counter(pg, "frees", NFREE, s.c.v[NFREE], "frees");
    page_card_counter(pg, "still allocated", MEMLIVE, s.c.v[MEMLIVE], "bytes");
    sb->len = 0;
    sb_printf(sb, "%lld blocks", (long long)s.c.v[NLIVE]);
    page_card(pg, "live blocks", NLIVE, s.c.v[NLIVE], sb->s);
    card_peak(r);
    sb->len = 0;
    sb_printf(sb, "%lld calls, %lld bytes", (long long)s.ncalls_nostack, (long long)s.memtot_nostack);
    page_card(pg, "without a stack", NCALLS, s.ncalls_nostack, sb->s);
    sb->len = 0;
    sb_printf(sb, "with samples (the stack tree: %zu nodes)", p->nstacks);
    page_card(pg, "stacks", NCALLS, (int64_t)nstacks, sb->s);
    fputs("</div>\n", pg->f);
    if (r->nprocs == 1) {
        const struct process *pr = &p->procs[r->procs[0]];
        fputs("<p class=\"cmd\">", pg->f);
        page_text(pg, *pr->cmdline ? pr->cmdline : pr->exe);
        fputs("</p>\n", pg->f);
    }
    fputs("</section>\n", pg->f);
}

/* ---------------------------------------------------------------- timeline, flame graphs */
void report_write_timeline(struct report *r)
{
    struct page *pg = &r->pg;
    struct timeline tl;
    timeline_build(&tl, r->p, &r->q->sel, TIMELINE_STACKS);
    page_section(pg, "timeline", "Memory over time");
    if (!tl.nprocs) {
        fputs("<p>No process of the selection has a snapshot.</p>\n", pg->f);
    } else {
        /* the stacks named by their leaf after rules */
        const struct dtree *t = &r->l->t;
        const char *names[TIMELINE_STACKS];
        for (size_t k = 0; k < tl.nstacks; k++) {
            uint32_t node = r->q->stack_node[tl.stacks[k]];
            names[k] = node == NONE || node == 0 ? "" : t->labels.str[t->label[node]];
        }
        fputs("<div class=\"plot\">\n", pg->f);
        timeline_svg(pg->f, &tl, &(struct timeline_svg){ .in_page = 1, .peaks = 1, .stack_names = names });
        fprintf(pg->f, "</div>\n<p class=\"note\">Each process's totals over time (its points every few milliseconds, "
                       "MP_TICK, and its snapshots), the whole tree's (black), the live bytes of the %d stacks that "
                       "held the most at the peak (dashed, at the snapshots and the peak); a diamond is a process's "
                       "peak snapshot; the red ring is the peak (one process: its peak snapshot, and the highest "
                       "sampled point too where the curve rises above it) or, for several, the whole tree's highest "
                       "sampled point.", TIMELINE_STACKS);
        if (tl.npts == tl.ntree + tl.nprocs)
            fputs(" One point a process: recorded with MP_TICK=0 or by a version before 4; MP_INTERVAL=S (or "
                  "mp_snapshot, MP_SIGNAL) adds snapshots.", pg->f);
        fputs("</p>\n", pg->f);
    }
    fputs("</section>\n", pg->f);
    timeline_free(&tl);
}

void report_write_flames(struct report *r)
{
    struct page *pg = &r->pg;
    struct dtree *t = &r->l->t;
    uint32_t *module = flame_node_modules(r->q, t);
    page_section(pg, "flame", "Flame graphs");
    page_tabs(pg, "flame", r->views, r->nviews, 0);
    struct strbuf title = { 0 }, prefix = { 0 };
    for (size_t i = 0; i < r->nviews; i++) {
        const struct view *v = &r->views[i];
        title.len = prefix.len = 0;
        sb_printf(&title, "Flame graph: %s (%s)", counter_name[v->by], v->what);
        sb_printf(&prefix, "flame-%s-", v->tab);
        const struct flame_graph g = {
            .t = t, .sub = v->sub, .by = v->by, .counters = shown_counters(r->p), .colors = COLORS_MODULE,
            .p = r->p, .node_module = module, .source = r->p->path,
        };
        const struct flame_opts o = { .title = title.s, .icicle = 1, .width = 1200, .min_width = r->a->min_width };
        page_pane_start(pg, "flame", v->tab);
        flame_write_svg(&g, &o, prefix.s, pg->f);
        fputs("</div>\n", pg->f);
    }
    fputs("<p class=\"note\">A frame per function of the paths after rules, under its caller (the root at the "
          "top), as wide as the counter of the stacks through it; its tooltip has every counter. Click to zoom, 'Search' to highlight.</p>\n</section>\n",
          pg->f);
    sb_free(&title);
    sb_free(&prefix);
    free(module);
}
