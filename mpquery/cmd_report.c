/* mpquery report DB: the profile as one HTML page for a browser, self-
 * contained (style, script and pictures inline, nothing loaded from the
 * network: the file can be mailed or attached to a bug report). Sections:
 * a summary (processes, threads, totals, the peak), memory over time
 * (timeline.c's plot), flame graphs (flame.c: one SVG per counter, a tab
 * shows one), the largest stacks and functions per counter, the leaks (as
 * mpquery leaks: the blocks still allocated at the selected snapshot), and
 * the totals per process and per thread. Numbers are in human units
 * (fmt_human), each with its exact value in its title attribute (its
 * tooltip). Without JavaScript the page still reads: every tab's content
 * is shown, one after the other (report_page.c has the style and script).
 *
 * The views (stacks and flame graphs) are per display node, from the
 * listing of top and flame: the same paths after rules, the same ordering
 * (a stack table is `mpquery top --by C`'s, a leak table `mpquery
 * leaks`'s). When the profile has peak snapshots and --snapshot did not
 * select them, one more view is the live bytes at each process's peak. */
#include "flame.h"
#include "report.h"
#include "timeline.h"
#include "commands.h"
#include "listing.h"
#include "load.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "tempfile.h"
#include "view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery report DB... -o FILE.html [options]\n"
"\n"
"The profile as one HTML page, for any browser and without network access\n"
"(its style, script and pictures are inline): a summary (processes, threads,\n"
"totals, the peak), memory over time, flame graphs of several counters, the\n"
"largest stacks and functions, the leaks, and the totals per process and\n"
"per thread.\n"
"\n";

static const char more[] =
"\n"
"Numbers are in human units (4.70 MiB, 32.5k); a cell's tooltip has the\n"
"exact value. The flame graphs (memtot, ncalls, memlive, the live bytes at\n"
"the peak, maxlive, then ntemp and time when recorded) and the tables of\n"
"stacks and functions have a tab per counter; a flame graph zooms on a\n"
"click, and 'Search' highlights the frames whose name matches a regular\n"
"expression. The address may name the tabs shown: report.html#flame=ncalls\n"
"&stacks=memlive&functions=memtot-inclusive. The stack tables are those of\n"
"mpquery top --by COUNTER, the leaks those of mpquery leaks, with the same\n"
"selection and rules.\n"
"\n"
"example:\n"
"  mpquery record -o app.db -- ./app\n"
"  mpquery report app.db -o app.html --title 'app, build 1234'\n";

#define TIMELINE_STACKS 3    /* the stacks whose live bytes grew most, in the plot */

/* What the page shows, gathered once from the listing. */
struct report {
    const struct common *c;
    const struct report_args *a;
    struct listing *l;
    const struct profile *p;
    const struct query *q;
    struct page pg;
    struct view views[NSTACK_COUNTERS + 1];
    size_t nviews;
    counters *sub;                      /* per node: subtree sums of the selection (flame) */
    struct selection peak_sel;          /* each process's peak, when a view of it */
    struct query peak_q;
    counters *peak_own, *peak_sub;
    uint32_t *procs; size_t nprocs;     /* the selected processes, by start */
    uint32_t *proc_total, *thread_total;/* their totals rows at the selection, NONE */
};

