/* mpquery check DB [--baseline BASE.db | --server URL --where SQL]: a
 * memory gate for CI. Limits on the profile alone (--max-peak,
 * --max-leaked, --max-calls, over the stacks --filter keeps), and, with a
 * baseline, the growth of every stack (its path after rules, as diff
 * matches them: both profiles viewed into ONE display tree) and every
 * function (self values, as diff --functions) in calls, bytes, peak and
 * leaks. Exit 0 pass, 1 a limit or a growth, 2 usage or bad input (and a
 * report not written, a baseline of another program, nothing checked).
 *
 * The noise each growth must pass (sampling, run-to-run floors, the peak
 * snapshot's window): check_measures.c. */
#include "mpquery.h"
#include "profile.h"
#include "check.h"
#include "hists.h"
#include "commands.h"
#include "load.h"
#include "optdefs.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "server.h"
#include "tempfile.h"
#include "timeline.h"
#include "view.h"

#include <errno.h>
#include <math.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery check DB... [limits] [options]\n"
"       mpquery check DB... --baseline BASE.db [--max-growth PCT] [options]\n"
"       mpquery check DB... --server URL [--where SQL] [options]\n"
"\n"
"A memory gate for CI: exit 0 when the profile passes, 1 when a limit is\n"
"exceeded or something grew, 2 for usage or bad input. Limits apply to the\n"
"profile alone (over the stacks --filter keeps); with a baseline (a file, or\n"
"the runs of a ClickHouse store: by default those of the same executable),\n"
"every stack after rules and every function (self) is compared in calls,\n"
"bytes, peak (live bytes at the peak snapshot) and leaked (live at exit, as\n"
"mpquery leaks counts them) and fails when it grew by more than --max-growth\n"
"and by more than sampling noise explains (--sigmas).\n"
"\n";

static const char more[] =
"\n"
"Growth: after - before > max(PCT % of before, Z sigma), sigma the standard\n"
"deviation of the difference of the two estimates: 0 for full capture (exact),\n"
"for MP_SAMPLE=T profiles sqrt(T x bytes) per side for bytes, peak and\n"
"leaked (a bound for any mix of block sizes), and from each recorded stack's\n"
"mean block size for calls. A new stack or function fails when its growth\n"
"passes the noise. Two sampled runs of the same program pass at the default\n"
"5 sigmas. A side of several runs (files, --run all, a store) is their mean;\n"
"with --server, the runs --where, --exe, --host and --since select, by\n"
"default those of DB's executable. A profile, baseline or store that cannot\n"
"be read, a report that cannot be written, a baseline with no stack in\n"
"common with DB (another program's) and filters that keep no stack (nothing\n"
"checked): one line, exit 2, never 1. --max-peak over all stacks is the process peak, as info\n"
"prints it (maxlive); over those --filter keeps, and a stack's peak, its\n"
"live bytes at the peak snapshot (without one, format version 1 or 2, the\n"
"stack's own peak, maxlive, whose sum is an upper bound).\n"
"\n"
"text: a row per limit (pass or FAIL) and per growth that failed (before,\n"
"after, growth, limit: the most after may be, where), then 'PASS: ...' or\n"
"'FAIL: ...'. json: {\"result\", \"current\", \"baseline\", \"max_growth\",\n"
"\"sigmas\", \"compared\": {\"stacks\", \"functions\"}, \"grown\": {...},\n"
"\"checks\": [{\"check\": \"limit\"|\"stack\"|\"function\", \"measure\", \"before\",\n"
"\"after\", \"limit\", \"noise\", \"pass\", \"frames\"|\"function\"|\"filter\"}]}.\n"
"junit: one testsuite 'mpquery check', a testcase per limit and per (stacks or\n"
"functions, measure), whose failure lists what grew.\n"
"\n"
"example:\n"
"  mpquery check app.db --baseline main.db --max-growth 5\n"
"  mpquery check app.db --max-peak 64M --max-leaked 0 --format junit -o mem.xml\n";

