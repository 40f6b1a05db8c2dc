/* What the listing commands share: the options every one of them takes
 * (--run, --pid, --thread, --snapshot, --rules, --format, --by, ...), the
 * way errors are reported ("mpquery: FILE: what is wrong", exit 2 for bad
 * input), loading a profile, and finding the filters/ directory next to the
 * executable. Commands return exit codes; only main exits. */
#include "mpquery.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const counter_name[NCOUNTERS] = { "ncalls", "memtot", "nfree", "memlive", "maxlive" };

int counter_parse(const char *name)
{
    for (int i = 0; i < NCOUNTERS; i++)
        if (!strcmp(name, counter_name[i])) return i;
    return -1;
}

void common_init(struct common *c, const char *cmd)
{
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->sel.snap_kind = SNAP_LAST;
    c->format = FMT_TEXT;
    c->by = MEMTOT;
    c->depth = 5;
    c->limit = 20;
    c->view.filter = c->filters;
    c->view.exclude = c->excludes;
}

int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "mpquery: %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see mpquery %s --help)\n", cmd);
    return EXIT_BAD_INPUT;
}

int bad_option(const char *cmd, int opt, char **argv)
{
    const char *arg = argv[optind - 1];
    if (opt == ':') return usage_error(cmd, "option %s needs a value", arg);
    if (optopt > 0 && optopt < 256) return usage_error(cmd, "unknown option -%c", optopt);
    return usage_error(cmd, "unknown option %s", arg);
}

static int bad_value(struct common *c, const char *opt, const char *arg, const char *expected)
{
    usage_error(c->cmd, "bad value '%s' for %s (expected %s)", arg, opt, expected);
    return -2;
}

int common_option(struct common *c, int opt, const char *arg)
{
    int64_t v;
    switch (opt) {
    case OPT_RUN:
        if (!strcmp(arg, "all")) { c->sel.run_all = 1; return 1; }
        if (!strcmp(arg, "latest")) { c->sel.run_all = c->sel.has_run = 0; return 1; }
        if (parse_int64(arg, &c->sel.run_id)) return bad_value(c, "--run", arg, "a run id, latest or all");
        c->sel.has_run = 1;
        c->sel.run_all = 0;
        return 1;
    case OPT_PID:
        if (parse_int64(arg, &c->sel.pid)) return bad_value(c, "--pid", arg, "a process id");
        c->sel.has_pid = 1;
        return 1;
    case OPT_THREAD:
        if (parse_int64(arg, &c->sel.tid)) return bad_value(c, "--thread", arg, "a thread id (tid)");
        c->sel.has_tid = 1;
        return 1;
    case OPT_SNAPSHOT:
        if (select_parse_snapshot(arg, &c->sel))
            return bad_value(c, "--snapshot", arg,
                             "last, a sequence number N >= 1, id:N or label:TEXT, TEXT not empty");
        return 1;
    case OPT_RULES:
        if (c->nrules_files == sizeof c->rules_files / sizeof *c->rules_files)
            return bad_value(c, "--rules", arg, "at most 64 rules files");
        c->rules_files[c->nrules_files++] = arg;
        return 1;
    case OPT_NO_DEFAULT_RULES: c->no_default_rules = 1; return 1;
    case OPT_FORMAT:
        if ((c->format = format_parse(arg)) < 0) return bad_value(c, "--format", arg, "text, csv or json");
        return 1;
    case OPT_BY:
        if ((c->by = counter_parse(arg)) < 0)
            return bad_value(c, "--by", arg, "ncalls, memtot, nfree, memlive or maxlive");
        return 1;
    case 'n':
        if (parse_int64(arg, &v) || v < 0 || v > 100000000) return bad_value(c, "-n", arg, "a count >= 0 (0 = all)");
        c->limit = (int)v;
        return 1;
    case OPT_DEPTH:
        if (parse_int64(arg, &v) || v < 0 || v > 100000) return bad_value(c, "--depth", arg, "a frame count >= 0 (0 = all)");
        c->depth = (int)v;
        return 1;
    case OPT_NO_INLINE: c->view.no_inline = 1; return 1;
    case OPT_LINES: c->view.lines = 1; return 1;
    case OPT_MODULE: c->view.module = 1; return 1;
    case OPT_FILTER: case OPT_EXCLUDE: {
        size_t *n = opt == OPT_FILTER ? &c->view.nfilter : &c->view.nexclude;
        const char **list = opt == OPT_FILTER ? c->filters : c->excludes;
        if (*n == 64) return bad_value(c, opt == OPT_FILTER ? "--filter" : "--exclude", arg, "at most 64 of them");
        list[(*n)++] = arg;
        return 1;
    }
    }
    return 0;
}