/* ---------------------------------------------------------------- gathering */
static int by_start(const void *a, const void *b, void *ctx)
{
    const struct profile *p = ctx;
    const struct process *x = &p->procs[*(const uint32_t *)a], *y = &p->procs[*(const uint32_t *)b];
    if (x->start_time != y->start_time) return x->start_time < y->start_time ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Per process and per thread, its totals row at the selected snapshot:
 * that of the newest snapshot in the selected one's chain (select.c: the
 * selected snapshot, or an earlier one that is not a peak's). */
static void pick_totals(struct report *r)
{
    const struct profile *p = r->p;
    const struct selection *s = &r->q->sel;
    r->proc_total = none_array(p->nprocs);
    r->thread_total = none_array(p->nthreads);
    for (uint32_t i = 0; i < p->ntotals; i++) {
        const struct total *t = &p->totals[i];
        const struct snapshot *sn = &p->snapshots[t->snapshot];
        uint32_t sel = s->proc_snapshot[sn->process];
        if (sel == NONE || (t->snapshot != sel && (sn->peak || sn->id > p->snapshots[sel].id))) continue;
        if (t->thread != NONE && p->threads[t->thread].process != sn->process) continue;
        uint32_t *slot = t->thread == NONE ? &r->proc_total[sn->process] : &r->thread_total[t->thread];
        if (*slot == NONE || p->snapshots[p->totals[*slot].snapshot].id < sn->id) *slot = i;
    }
    r->procs = xmalloc((p->nprocs + 1) * sizeof *r->procs);
    for (uint32_t i = 0; i < p->nprocs; i++)
        if (s->proc_snapshot[i] != NONE) r->procs[r->nprocs++] = i;
    qsort_r(r->procs, r->nprocs, sizeof *r->procs, by_start, (void *)p);
}

/* The live bytes at each process's peak, per node, when the profile has
 * peak snapshots and the selection is not of them already. */
static int peak_view(struct report *r)
{
    char err[512];
    if (r->c->sel.snap_kind == SNAP_PEAK) return 0;
    struct select_opts o = r->c->sel;
    o.snap_kind = SNAP_PEAK;
    o.keep_rows = 0;
    if (select_apply(r->p, &o, &r->peak_sel, err, sizeof err)) return 0;    /* no peak snapshot */
    const struct dtree *t = &r->l->t;
    r->peak_q = *r->q;
    r->peak_q.sel = r->peak_sel;
    r->peak_own = xcalloc(t->n, sizeof *r->peak_own);
    r->peak_sub = xmalloc(t->n * sizeof *r->peak_sub);
    view_accumulate(r->p, &r->peak_sel, r->q->stack_node, r->peak_own);
    dtree_subtotals(t, r->peak_own, r->peak_sub);
    return 1;
}

static void add_view(struct report *r, const char *tab, const char *what, int by)
{
    r->views[r->nviews++] = (struct view){ tab, what, by, 0, r->l->own[0], r->sub, r->q };
}

/* memtot, ncalls, memlive, the peak's, maxlive; ntemp and time when the
 * profile has them. */
static void pick_views(struct report *r)
{
    const struct dtree *t = &r->l->t;
    int has_peak = peak_view(r);
    r->sub = xmalloc(t->n * sizeof *r->sub);
    dtree_subtotals(t, r->l->own[0], r->sub);
    add_view(r, "memtot", "bytes allocated", MEMTOT);
    add_view(r, "ncalls", "allocations", NCALLS);
    add_view(r, "memlive", r->c->sel.snap_kind == SNAP_PEAK ? "live at the peak"
                           : r->c->sel.snap_kind == SNAP_LAST ? "still allocated at exit" : "live at the snapshot", MEMLIVE);
    if (has_peak)
        r->views[r->nviews++] = (struct view){ "peak", "live at each process's peak", MEMLIVE, 1, r->peak_own,
                                               r->peak_sub, &r->peak_q };
    add_view(r, "maxlive", "each stack's peak", MAXLIVE);
    if (r->sub[0].v[NTEMP]) add_view(r, "ntemp", "temporary blocks", NTEMP);
    if (r->p->has_time) add_view(r, "time", "time between allocations", TIME);
}

static void report_free(struct report *r)
{
    free(r->sub);
    free(r->peak_own);
    free(r->peak_sub);
    selection_free(&r->peak_sel);
    free(r->procs);
    free(r->proc_total);
    free(r->thread_total);
    sb_free(&r->pg.sb);
    sb_free(&r->pg.note);
}

/* ---------------------------------------------------------------- header, summary */
static const char *process_name(const struct process *pr)
{
    return *pr->exe ? path_basename(pr->exe) : "?";
}

static void fmt_date(double t, char *buf, size_t n)
{
    time_t s = (time_t)t;
    struct tm tm;
    if (!localtime_r(&s, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm)) snprintf(buf, n, "%.3f", t);
}

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

static void write_head(struct report *r, const char *title)
{
    const struct profile *p = r->p;
    struct page *pg = &r->pg;
    char when[64];
    page_start(pg, title);
    fputs("<p class=\"meta\" id=\"selection\">", pg->f);
    page_text(pg, p->path);
    if (r->q->sel.run != NONE) {
        fmt_date(p->runs[r->q->sel.run].start_time, when, sizeof when);
        fprintf(pg->f, " &middot; run %lld, started %s", (long long)p->runs[r->q->sel.run].id, when);
    }
    fputs(" &middot; snapshot: ", pg->f);
    put_snapshot_choice(pg, &r->c->sel);
    if (r->c->sel.has_pid) fprintf(pg->f, " &middot; pid %lld", (long long)r->c->sel.pid);
    if (r->c->sel.has_tid) fprintf(pg->f, " &middot; thread %lld", (long long)r->c->sel.tid);
    if (r->c->sel.thread_re) {
        fputs(" &middot; threads ", pg->f);
        page_text(pg, r->c->sel.thread_re);
    }
    fprintf(pg->f, " &middot; mpquery %s</p>\n", MPQ_VERSION);
    page_nav(pg);
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
        counters_add(&sum.c, &t->c);
        sum.ncalls_nostack = sat_add(sum.ncalls_nostack, t->ncalls_nostack);
        sum.memtot_nostack = sat_add(sum.memtot_nostack, t->memtot_nostack);
        sum.nfree_unknown = sat_add(sum.nfree_unknown, t->nfree_unknown);
    }
    counters_derive(&sum.c);
    return sum;
}

