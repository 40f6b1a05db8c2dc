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
#include "ledger.h"
#include "procs.h"
#include "report.h"
#include "tempfile.h"

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
    qsort_r(r->procs, r->nprocs, sizeof *r->procs, procs_by_start, (void *)p);
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

/* memtot, ncalls, memlive, the peak's, maxlive; ntemp, time, mapped
 * (mappings) and memcold (MP_COLD) when the profile has them. */
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
    if (r->p->has_mappings) add_view(r, "mapped", "the program's own mappings", MAPPED);
    if (r->p->has_cold) add_view(r, "memcold", "live bytes not written since the previous snapshot", MEMCOLD);
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
    else if (r.nprocs) sb_printf(&title, "mallocprof report: %s", procs_name(&r.p->procs[r.procs[0]]));
    else sb_printf(&title, "mallocprof report: %s", path_basename(r.p->path));
    report_write_head(&r, title.s);
    report_write_summary(&r);
    report_write_timeline(&r);
    report_write_ledger(&r);
    report_write_flames(&r);
    report_write_stacks(&r);
    report_write_functions(&r);
    report_write_leaks(&r);
    report_write_threads(&r);
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
        { .parse = parse_output, .letter = 'n', .id = OPT_LIMIT, .arg = "N", .help = "rows of each table (default 20, 0 = all)" },
        OPTION_DEPTH,
        { .name = "min-width", .arg = "PX", .str = &a.min_width_arg,
          .help = "flame graphs: frames narrower than PX pixels are merged\n(default 0.5; mpquery flame's: 0.1)" },
        OPTIONS_DISPLAY("frame display, as in mpquery top --help"),
        OPTIONS_SELECT_EACH,
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable)"),
        OPTION_QUIET("no line saying what it wrote"),
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
    static const struct output_kind html[] = { { "*.html", 0, "HTML" }, { "*.htm", 0, "HTML" }, { NULL } };
    if (a.out && output_kind(c.cmd, a.out, html, 0) < 0) return 2;
    if (!a.out && isatty(1))
        return usage_error(c.cmd, "the page is HTML: write it to a file with -o FILE.html, or to a pipe");
    c.peak_rows = 1;        /* its "memlive at the peak" graph selects the peak */
    c.profile_flags = PROFILE_LEDGER;   /* its resident memory section */
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    if ((rc = check_output(&c, a.out, &files, 1))) return rc;
    rc = listing_run(&c, &files, 1, print, &a);
    return rc ? rc : a.rc;
}
