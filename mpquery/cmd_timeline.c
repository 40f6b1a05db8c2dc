/* mpquery timeline DB: memory over time, from the ticks and snapshots
 * (timeline.c builds and draws it): per process, its totals at each of
 * its ticks and snapshots (peak snapshots aside), the whole tree, and with
 * --stacks N the N stacks that held the most at the peak, as more series.
 * Text (a table, the default wherever stdout goes), csv or json (one row
 * a point, the tree's rows with pid 0) or, with -o FILE.svg or --format
 * svg, an SVG plot: panels of live bytes, RSS, bytes allocated and calls
 * over the time from the first process's start. */
#include "timeline.h"
#include "commands.h"
#include "listing.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "select.h"
#include "tempfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery timeline DB... [options]\n"
"\n"
"Memory over time: per process and for the whole tree, ncalls, memtot,\n"
"memlive and RSS at each point the recorder took (every few milliseconds by\n"
"default: MP_TICK, 100 to 200 points a process) and at each snapshot; time in\n"
"seconds from the start of the first process, as info's times. Peak\n"
"snapshots are left out of the rows (mpquery info lists them); the plot\n"
"marks the peak: one process's peak snapshot ('peak', info's and report's\n"
"figure; the highest point too where the curve rises above it), or for\n"
"several the whole tree's highest point ('highest sampled': a maximum of\n"
"the points, which can miss a peak between two).\n"
"\n";

static const char more[] =
"\n"
"--since and --until: the points in that window, each counter (ncalls,\n"
"memtot, memlive, maxlive, the stacks' live bytes) less its value at the\n"
"process's snapshot at --since (the last at or before it): the last row\n"
"of a process is what top with the same window totals (see mpquery top\n"
"--help-all, Time windows); rss and mapped as they were. With\n"
"--shade-window (svg only), the plot is of the whole run instead, the\n"
"window shaded on every panel (mpquery serve's chart).\n"
"\n"
"Formats: a table (text, to a terminal or a pipe alike); an SVG plot with\n"
"-o FILE.svg or --format svg (panels of live bytes, resident bytes when\n"
"ticks measured them, bytes allocated, calls); csv and json have one row a\n"
"point: time, pid (0 for the whole tree), seq, reason ('tick' for a point\n"
"between snapshots), label, ncalls, memtot, memlive, maxlive, rss, then\n"
"stack_ID (its live bytes at the snapshots) for each of the --stacks ones.\n"
"json: {\"rows\": [...]}.\n"
"\n"
"examples:\n"
"  mpquery record -o app.db -- ./app\n"
"  mpquery timeline app.db -o app-timeline.svg --stacks 5\n"
"  mpquery timeline app.db --format csv\n";

static char *format_arg, *out_arg, *stacks_arg;
static int shade_window;

static const struct opt opts[] = {
    OPTION_RUN(HELP_RUN), OPTION_PID(HELP_PID), OPTION_IMAGE(HELP_IMAGE), OPTION_EXE(HELP_EXE),
    OPTIONS_WINDOW,
    { .name = "stacks", .arg = "N", .str = &stacks_arg,
      .help = "also the N stacks that held the most at the peak (top\n"
                                    "--snapshot peak --by memlive's first N)" },
    { .name = "shade-window", .flag = &shade_window, .value = 1,
      .help = "svg: the whole run, --since..--until shaded (not the\n"
                                    "window's points only)" },
    { .name = "format", .arg = "F", .str = &format_arg, .help = "text, csv, json or svg (see below)" },
    { .name = "output", .letter = 'o', .arg = "FILE", .str = &out_arg, .help = "write to FILE instead of stdout" },
    OPTION_QUIET("with -o, no line saying what it wrote"),
    OPTIONS_RULES("--stacks: a rules file for their names (repeatable)"),
    OPTIONS_DISPLAY("--stacks: frames with file:line; all of a Python stack's;\nwithout inlined frames; by module"),
    OPTIONS_READABLE,
    { 0 },
};

enum { OUT_TEXT, OUT_CSV, OUT_JSON, OUT_SVG };

/* The output's kind: --format's, else -o's name's, else text; -1 (said)
 * for a bad one. */
static int out_of_options(void)
{
    int out;
    static const struct output_kind kinds[] = {
        { "*.svg", OUT_SVG, "an SVG plot" }, { "*.txt", OUT_TEXT, "text" }, { "*.csv", OUT_CSV, "csv" },
        { "*.json", OUT_JSON, "json" }, { NULL }
    };
    if (!format_arg) {
        if (out_arg && (out = output_kind("timeline", out_arg, kinds, OUT_TEXT)) < 0) return -1;
        if (!out_arg) out = OUT_TEXT;      /* a terminal or a pipe: text, as every command */
    } else {
        static const char *const names[] = { "text", "csv", "json", "svg" };
        out = -1;
        for (int i = 0; i < 4; i++) if (!strcmp(format_arg, names[i])) out = i;
        if (out < 0) usage_error("timeline", "bad value '%s' for --format (expected text, csv, json or svg)", format_arg);
    }
    return out;
}

/* The rows (text, csv or json) into f. */
static void write_rows(FILE *f, const struct timeline *tl, int out, int human)
{
    struct table tab;
    char (*names)[40] = xcalloc(tl->nstacks + 1, sizeof *names);
    timeline_table(tl, &tab, names, human);
    if (out == OUT_JSON) {
        struct json w;
        json_init(&w, f);
        json_open(&w, '{');
        json_rows_last(&w, "rows", &tab);
    } else {
        table_print(&tab, out == OUT_CSV ? FMT_CSV : FMT_TEXT, f);
    }
    table_free(&tab);
    free(names);
}