/* A process's peak snapshot (its latest of reason 'peak'), NONE. */
static uint32_t peak_snapshot(const struct profile *p, uint32_t proc)
{
    const struct process *pr = &p->procs[proc];
    uint32_t found = NONE;
    for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++)
        if (p->snapshots[j].peak && snapshot_total(p, j)) found = j;
    return found;
}

/* The peak card: the largest process's peak of live bytes (maxlive, exact)
 * and when its peak snapshot was taken. */
static void card_peak(struct report *r)
{
    const struct profile *p = r->p;
    uint32_t best = NONE;
    int64_t sum = 0;
    for (size_t k = 0; k < r->nprocs; k++) {
        uint32_t i = r->procs[k];
        if (r->proc_total[i] == NONE) continue;
        int64_t v = p->totals[r->proc_total[i]].c.v[MAXLIVE];
        sum = sat_add(sum, v);
        if (best == NONE || v > p->totals[r->proc_total[best]].c.v[MAXLIVE]) best = i;
    }
    struct page *pg = &r->pg;
    if (best == NONE) {
        page_card(pg, "peak live", NONE, 0, "no totals");
        return;
    }
    const struct process *pr = &p->procs[best];
    struct strbuf *sb = &pg->note;
    sb->len = 0;
    sb_printf(sb, "%lld bytes", (long long)p->totals[r->proc_total[best]].c.v[MAXLIVE]);
    if (r->nprocs > 1) sb_printf(sb, " in pid %lld (%s)", (long long)pr->pid, process_name(pr));
    uint32_t j = peak_snapshot(p, best);
    if (j != NONE) sb_printf(sb, ", peak snapshot at +%.3f s", p->snapshots[j].time - pr->start_time);
    if (r->nprocs > 1) {
        char h[64];
        sb_printf(sb, "; all processes' peaks: %s", fmt_human(MAXLIVE, sum, h, sizeof h));
    }
    page_card(pg, "peak live", MAXLIVE, p->totals[r->proc_total[best]].c.v[MAXLIVE], sb->s);
}

static void write_summary(struct report *r)
{
    const struct profile *p = r->p;
    struct page *pg = &r->pg;
    struct total s = summary_totals(r);
    size_t nthreads = 0, nstacks = 0;
    double start = 0, end = 0;
    for (size_t t = 0; t < p->nthreads; t++) nthreads += r->q->sel.thread_ok[t];
    for (size_t i = 0; i < p->nstacks; i++) nstacks += !counters_zero(&r->q->sel.stack_c[i]);
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
static void write_timeline(struct report *r)
{
    struct page *pg = &r->pg;
    struct timeline tl;
    timeline_build(&tl, r->p, &r->q->sel, TIMELINE_STACKS, 1);
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
        fprintf(pg->f, "</div>\n<p class=\"note\">Each process's totals at its snapshots, the whole tree's (black), "
                       "the live bytes of the %d stacks that grew most (dashed); a diamond is a process's peak.",
                TIMELINE_STACKS);
        if (tl.npts == tl.ntree + tl.nprocs)
            fputs(" One snapshot a process: record with MP_INTERVAL=S (or mp_snapshot, MP_SIGNAL) for a curve.",
                  pg->f);
        fputs("</p>\n", pg->f);
    }
    fputs("</section>\n", pg->f);
    timeline_free(&tl);
}