int load_profile(const char *path, struct profile **p)
{
    char err[4400];
    int rc = profile_load(path, p, err, sizeof err);
    if (rc) return error(rc, "%s: %s", path, err);
    return 0;
}

int select_or_report(const struct common *c, const struct profile *p, struct selection *s)
{
    char err[512];
    int rc = select_apply(p, &c->sel, s, err, sizeof err);
    if (rc) return error(rc, "%s: %s", p->path, err);
    return 0;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *filters_dir(void)
{
    static const char *const candidates[] = {
        "/../filters", "/../../filters", "/../share/mallocprof/filters",
    };
    char *dir = exe_dir();
    if (!dir) return NULL;
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
        sb.len = 0;
        sb_printf(&sb, "%s%s/default.rules", dir, candidates[i]);
        if (is_file(sb.s)) {
            sb.len -= strlen("/default.rules");
            sb.s[sb.len] = 0;
            free(dir);
            return sb.s;
        }
    }
    free(dir);
    sb_free(&sb);
    return NULL;
}

/* --rules NAME also finds filters/NAME and filters/NAME.rules. */
static char *find_rules_file(const char *name, const char *dir)
{
    if (is_file(name) || strchr(name, '/') || !dir) return xstrdup(name);
    struct strbuf sb = { 0 };
    sb_printf(&sb, "%s/%s", dir, name);
    if (is_file(sb.s)) return sb.s;
    sb_puts(&sb, ".rules");
    if (is_file(sb.s)) return sb.s;
    sb_free(&sb);
    return xstrdup(name);
}

int load_rules(struct common *c, struct ruleset **out)
{
    char err[8192];
    char *dir = filters_dir();
    struct ruleset *rs = rules_new();
    int rc = 0;
    *out = NULL;
    if (!c->no_default_rules) {
        if (dir) {
            struct strbuf sb = { 0 };
            sb_printf(&sb, "%s/default.rules", dir);
            rc = rules_load(rs, sb.s, err, sizeof err);
            sb_free(&sb);
        } else {
            warning("filters/default.rules not found next to the executable; "
                    "continuing without default rules");
        }
    }
    for (size_t i = 0; !rc && i < c->nrules_files; i++) {
        char *path = find_rules_file(c->rules_files[i], dir);
        rc = rules_load(rs, path, err, sizeof err);
        free(path);
    }
    free(dir);
    if (rc) {
        rules_free(rs);
        return error(rc, "%s", err);
    }
    *out = rs;
    c->view.rules = rs;
    return 0;
}

int query_run(const struct common *c, const char *path, struct dtree *t, struct query *q)
{
    char err[512];
    memset(q, 0, sizeof *q);
    int rc = load_profile(path, &q->p);
    if (rc) return rc;
    if ((rc = select_or_report(c, q->p, &q->sel))) return rc;
    q->stack_node = xmalloc((q->p->nstacks ? q->p->nstacks : 1) * sizeof *q->stack_node);
    if ((rc = view_build(q->p, &c->view, t, q->stack_node, err, sizeof err)))
        return error(rc, "%s: %s", c->cmd, err);
    return 0;
}

void query_free(struct query *q)
{
    selection_free(&q->sel);
    free(q->stack_node);
    profile_free(q->p);
    memset(q, 0, sizeof *q);
}
