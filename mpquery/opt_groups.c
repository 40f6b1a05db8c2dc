/* The option groups together (opt_groups.h): parse_options, the
 * commands' way into options.c's table parser, with the groups' defaults
 * and what they decide together; and the parsers of the groups declared
 * in rules.h, view.h, output.h and server.h (select.h's are in select.c):
 * each takes one option of its group, by id, into the group's struct, and
 * reports a bad value as a usage error (options.c's bad_value). Values
 * are checked here, once; the modules that read the structs trust them.
 * What the output's options decide is applied here too: text for people
 * (output_readable, the terminal's width and pager) and -q (status_line). */
#include "mpquery.h"
#include "counters.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "server.h"
#include "view.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int rules_option(struct rules_opts *o, const char *cmd, int id, const char *arg)
{
    if (id == OPT_NO_DEFAULT_RULES) {
        o->no_default = 1;
        return 0;
    }
    if (id == OPT_SUPPRESSIONS)
        return option_list_add(o->suppressions, &o->nsuppressions, cmd, "--suppressions", arg,
                               "at most 64 suppressions files");
    return option_list_add(o->files, &o->nfiles, cmd, "--rules", arg, "at most 64 rules files");
}

int view_option(struct view_opts *o, const char *cmd, int id, const char *arg)
{
    switch (id) {
    case OPT_NO_INLINE: o->no_inline = 1; return 0;
    case OPT_LINES: o->lines = 1; return 0;
    case OPT_MODULE: o->module = 1; return 0;
    case OPT_NATIVE: o->native = 1; return 0;
    case OPT_FILTER: return option_list_add(o->filter, &o->nfilter, cmd, "--filter", arg, "at most 64 of them");
    }
    return option_list_add(o->exclude, &o->nexclude, cmd, "--exclude", arg, "at most 64 of them");
}

void output_opts_init(struct output_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = FMT_TEXT;
    o->by = MEMTOT;
    o->depth = 5;
    o->limit = 20;
    o->signatures = -1;
}

/* A count option's value: a whole number in 0..max. */
static int parse_count(const char *arg, int64_t max, int *out)
{
    int64_t v;
    if (parse_int64(arg, &v) || v < 0 || v > max) return -1;
    *out = (int)v;
    return 0;
}

/* The formats the --format entry's help names ("text (default), csv or
 * json"): one of them into o->format, or bad_value listing them. */
static int take_format(struct output_opts *o, const char *cmd, const char *arg)
{
    const char *help = o->formats ? o->formats : "text, csv or json";
    int f = format_parse(arg);
    if (f >= 0 && strstr(help, fmt_name[f])) {
        o->format = f;
        return 0;
    }
    char expected[128] = "";
    size_t n = 0, k = 0;
    for (int i = 0; fmt_name[i]; i++) n += strstr(help, fmt_name[i]) != NULL;
    for (int i = 0; fmt_name[i]; i++)
        if (strstr(help, fmt_name[i])) {
            size_t len = strlen(expected);
            snprintf(expected + len, sizeof expected - len, "%s%s", k == 0 ? "" : k + 1 == n ? " or " : ", ",
                     fmt_name[i]);
            k++;
        }
    return bad_value(cmd, "--format", arg, expected);
}

int counter_width_check(const char *cmd, int counter)
{
    if (!counter_is_max(counter)) return 0;
    return usage_error(cmd, "--by %s: an age (a stack's largest), not an amount: it cannot be a width",
                       counter_name[counter]);
}

int output_option(struct output_opts *o, const char *cmd, int id, const char *arg)
{
    switch (id) {
    case OPT_FORMAT: return take_format(o, cmd, arg);
    case OPT_BY:
        if ((o->by = counter_parse(arg)) < 0) return bad_value(cmd, "--by", arg, COUNTER_LIST);
        o->by_given = 1;
        return 0;
    case OPT_LIMIT:
        if (parse_count(arg, 100000000, &o->limit)) return bad_value(cmd, "-n", arg, "a count >= 0 (0 = all)");
        return 0;
    case OPT_DEPTH:
        if (parse_count(arg, 100000, &o->depth))
            return bad_value(cmd, "--depth", arg, "a frame count >= 0 (0 = all)");
        o->depth_given = 1;
        return 0;
    case OPT_FULL_NAMES: o->full_names = 1; return 0;
    case OPT_SIGNATURES: o->signatures = 1; return 0;
    case OPT_NO_SIGNATURES: o->signatures = 0; return 0;
    case OPT_BYTES: o->bytes = 1; return 0;
    case OPT_NO_PAGER: o->no_pager = 1; return 0;
    case OPT_QUIET: o->quiet = mpquery_quiet = 1; return 0;
    }
    return 0;
}