static void write_flames(struct report *r)
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
            .t = t, .sub = v->sub, .by = v->by, .ncounters = shown_counters(r->p), .colors = COLORS_MODULE,
            .p = r->p, .node_module = module, .source = r->p->path,
        };
        const struct flame_opts o = { .title = title.s, .width = 1200, .min_width = r->a->min_width };
        page_pane_start(pg, "flame", v->tab);
        flame_write_svg(&g, &o, prefix.s, pg->f);
        fputs("</div>\n", pg->f);
    }
    fputs("<p class=\"note\">A frame per function of the paths after rules, as wide as the counter of the stacks "
          "through it; its tooltip has every counter. Click to zoom, 'Search' to highlight.</p>\n</section>\n",
          pg->f);
    sb_free(&title);
    sb_free(&prefix);
    free(module);
}

/* ---------------------------------------------------------------- table headers */
static void stack_header(struct page *pg, int ncounters, int by)
{
    page_table_start(pg);
    page_th(pg, "stack", 1, 0, "the database id of the largest stack of the row (mpquery show DB ID)");
    for (int k = 0; k < ncounters; k++) page_th(pg, counter_name[k], 1, k == by, NULL);
    page_th(pg, "share", 0, 0, NULL);
    page_th(pg, "where (leaf first)", 0, 0, NULL);
    page_table_body(pg);
}

/* Two rows: a counter over its self and inclusive columns. */
static void function_header(struct page *pg, const struct view *views, size_t n, int by, int inclusive)
{
    fputs("<div class=\"scroll\"><table><thead><tr>", pg->f);
    for (size_t k = 0; k < n; k++)
        if (!views[k].at_peak) fprintf(pg->f, "<th class=\"n\" colspan=\"2\">%s</th>", counter_name[views[k].by]);
    fputs("<th></th></tr>\n<tr>", pg->f);
    for (size_t k = 0; k < n; k++) {
        if (views[k].at_peak) continue;
        page_th(pg, "self", 1, views[k].by == by && !inclusive, NULL);
        page_th(pg, "inclusive", 1, views[k].by == by && inclusive, NULL);
    }
    page_th(pg, "function", 0, 0, NULL);
    page_table_body(pg);
}

static void leak_header(struct page *pg)
{
    static const char *const cols[] = { "stack", "blocks", "bytes", "share", "where (leaf first)" };
    page_table_start(pg);
    for (int k = 0; k < 5; k++) page_th(pg, cols[k], k < 3, k == 2, NULL);
    page_table_body(pg);
}

/* pid ... ended, the totals, and (processes) the peak, or (threads) the share. */
static void totals_header(struct page *pg, const char *const *cols, size_t n, const char *last)
{
    page_table_start(pg);
    for (size_t k = 0; k < n; k++) page_th(pg, cols[k], k < 2 || !strcmp(cols[k], "threads"), 0, NULL);
    for (int k = 0; k < NCOUNTERS; k++) page_th(pg, counter_name[k], 1, 0, NULL);
    page_th(pg, last, !strcmp(last, "peak"), 0, NULL);
    page_table_body(pg);
}

/* ---------------------------------------------------------------- tables */