/* --shade-window: o's window, times of the plot (from tl->t0), into so;
 * 0, or EXIT_BAD_INPUT (said) for a bad window. */
static int shade_of(const struct select_opts *o, const struct timeline *tl, struct timeline_svg *so)
{
    char err[512];
    double since, until;
    if (window_ends(tl->p, tl->p->procs[tl->procs[0]].run, o, &since, &until, err, sizeof err))
        return error(EXIT_BAD_INPUT, "%s", err);
    so->shade = 1;
    so->shade_from = since < 0 ? -1 : since - tl->t0;
    so->shade_to = until >= 1e300 ? 1e300 : until - tl->t0;
    return 0;
}

/* --stacks' display tree: the series are its nodes (stacks merged as top
 * merges them: the rules applied, a Python stack shown Python first
 * unless --native) and named by its labels, as every other view names
 * them: the tree mpquery serve keeps (listing_tree_get: kept for the
 * listings that follow), else one built here. */
struct stack_view { const struct listing_tree *kept; struct dtree t; uint32_t *stack_node; struct ruleset *rules; };

static int stack_view(struct common *c, const struct dbfiles *f, const struct profile *p, struct stack_view *sv,
                      struct timeline *tl)
{
    char err[512];
    int rc = load_rules(c, &sv->rules);
    if (rc) return rc;
    dtree_init(&sv->t);
    if ((sv->kept = listing_tree_get(c, f, p))) {
        tl->stack_node = sv->kept->stack_node, tl->nnodes = sv->kept->t.n;
        return 0;
    }
    sv->stack_node = xmalloc((p->nstacks + 1) * sizeof *sv->stack_node);
    if ((rc = view_build(p, &c->view, &sv->t, sv->stack_node, err, sizeof err))) return error(rc, "timeline: %s", err);
    tl->stack_node = sv->stack_node, tl->nnodes = sv->t.n;
    return 0;
}

/* Per series of tl, its node's label (the leaf as the views show it). */
static char **stack_view_names(const struct stack_view *sv, const struct timeline *tl)
{
    const struct dtree *t = sv->kept ? &sv->kept->t : &sv->t;
    char **names = xcalloc(tl->nstacks + 1, sizeof *names);
    for (size_t s = 0; s < tl->nstacks; s++) {
        uint32_t label = t->label[tl->stack_node[tl->stacks[s]]];
        names[s] = xmalloc(t->labels.len[label] + 1);
        memcpy(names[s], t->labels.str[label], t->labels.len[label]);
        names[s][t->labels.len[label]] = 0;
    }
    return names;
}

static void stack_view_free(struct stack_view *sv, char **names, size_t n)
{
    for (size_t s = 0; names && s < n; s++) free(names[s]);
    free(names);
    dtree_free(&sv->t);
    free(sv->stack_node);
    rules_free(sv->rules);
}

int cmd_timeline(int argc, char **argv)
{
    struct common c;
    const struct cmd_opts d = { .cmd = "timeline", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing DB" };
    format_arg = out_arg = stacks_arg = NULL;
    shade_window = 0;
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    int64_t nstacks = 0;
    if (stacks_arg && (parse_int64(stacks_arg, &nstacks) || nstacks < 0 || nstacks > 100))
        return usage_error("timeline", "--stacks %s: a count from 0 to 100", stacks_arg);
    int out = out_of_options();
    if (out < 0) return EXIT_BAD_INPUT;
    if (shade_window && out != OUT_SVG) return usage_error("timeline", "--shade-window is for the svg plot");
    /* text for people once the format is known (svg, csv, json: whole lines, raw numbers) */
    c.out.format = out == OUT_TEXT ? FMT_TEXT : out == OUT_SVG ? FMT_SVG : out == OUT_CSV ? FMT_CSV : FMT_JSON;
    output_readable(&c.out, &c.view);
    struct profile *p;
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    if ((rc = check_output(&c, out_arg, &files, 1))) return rc;
    if ((rc = load_profiles(&files, 1, &p))) return rc;      /* the peaks' rows: the stacks held at the peak */
    struct selection sel;
    struct timeline tl = { .p = p };
    struct timeline_svg so = { .peaks = 1 };
    c.sel.window_quiet = out == OUT_CSV || out == OUT_JSON || mpquery_quiet;
    struct select_opts window = c.sel;
    if (shade_window) c.sel.since = c.sel.until = NULL;     /* the whole run's points */
    struct stack_view sv = { 0 };
    char **names = NULL;
    if (nstacks && (rc = stack_view(&c, &files, p, &sv, &tl))) {
        stack_view_free(&sv, NULL, 0);
        profile_free(p);
        return rc;
    }
    if (!(rc = select_or_report(&c, p, &sel))) {
        timeline_build(&tl, p, &sel, (size_t)nstacks);
        if (!tl.nprocs) rc = error(EXIT_BAD_INPUT, "%s: no process with a snapshot in this selection", p->path);
    }
    if (!rc && nstacks) so.stack_names = (const char *const *)(names = stack_view_names(&sv, &tl));
    if (!rc && shade_window && (window.since || window.until)) rc = shade_of(&window, &tl, &so);
    struct outfile of;
    if (!rc) rc = output_open(&of, out_arg, OUTPUT_FILE);
    if (!rc) {
        FILE *f = of.f;
        if (out == OUT_SVG) timeline_svg(f, &tl, &so);
        else write_rows(f, &tl, out, c.out.human);
        rc = output_close(&of, 0);
    }
    stack_view_free(&sv, names, tl.nstacks);
    timeline_free(&tl);
    selection_free(&sel);
    profile_free(p);
    return rc;
}