void output_readable(struct output_opts *o, struct view_opts *v)
{
    int text = o->format == FMT_TEXT;
    v->collapse = text && !o->full_names;
    v->no_signatures = o->signatures < 0 ? text : !o->signatures;
    o->human = text && !o->bytes;
    o->pager = !o->no_pager;
    o->width = text ? terminal_width() : 0;
    terminal_output(o->width, o->pager);    /* csv, json: paged too, lines whole */
}

int mpquery_quiet;

void status_line(const char *fmt, ...)
{
    if (mpquery_quiet) return;
    va_list ap;
    fflush(stdout);
    fputs("mpquery: ", stderr);
    va_start(ap, fmt);
    text_vprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int server_option(struct server_opts *o, int id, const char *arg)
{
    switch (id) {
    case OPT_SERVER: o->url = arg; return 0;
    case OPT_WHERE: o->where = arg; return 0;
    case OPT_HOST: o->host = arg; return 0;
    }
    o->since = arg;
    return 0;
}

int parse_rules(struct common *c, const struct opt *o, const char *arg, int placed)
{
    (void)placed;
    return rules_option(&c->rules, c->cmd, o->id, arg);
}

int parse_view(struct common *c, const struct opt *o, const char *arg, int placed)
{
    (void)placed;
    return view_option(&c->view, c->cmd, o->id, arg);
}

int parse_output(struct common *c, const struct opt *o, const char *arg, int placed)
{
    (void)placed;
    if (o->id == OPT_FORMAT) c->out.formats = o->help;     /* the formats it takes */
    return output_option(&c->out, c->cmd, o->id, arg);
}

int parse_server(struct common *c, const struct opt *o, const char *arg, int placed)
{
    (void)placed;
    return server_option(&c->server, o->id, arg);
}

/* --server reads a store, not files, and selects runs by their
 * attributes: what selects processes, threads or snapshots of files does
 * not apply (but --snapshot last or peak); its selection options need it. */
static int server_options(struct common *c, int operands, int with_files)
{
    struct server_opts *s = &c->server;
    if (c->sel.group_by && c->sel.per_thread)
        return usage_error(c->cmd, "--group does not combine with --per-thread or --group-threads");
    if (!s->url) {
        if (s->where || s->host || s->since || s->side_where[0] || s->side_where[1])
            return usage_error(c->cmd, "--where, --host and --since select runs of --server URL");
        return 0;
    }
    s->exe = c->sel.exe;        /* --exe: the store's runs of it (whole trees), not its processes */
    c->sel.exe = NULL;
    if (operands && !with_files) return usage_error(c->cmd, "--server reads the store, not files: no database file");
    const struct select_opts *o = &c->sel;
    const char *bad = o->has_run || o->run_all ? "--run" : o->has_pid ? "--pid" : o->image ? "--image"
                    : o->has_tid || o->thread_re ? "--thread" : o->per_thread ? "--per-thread or --group-threads"
                    : o->snap_kind != SNAP_LAST && o->snap_kind != SNAP_PEAK ? "--snapshot other than last or peak"
                    : NULL;     /* diff's --a-run... come after parsing: cmd_diff refuses them */
    if (bad) return usage_error(c->cmd, "%s does not apply to --server (select runs with --where, --exe, --host, --since)", bad);
    return 0;
}

char *opt_since_either;

/* OPTIONS_SINCE_EITHER's --since to the store's runs or to the window. */
static int since_either(struct common *c)
{
    if (c->server.url && c->sel.until)
        return usage_error(c->cmd, "--until is a time window of files; with --server, --since selects runs");
    if (c->server.url) c->server.since = opt_since_either;
    else c->sel.since = opt_since_either;
    return 0;
}

int parse_options(struct common *c, const struct cmd_opts *d, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->cmd = d->cmd;
    select_opts_init(&c->sel);
    output_opts_init(&c->out);
    opt_since_either = NULL;
    int rc = parse_table(c, d, argc, argv, &c->operands_a);
    if (rc != PARSE_OK) return rc;
    if (d->since_runs && (rc = since_either(c))) return rc;
    if (d->readable) output_readable(&c->out, &c->view);
    if ((rc = server_options(c, argc - optind, d->server_and_files))) return rc;
    if (c->server.url && !d->server_and_files) return PARSE_OK;
    return check_operands(d, argc);
}