static void stack_table(struct report *r, const struct view *v)
{
    const struct dtree *t = &r->l->t;
    const struct profile *p = r->p;
    uint32_t *rep = xmalloc(t->n * sizeof *rep), *nmerged = xmalloc(t->n * sizeof *nmerged);
    uint32_t *items = xmalloc(t->n * sizeof *items);
    node_stacks(v->q, t, v->by, rep, nmerged);
    size_t n = 0, nstacks = 0;
    for (uint32_t i = 1; i < t->n; i++)
        if (v->own[i].v[v->by] != 0 && rep[i] != NONE) items[n++] = i, nstacks += nmerged[i];
    struct order_ctx ctx = { v->own, p, rep, t, v->by };
    size_t total_rows = n;
    n = select_top(items, n, (size_t)r->c->out.limit, order_stack, &ctx);
    struct page *pg = &r->pg;
    page_pane_start(pg, "stacks", v->tab);
    fprintf(pg->f, "<h3>The largest stacks by %s (%s): %zu rows of %zu (%zu stacks)</h3>\n", counter_name[v->by],
            v->what, n, total_rows, nstacks);
    stack_header(pg, shown_counters(p), v->by);
    for (size_t i = 0; i < n; i++) {
        uint32_t node = items[i];
        fputs("<tr>", pg->f);
        page_stack_id(pg, p->stacks[rep[node]].id, nmerged[node]);
        for (int k = 0; k < shown_counters(p); k++) page_td(pg, k, v->own[node].v[k], k == v->by);
        page_share(pg, v->own[node].v[v->by], v->sub[0].v[v->by]);
        page_where(pg, t, node, (size_t)r->c->out.depth);
        fputs("</tr>\n", pg->f);
    }
    page_table_end(pg);
    fputs("</div>\n", pg->f);
    free(items);
    free(rep);
    free(nmerged);
}

static void write_stacks(struct report *r)
{
    struct page *pg = &r->pg;
    page_section(pg, "stacks", "Stacks");
    page_tabs(pg, "stacks", r->views, r->nviews, 0);
    for (size_t i = 0; i < r->nviews; i++) stack_table(r, &r->views[i]);
    fputs("<p class=\"note\">A row is a path after rules (stacks whose paths became equal merged: "
          "'+N'); counters summed over threads and processes. The where column is leaf first; its tooltip has "
          "the whole path.</p>\n</section>\n", pg->f);
}

/* The functions by one view's counter, self or inclusive, with those of
 * every view's counter. */
static void function_table(struct report *r, const struct view *v, const counters *self, const counters *incl,
                           int inclusive)
{
    const struct dtree *t = &r->l->t;
    size_t nl = t->labels.n;
    const counters *key = inclusive ? incl : self;
    uint32_t *items = xmalloc((nl + 1) * sizeof *items);
    size_t n = 0;
    for (uint32_t i = 0; i < nl; i++)
        if (key[i].v[v->by] != 0) items[n++] = i;
    struct order_ctx ctx = { key, NULL, NULL, t, v->by };
    size_t total_rows = n;
    n = select_top(items, n, (size_t)r->c->out.limit, order_function, &ctx);
    struct page *pg = &r->pg;
    char tab[64];
    snprintf(tab, sizeof tab, "%s-%s", v->tab, inclusive ? "inclusive" : "self");
    page_pane_start(pg, "functions", tab);
    fprintf(pg->f, "<h3>The largest functions by %s %s (%s): %zu of %zu</h3>\n", inclusive ? "inclusive" : "self",
            counter_name[v->by], v->what, n, total_rows);
    function_header(pg, r->views, r->nviews, v->by, inclusive);
    for (size_t i = 0; i < n; i++) {
        fputs("<tr>", pg->f);
        for (size_t k = 0; k < r->nviews; k++) {
            int by = r->views[k].by;
            if (r->views[k].at_peak) continue;
            page_td(pg, by, self[items[i]].v[by], by == v->by && !inclusive);
            page_td(pg, by, incl[items[i]].v[by], by == v->by && inclusive);
        }
        page_function(pg, t->labels.str[items[i]], t->labels.len[items[i]]);
        fputs("</tr>\n", pg->f);
    }
    page_table_end(pg);
    fputs("</div>\n", pg->f);
    free(items);
}