/* ---------------------------------------------------------------- loading */
/* The largest MP_SAMPLE of the profile's processes (bytes; 0: none), or
 * period of a process that sampled from MP_MAX_MEMORY on
 * (MP_SAMPLED_EVERY), read with the recorder's own parser (64K is 65536). */
static double profile_sample(const struct profile *p)
{
    double t = 0;
    static const char *const names[] = { "MP_SAMPLE", "MP_SAMPLED_EVERY" };
    for (size_t i = 0; i < p->nprocs; i++)
        for (size_t k = 0; k < 2; k++) {
            char text[64];
            uint64_t v;
            if (!p->procs[i].settings || mp_setting_value(p->procs[i].settings, names[k], text, sizeof text) ||
                mp_parse_size(text, &v)) continue;
            if ((double)v > t) t = (double)v;
        }
    return t;
}

static int select_kind(const struct common *c, const struct profile *p, int kind, struct selection *s)
{
    char err[512];
    struct select_opts o = c->sel;
    o.snap_kind = kind;
    return select_apply(p, &o, s, err, sizeof err) ? -1 : 0;
}

/* Loads side k: files (f), or with f NULL the store's runs; selects it
 * at exit and at the peak and views it into t. 0 or the exit code. */
static int side_load(struct common *c, const struct dbfiles *f, struct dtree *t, struct side *s)
{
    char err[4400];
    int rc;
    if (f) {
        if ((rc = load_profiles(f, PROFILE_PEAK_ROWS, &s->p))) return rc;
        s->pp = s->p;
    } else {
        if ((rc = server_load(&c->server, -1, 0, &s->p, err, sizeof err)) ||
            (rc = server_load(&c->server, -1, 1, &s->pp, err, sizeof err)))
            return error(rc, "%s", err);
    }
    struct select_opts o = c->sel;
    o.snap_kind = SNAP_LAST;
    if ((rc = select_apply(s->p, &o, &s->last, err, 512))) return error(rc, "%s: %s", s->p->path, err);
    s->has_peak = select_kind(c, s->pp, SNAP_PEAK, &s->peak) == 0;
    if (!s->has_peak) selection_free(&s->peak);
    s->sample = profile_sample(s->p);
    s->scale = s->last.nruns_on > 1 ? 1.0 / (double)s->last.nruns_on : 1;
    s->node = xmalloc((s->p->nstacks + 1) * sizeof *s->node);
    if ((rc = view_build(s->p, &c->view, t, s->node, err, 512))) return error(rc, "check: %s", err);
    s->node_peak = s->node;
    if (s->pp != s->p) {
        s->node_peak = xmalloc((s->pp->nstacks + 1) * sizeof *s->node_peak);
        if ((rc = view_build(s->pp, &c->view, t, s->node_peak, err, 512))) return error(rc, "check: %s", err);
    }
    return 0;
}

static void side_free(struct side *s)
{
    if (!s->p) return;
    selection_free(&s->last);
    if (s->has_peak) selection_free(&s->peak);
    if (s->node_peak != s->node) free(s->node_peak);
    free(s->node);
    if (s->pp != s->p) profile_free(s->pp);
    profile_free(s->p);
}

/* ---------------------------------------------------------------- checks */
static void push(struct check_report *r, size_t *cap, const struct finding *f)
{
    r->f = array_grow(r->f, r->n + 1, cap, sizeof *r->f);
    r->f[r->n++] = *f;
}

/* The process peak of the side's processes, as info prints it (their
 * maxlive, summed; a side of several runs: the mean). */
static double process_peak(const struct side *s)
{
    double sum = 0;
    uint32_t snap;
    for (uint32_t i = 0; i < s->p->nprocs; i++) {
        int64_t v = s->last.proc_snapshot[i] != NONE ? timeline_process_peak(s->p, i, &snap) : -1;
        if (v > 0) sum += (double)v;
    }
    return sum * s->scale;
}

/* Each limit given (limit[m] >= 0) on the current profile's sum; the
 * peak over all stacks is the process peak (info's), over those --filter
 * keeps their live bytes at the peak snapshot. */
static void check_limits(struct check_report *r, size_t *cap, const struct measures *ms, size_t n,
                         const double *limit, const struct side *cur)
{
    for (int m = 0; m < NM; m++) {
        if (limit[m] < 0) continue;
        double sum = 0;
        for (size_t i = 1; i < n; i++) sum += ms->v[1][m][i];
        double whole = m == M_PEAK && !r->c->view.nfilter && !r->c->view.nexclude ? process_peak(cur) : 0;
        if (whole > 0) sum = whole;
        struct finding f = { .kind = K_LIMIT, .measure = m, .item = NONE, .after = sum, .limit = limit[m] };
        f.failed = sum > limit[m];
        r->limits_failed += (size_t)f.failed;
        push(r, cap, &f);
    }
}

/* Items [first, n) of kind (stacks or functions): those that grew past
 * both bounds, in each measure. */
static void check_growth(struct check_report *r, size_t *cap, const struct measures *ms, size_t first, size_t n,
                         int kind, const double *floor)
{
    int which = kind == K_FUNCTION;
    for (size_t i = first; i < n; i++) {
        int any = 0, grew = 0;
        for (int m = 0; m < NM; m++) {
            double a = ms->v[0][m][i], b = ms->v[1][m][i];
            if (a == 0 && b == 0) continue;
            any = 1;
            double noise = r->sigmas * sqrt(ms->var[0][m][i] + ms->var[1][m][i]);
            double pct = a * r->max_growth / 100, allowed = pct > noise ? pct : noise;
            if (allowed < floor[m]) allowed = floor[m];
            if (b - a <= allowed) continue;
            struct finding f = { .kind = kind, .measure = m, .item = (uint32_t)i, .before = a, .after = b,
                                 .limit = a + allowed, .noise = noise, .failed = 1 };
            push(r, cap, &f);
            grew = 1;
        }
        r->compared[which] += (size_t)any;
        r->grown[which] += (size_t)grew;
    }
}

/* ---------------------------------------------------------------- options */
struct check_args {
    char *baseline, *format, *out, *max_growth, *sigmas, *limit_arg[NM];
    char *min_share, *min_bytes, *min_calls;
    double limit[NM];
};

static int parse_size_arg(const char *opt, const char *arg, double *out)
{
    uint64_t v;
    if (mp_option_parse(VAL_SIZE, arg, &v, sizeof v))
        return usage_error("check", "bad value '%s' for %s (expected a size: 1000, 64K, 512M, 2G)", arg, opt);
    *out = (double)v;
    return 0;
}

static int parse_number(const char *opt, const char *arg, double lo, double *out)
{
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || *end || !(v >= lo) || v > 1e15)
        return usage_error("check", "bad value '%s' for %s (expected a number >= %g)", arg, opt, lo);
    *out = v;
    return 0;
}