static void write_functions(struct report *r)
{
    struct dtree *t = &r->l->t;
    size_t nl = t->labels.n;
    counters *self = xcalloc(nl + 1, sizeof *self), *incl = xcalloc(nl + 1, sizeof *incl);
    dtree_functions(t, r->l->own[0], self, incl);
    struct page *pg = &r->pg;
    page_section(pg, "functions", "Functions");
    page_tabs(pg, "functions", r->views, r->nviews, 1);
    for (size_t i = 0; i < r->nviews; i++) {
        if (r->views[i].at_peak) continue;
        function_table(r, &r->views[i], self, incl, 0);
        function_table(r, &r->views[i], self, incl, 1);
    }
    fputs("<p class=\"note\">self: the function is the leaf after rules; inclusive: it is anywhere on the "
          "path (a recursive path counted once).</p>\n</section>\n", pg->f);
    free(self);
    free(incl);
}

/* ---------------------------------------------------------------- leaks */

/* As mpquery leaks: only the stacks with blocks or bytes still live count
 * (select_opts.live_only), per node summed, shown by the largest. */
static void write_leaks(struct report *r)
{
    const struct profile *p = r->p;
    const struct dtree *t = &r->l->t;
    const counters *stack_c = r->q->sel.stack_c;
    counters *own = xcalloc(t->n, sizeof *own);
    uint32_t *rep = none_array(t->n), *nmerged = xcalloc(t->n, sizeof *nmerged), *items = xmalloc(t->n * sizeof *items);
    for (uint32_t s = 0; s < p->nstacks; s++) {
        uint32_t node = r->q->stack_node[s];
        const counters *c = &stack_c[s];
        if (node == NONE || (c->v[NLIVE] <= 0 && c->v[MEMLIVE] <= 0)) continue;
        counters_add(&own[node], c);
        nmerged[node]++;
        if (rep[node] == NONE || c->v[MEMLIVE] > stack_c[rep[node]].v[MEMLIVE]
            || (c->v[MEMLIVE] == stack_c[rep[node]].v[MEMLIVE] && p->stacks[s].id < p->stacks[rep[node]].id))
            rep[node] = s;
    }
    size_t n = 0;
    int64_t blocks = 0, bytes = 0;
    for (uint32_t i = 1; i < t->n; i++) {
        if ((own[i].v[NLIVE] <= 0 && own[i].v[MEMLIVE] <= 0) || rep[i] == NONE) continue;
        items[n++] = i;
        blocks = sat_add(blocks, own[i].v[NLIVE]);
        bytes = sat_add(bytes, own[i].v[MEMLIVE]);
    }
    struct order_ctx ctx = { own, p, rep, NULL, MEMLIVE };
    size_t shown = select_top(items, n, (size_t)r->c->out.limit, order_leak, &ctx);
    struct page *pg = &r->pg;
    char h[64];
    page_section(pg, "leaks", "Leaks");
    fprintf(pg->f, "<p class=\"leaks\" id=\"leak-summary\"><b title=\"%lld blocks\">%lld leaked blocks</b> "
                   "(<span title=\"%lld bytes\">%s</span>) in %zu stacks",
            (long long)blocks, (long long)blocks, (long long)bytes, fmt_human(MEMLIVE, bytes, h, sizeof h), n);
    fputs(r->c->sel.snap_kind == SNAP_LAST ? ": still allocated at exit" : ": still allocated at the snapshot",
          pg->f);
    fputs(n > shown ? "; the largest:</p>\n" : ".</p>\n", pg->f);
    if (shown) {
        leak_header(pg);
        for (size_t i = 0; i < shown; i++) {
            uint32_t node = items[i];
            fputs("<tr>", pg->f);
            page_stack_id(pg, p->stacks[rep[node]].id, nmerged[node]);
            page_td(pg, NLIVE, own[node].v[NLIVE], 0);
            page_td(pg, MEMLIVE, own[node].v[MEMLIVE], 1);
            page_share(pg, own[node].v[MEMLIVE], bytes);
            page_where(pg, t, node, (size_t)r->c->out.depth);
            fputs("</tr>\n", pg->f);
        }
        page_table_end(pg);
    }
    fputs("<p class=\"note\">As mpquery leaks: known leaks are ignored there with --suppressions.</p>\n"
          "</section>\n", pg->f);
    free(own);
    free(rep);
    free(nmerged);
    free(items);
}