/* The options' values and how they combine; 0 or 2 (reported). */
static int check_args_parse(struct common *c, struct check_args *a, struct check_report *r)
{
    static const char *const opt[NM] = { "--max-calls", NULL, "--max-peak", "--max-leaked" };
    int rc;
    for (int m = 0; m < NM; m++) {
        a->limit[m] = -1;
        if (!a->limit_arg[m]) continue;
        if (m == M_CALLS) rc = parse_number(opt[m], a->limit_arg[m], 0, &a->limit[m]);
        else rc = parse_size_arg(opt[m], a->limit_arg[m], &a->limit[m]);
        if (rc) return rc;
    }
    r->max_growth = 10, r->sigmas = 5, r->min_share = 0.5, r->min_bytes = 4096, r->min_calls = 10;
    if (a->max_growth && (rc = parse_number("--max-growth", a->max_growth, 0, &r->max_growth))) return rc;
    if (a->min_share && (rc = parse_number("--min-share", a->min_share, 0, &r->min_share))) return rc;
    if (a->min_bytes && (rc = parse_size_arg("--min-bytes", a->min_bytes, &r->min_bytes))) return rc;
    if (a->min_calls && (rc = parse_number("--min-calls", a->min_calls, 0, &r->min_calls))) return rc;
    if (a->sigmas && (rc = parse_number("--sigmas", a->sigmas, 0, &r->sigmas))) return rc;
    r->format = CHECK_TEXT;
    if (a->format && !strcmp(a->format, "json")) r->format = CHECK_JSON;
    else if (a->format && !strcmp(a->format, "junit")) r->format = CHECK_JUNIT;
    else if (a->format && strcmp(a->format, "text"))
        return usage_error("check", "bad value '%s' for --format (expected text, json or junit)", a->format);
    if (r->format != CHECK_TEXT) {      /* json and junit are for programs: raw numbers */
        c->out.format = FMT_JSON;
        output_readable(&c->out, &c->view);
    }
    /* whole names in every format: shortened ones (std::vector<…>, no
     * parameters) would merge stacks, and the verdict would depend on
     * the format (text passed two clang runs json failed) */
    c->view.collapse = 0, c->view.no_signatures = 0;
    if (a->baseline && c->server.url) return usage_error("check", "--baseline and --server do not combine");
    int baseline = a->baseline || c->server.url;
    if (!baseline && (a->max_growth || a->sigmas || a->min_share || a->min_bytes || a->min_calls))
        return usage_error("check", "--max-growth, --sigmas and --min-* need a baseline (--baseline or --server)");
    if (!baseline && a->limit[M_CALLS] < 0 && a->limit[M_PEAK] < 0 && a->limit[M_LEAKED] < 0)
        return usage_error("check", "nothing to check: give a limit (--max-peak, --max-leaked, --max-calls) "
                                    "or a baseline (--baseline, --server)");
    return 0;
}

/* --server without --where or --exe: the runs of the current profile's
 * executable (its first process's), by file name: CI builds it in
 * another directory each time. */
static void default_server_runs(struct common *c, const struct profile *p)
{
    if (c->server.where || c->server.exe || !p->nprocs) return;
    const char *slash = strrchr(p->procs[0].exe, '/');
    c->server.exe = slash ? slash + 1 : p->procs[0].exe;
}

/* The least growth judged per measure: --min-share of the baseline's
 * total, at least --min-calls or --min-bytes; for the peak, plus both
 * sides' windows. */
static void growth_floors(struct check_report *r, const struct side *s)
{
    for (int m = 0; m < NM; m++) {
        double least = m == M_CALLS ? r->min_calls : r->min_bytes, share = r->min_share / 100 * s[0].total[m];
        r->floor[m] = share > least ? share : least;
    }
    r->floor[M_PEAK] += s[0].window + s[1].window;
}

/* ---------------------------------------------------------------- nothing to compare */
/* The filters keep no stack of either side: nothing would be checked (a
 * limit on nothing always passes). 0, or 2 reported. */
static int nothing_kept(const struct check_report *r, const struct measures *ms, size_t n, int nsides)
{
    const struct common *c = r->c;
    if (!c->view.nfilter && !c->view.nexclude) return 0;
    for (size_t i = 1; i < n; i++)
        for (int k = 2 - nsides; k < 2; k++)
            for (int m = 0; m < NM; m++)
                if (ms->v[k][m][i] != 0) return 0;
    struct strbuf what = { 0 };
    if (r->filter) sb_printf(&what, "--filter '%s'", r->filter);
    for (size_t i = 0; i < c->view.nexclude; i++)
        sb_printf(&what, "%s'%s'", i ? "|" : r->filter ? " and --exclude " : "--exclude ", c->view.exclude[i]);
    const char *verb = r->filter && c->view.nexclude ? "keep" : "keeps";
    int rc = nsides == 2 ? error(EXIT_BAD_INPUT, "check: %s %s no stack of %s or %s: nothing was checked", what.s,
                                 verb, r->current, r->baseline)
                         : error(EXIT_BAD_INPUT, "check: %s %s no stack of %s: nothing was checked", what.s, verb,
                                 r->current);
    sb_free(&what);
    return rc;
}

/* The executable's file name of a side's first process ("?" : none). */
static const char *exe_name(const struct side *s)
{
    if (!s->p->nprocs) return "?";
    const char *slash = strrchr(s->p->procs[0].exe, '/');
    return slash ? slash + 1 : s->p->procs[0].exe;
}

/* Both sides have stacks, none of them in common (filters aside): the
 * baseline is another program's, and every stack would be "new". 0, or 2
 * reported. */
static int no_stack_in_common(const struct check_report *r, const struct dtree *t, const struct side *s)
{
    size_t n[3];
    stacks_in_common(t, s, n);
    if (!n[0] || !n[1] || n[2]) return 0;
    return error(EXIT_BAD_INPUT, "check: %s (%s, %zu stack%s) and the baseline %s (%s, %zu stack%s) have no stack "
                 "in common: a baseline of another program?", r->current, exe_name(&s[1]), n[1], n[1] == 1 ? "" : "s",
                 r->baseline, exe_name(&s[0]), n[0], n[0] == 1 ? "" : "s");
}

/* The report to -o FILE or stdout. A failure to write it is bad input
 * (2, one line), never a failed gate (1). */
static int write_report(const struct check_report *r, const char *out)
{
    struct outfile of;
    int rc = output_open(&of, out, OUTPUT_FILE);
    if (rc) return EXIT_BAD_INPUT;
    check_print(r, of.f);
    if ((rc = output_close(&of, 0))) return EXIT_BAD_INPUT;
    if (out) return 0;
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
    rc = error(EXIT_BAD_INPUT, "check: stdout: write error: %s", strerror(errno ? errno : EIO));
    __fpurge(stdout);           /* said once: main's own check finds nothing left */
    clearerr(stdout);
    return rc;
}

/* ---------------------------------------------------------------- the run */
static int run(struct common *c, struct check_args *a, struct check_report *r, const struct dbfiles *files)
{
    struct ruleset *rules = NULL, *suppress = NULL, *builtin = NULL;
    struct side s[2] = { { 0 }, { 0 } };
    struct dtree t;
    dtree_init(&t);
    int nsides = a->baseline || c->server.url ? 2 : 1, rc;
    c->rules.builtin_suppressions = 1;      /* leaked: as mpquery leaks counts it */
    if ((rc = load_rules(c, &rules)) || (rc = load_suppressions(c, &suppress, &builtin))) goto out;
    /* a profile that cannot be read is bad input (2), not a failed gate (1) */
    if ((rc = side_load(c, files, &t, &s[1]))) goto bad;
    struct dbfiles base = { &a->baseline, 1 };
    if (c->server.url) default_server_runs(c, s[1].p);
    if (nsides == 2 && (rc = side_load(c, c->server.url ? NULL : &base, &t, &s[0]))) goto bad;
    struct measures node, fn;
    measures_alloc(&node, t.n);
    side_measures(&t, &s[1], 1, &node);
    side_totals(&s[1]);
    if (nsides == 2) side_measures(&t, &s[0], 0, &node), side_totals(&s[0]);
    growth_floors(r, s);
    function_measures(&t, &node, &fn);
    size_t cap = 0;
    r->t = &t;
    r->current = s[1].p->path;
    r->baseline = nsides == 2 ? (c->server.url ? c->server.url : s[0].p->path) : NULL;
    r->sampled[0] = s[0].sample > 0, r->sampled[1] = s[1].sample > 0;
    if ((rc = nothing_kept(r, &node, t.n, nsides)) || (nsides == 2 && (rc = no_stack_in_common(r, &t, s)))) {
        measures_free(&node);
        measures_free(&fn);
        goto out;
    }
    check_limits(r, &cap, &node, t.n, a->limit, &s[1]);
    if (nsides == 2) {
        check_growth(r, &cap, &node, 1, t.n, K_STACK, r->floor);
        check_growth(r, &cap, &fn, 0, t.labels.n, K_FUNCTION, r->floor);
    }
    rc = write_report(r, a->out);
    if (!rc && (r->limits_failed || r->grown[0] || r->grown[1])) rc = EXIT_FAILED;
    measures_free(&node);
    measures_free(&fn);
    free(r->f);
    goto out;
bad:
    rc = EXIT_BAD_INPUT;
out:
    side_free(&s[0]);
    side_free(&s[1]);
    dtree_free(&t);
    rules_free(rules);
    rules_free(suppress);
    rules_free(builtin);
    return rc;
}