/* ---------------------------------------------------------------- processes, threads */
static const struct total *total_row(const struct profile *p, uint32_t row)
{
    return row == NONE ? NULL : &p->totals[row];
}

/* ncalls, memtot, nfree, nlive, memlive, maxlive of a totals row ('-'
 * without one). */
static void totals_cells(struct page *pg, const struct total *t)
{
    for (int k = 0; k < NCOUNTERS; k++) {
        if (!t) fputs("<td class=\"n\">-</td>", pg->f);
        else page_td(pg, k, k == NLIVE ? t->c.v[NCALLS] - t->c.v[NFREE] : t->c.v[k], 0);
    }
}

/* How a process ended, in short words: "exit(3)", "returned from main",
 * "killed by SIGSEGV"...; a value this version does not know, as it is. */
static void ended_cell(struct page *pg, const struct profile *p, const char *ended)
{
    if (!strncmp(ended, "exit ", 5)) fprintf(pg->f, "exit(%d)", atoi(ended + 5));
    else if (!strncmp(ended, "_exit ", 6)) fprintf(pg->f, "_exit(%d)", atoi(ended + 6));
    else if (!strncmp(ended, "signal ", 7)) { fputs("killed by ", pg->f); page_text(pg, ended + 7); }
    else if (!strcmp(ended, "exit")) fputs("returned from main", pg->f);
    else if (!strcmp(ended, "exec")) fputs("exec'd another program", pg->f);
    else if (!*ended) fputs(p->version < 2 ? "-" : "no final snapshot", pg->f);
    else page_text(pg, ended);
}

static void process_rows(struct report *r)
{
    const struct profile *p = r->p;
    struct page *pg = &r->pg;
    static const char *const cols[] = { "pid", "ppid", "command", "threads", "duration", "ended" };
    totals_header(pg, cols, 6, "peak");
    for (size_t k = 0; k < r->nprocs; k++) {
        uint32_t i = r->procs[k];
        const struct process *pr = &p->procs[i];
        size_t nth = 0;
        for (size_t t = 0; t < p->nthreads; t++) nth += p->threads[t].process == i && r->q->sel.thread_ok[t];
        fprintf(pg->f, "<tr><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"name\" title=\"",
                (long long)pr->pid, (long long)pr->ppid);
        page_text(pg, *pr->cmdline ? pr->cmdline : pr->exe);
        fputs("\">", pg->f);
        page_text(pg, process_name(pr));
        fprintf(pg->f, "</td><td class=\"n\">%zu</td>", nth);
        if (pr->end_time < 0) fputs("<td class=\"n\">-</td>", pg->f);
        else fprintf(pg->f, "<td class=\"n\">%.3f s</td>", pr->end_time - pr->start_time);
        fputs("<td>", pg->f);
        ended_cell(pg, p, pr->ended);
        fputs("</td>", pg->f);
        totals_cells(pg, total_row(p, r->proc_total[i]));
        uint32_t j = peak_snapshot(p, i);
        if (j == NONE) {
            fputs("<td class=\"n\">-</td>", pg->f);
        } else {
            char h[64];
            int64_t v = snapshot_total(p, j)->c.v[MEMLIVE];
            fprintf(pg->f, "<td class=\"n\" title=\"%lld bytes live at +%.3f s (snapshot %lld)\">%s</td>", (long long)v,
                    p->snapshots[j].time - pr->start_time, (long long)p->snapshots[j].seq,
                    fmt_human(MEMLIVE, v, h, sizeof h));
        }
        fputs("</tr>\n", pg->f);
    }
    page_table_end(pg);
}

static void thread_rows(struct report *r)
{
    const struct profile *p = r->p;
    struct page *pg = &r->pg;
    int64_t memtot = 0;
    for (size_t t = 0; t < p->nthreads; t++)
        if (r->q->sel.thread_ok[t] && r->thread_total[t] != NONE)
            memtot = sat_add(memtot, p->totals[r->thread_total[t]].c.v[MEMTOT]);
    static const char *const cols[] = { "pid", "tid", "name" };
    totals_header(pg, cols, 3, "share of memtot");
    for (size_t k = 0; k < r->nprocs; k++)
        for (size_t t = 0; t < p->nthreads; t++) {
            const struct thread *th = &p->threads[t];
            if (th->process != r->procs[k] || !r->q->sel.thread_ok[t]) continue;
            const struct total *row = total_row(p, r->thread_total[t]);
            fprintf(pg->f, "<tr><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"name\">",
                    (long long)p->procs[th->process].pid, (long long)th->tid);
            page_text(pg, *r->q->sel.thread_name[t] ? r->q->sel.thread_name[t] : "thread");
            fputs("</td>", pg->f);
            totals_cells(pg, row);
            page_share(pg, row ? row->c.v[MEMTOT] : 0, memtot);
            fputs("</tr>\n", pg->f);
        }
    page_table_end(pg);
}

static void write_threads(struct report *r)
{
    struct page *pg = &r->pg;
    page_section(pg, "threads", "Processes and threads");
    fputs("<h3>Processes</h3>\n", pg->f);
    process_rows(r);
    fputs("<h3>Threads</h3>\n", pg->f);
    thread_rows(r);
    fputs("<p class=\"note\">Exact totals (with the allocations recorded without a stack) at the selected "
          "snapshot; thread names after the rules' thread lines. peak: the live bytes at the process's peak "
          "snapshot.</p>\n</section>\n", pg->f);
}

/* ---------------------------------------------------------------- command */
static void print(struct listing *l, void *arg)
{
    struct report_args *a = arg;
    struct report r = { .c = l->c, .a = a, .l = l, .p = l->q[0].p, .q = &l->q[0] };
    struct outfile out;
    if ((a->rc = output_open(&out, a->out, OUTPUT_FILE))) return;
    r.pg.f = out.f;
    pick_totals(&r);
    pick_views(&r);
    struct strbuf title = { 0 };
    if (a->title) sb_puts(&title, a->title);
    else if (r.nprocs) sb_printf(&title, "mallocprof report: %s", process_name(&r.p->procs[r.procs[0]]));
    else sb_printf(&title, "mallocprof report: %s", path_basename(r.p->path));
    write_head(&r, title.s);
    write_summary(&r);
    write_timeline(&r);
    write_flames(&r);
    write_stacks(&r);
    write_functions(&r);
    write_leaks(&r);
    write_threads(&r);
    page_end(&r.pg);
    sb_free(&title);
    report_free(&r);
    a->rc = output_close(&out, 0);
}

int cmd_report(int argc, char **argv)
{
    struct common c;
    struct report_args a = { 0 };
    const struct opt opts[] = {
        { .name = "output", .letter = 'o', .arg = "FILE", .str = &a.out,
          .help = "write the page to FILE (default: stdout, when it is not\na terminal)" },
        { .name = "title", .arg = "TEXT", .str = &a.title,
          .help = "the page's title (default: 'mallocprof report: COMMAND')" },
        { .letter = 'n', .id = OPT_LIMIT, .arg = "N", .help = "rows of each table (default 20, 0 = all)" },
        OPTION_DEPTH,
        { .name = "min-width", .arg = "PX", .str = &a.min_width_arg,
          .help = "flame graphs: frames narrower than PX pixels are merged\n(default 0.5; mpquery flame's: 0.1)" },
        OPTIONS_DISPLAY("frame display, as in mpquery top --help"),
        OPTIONS_SELECT_EACH,
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable)"),
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "report", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing DB" };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    a.min_width = 0.5;
    if (a.min_width_arg) {
        char *end;
        a.min_width = strtod(a.min_width_arg, &end);
        if (end == a.min_width_arg || *end || !(a.min_width >= 0 && a.min_width <= 1200))
            return usage_error(c.cmd, "bad value '%s' for --min-width (expected pixels, 0 to 1200)", a.min_width_arg);
    }
    if (!a.out && isatty(1))
        return usage_error(c.cmd, "the page is HTML: write it to a file with -o FILE, or to a pipe");
    c.peak_rows = 1;        /* its "memlive at the peak" graph selects the peak */
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    if ((rc = check_output(&c, a.out, &files, 1))) return rc;
    rc = listing_run(&c, &files, 1, print, &a);
    return rc ? rc : a.rc;
}