int cmd_check(int argc, char **argv)
{
    struct common c;
    struct check_args a = { 0 };
    const struct opt opts[] = {
        { .name = "max-peak", .arg = "SIZE", .str = &a.limit_arg[M_PEAK],
          .help = "fail when the live bytes at the peak exceed SIZE (64K,\n"
                  "512M, 2G)" },
        { .name = "max-leaked", .arg = "SIZE", .str = &a.limit_arg[M_LEAKED],
          .help = "fail when the bytes leaked (live at exit, as mpquery leaks\n"
                  "counts them) exceed SIZE" },
        { .name = "max-calls", .arg = "N", .str = &a.limit_arg[M_CALLS],
          .help = "fail when the allocations exceed N" },
        { .name = "baseline", .arg = "BASE.db", .str = &a.baseline,
          .help = "compare with this profile: fail when a stack or function\n"
                  "grew (calls, bytes, peak, leaked)" },
        { .name = "max-growth", .arg = "PCT", .str = &a.max_growth,
          .help = "growth allowed, in percent of the baseline (default 10)" },
        { .name = "min-share", .arg = "PCT", .str = &a.min_share,
          .help = "a growth smaller than PCT percent of the baseline's total\n"
                  "(calls, bytes; the peak for peak and leaked) never fails\n"
                  "(default 0.5): real runs differ that much" },
        { .name = "min-bytes", .arg = "SIZE", .str = &a.min_bytes,
          .help = "nor one smaller than SIZE bytes (default 4K)" },
        { .name = "min-calls", .arg = "N", .str = &a.min_calls,
          .help = "nor one of fewer than N calls (default 10)" },
        { .name = "sigmas", .arg = "Z", .str = &a.sigmas,
          .help = "sampled profiles: growth allowed, in standard deviations\n"
                  "of the sampling noise (default 5)" },
        OPTIONS_FILTER,
        OPTION_NATIVE("Python stacks with every native frame, for the filters\n(default: Python first, as mpquery top --help-all says)"),
        OPTION_RUN(HELP_RUN), OPTION_EXE(HELP_EXE),
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable)"),
        { OPTG_RULES, .name = "suppressions", .id = OPT_SUPPRESSIONS, .arg = "FILE",
          .help = "known leaks, as mpquery leaks takes them (repeatable)" },
        OPTIONS_READABLE,
        { .name = "format", .arg = "F", .str = &a.format, .help = "text (default), json or junit (JUnit XML)" },
        { .name = "output", .letter = 'o', .arg = "FILE", .str = &a.out, .help = "write to FILE instead of stdout" },
        OPTIONS_SERVER,
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "check", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing DB", .readable = 1, .server_and_files = 1 };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    struct check_report r = { .c = &c };
    if ((rc = check_args_parse(&c, &a, &r))) return rc;
    struct dbfiles files[2] = { dbfiles_of(argc, argv, optind), { &a.baseline, a.baseline ? 1 : 0 } };
    if ((rc = check_output(&c, a.out, files, 2))) return rc;
    char joined[1024] = "";
    for (size_t i = 0; i < c.view.nfilter; i++)
        snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", i ? "|" : "", c.view.filter[i]);
    r.filter = c.view.nfilter ? joined : NULL;
    return run(&c, &a, &r, &files[0]);
}
