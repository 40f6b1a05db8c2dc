/* mpquery export DB --format F: the selection after rules as another
 * tool's file: speedscope's JSON (export_speedscope.c), pprof's
 * profile.proto (export_pprof.c), valgrind massif's massif.out
 * (export_massif.c), or the folded stacks of fold (cmd_fold.c writes
 * them). All start from fold's listing: the same rules, selection and
 * filters, the same display tree; this file parses the options and opens
 * the output. */
#include "export.h"
#include "commands.h"
#include "listing.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "rules.h"
#include "select.h"
#include "tempfile.h"
#include "view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery export DB... --format F [-o FILE] [options]\n"
"       mpquery export DB... -o FILE.{json,pb.gz,folded} [options]\n"
"\n"
"The selected stacks after rules as a file of another tool:\n"
"  speedscope  speedscope's JSON, one profile per counter but coldage (--by:\n"
"              only that one): open it in https://www.speedscope.app or\n"
"              `speedscope FILE`\n"
"  pprof       gzipped profile.proto with Go's heap sample types (alloc_objects,\n"
"              alloc_space, inuse_objects, inuse_space: ncalls, memtot, nlive,\n"
"              memlive; inuse_space the default; then mmap_count, mapped_space,\n"
"              mapped_resident, cold_space when the profile has them):\n"
"              `go tool pprof FILE`\n"
"  massif      valgrind massif's massif.out, every snapshot of one process with\n"
"              its tree of allocation sites by live bytes: `ms_print FILE`\n"
"  folded      what mpquery fold writes: `flamegraph.pl FILE`\n"
"\n";

static const char more[] =
"\n"
"pprof and massif name each frame of an address (inlined ones as their\n"
"lines), so they take neither --lines nor --module. massif's times are\n"
"milliseconds since the process started (--time-unit B: bytes allocated so\n"
"far); its heap is the live bytes of the selected stacks. What --filter and\n"
"--exclude leave out is said on stderr, as fold says it.\n"
"--since and --until (not massif): the allocations made in that window, as\n"
"in mpquery top --help-all (Time windows); pprof's time_nanos and\n"
"duration_nanos are then the window's, from its since snapshot (or the\n"
"processes' start) to its until snapshot, for Pyroscope's and Parca's\n"
"timelines.\n"
"\n"
"example:\n"
"  mpquery export app.db --format pprof -o app.pb.gz && go tool pprof -top app.pb.gz\n"
"  mpquery export app.db --format pprof --since 1h -o last-hour.pb.gz\n";

enum { EXPORT_SPEEDSCOPE, EXPORT_PPROF, EXPORT_MASSIF, EXPORT_FOLDED };
static const char *const format_name[] = { "speedscope", "pprof", "massif", "folded" };

struct export_args {
    struct export_opts o;
    char *format_arg, *out_arg, *by_arg, *time_unit_arg, *threshold_arg;
    int format, rc;
};

/* ---------------------------------------------------------------- the command */
/* massif's file is of one process: 0, or 2 (reported). */
static int check_one_process(const struct query *q, const struct export_opts *o)
{
    size_t n = 0;
    for (size_t i = 0; i < q->p->nprocs; i++) n += q->sel.proc_snapshot[i] != NONE;
    if (n == 1) return 0;
    struct strbuf names = { 0 };
    export_process_names(q, &names);
    int rc = error(EXIT_BAD_INPUT, "%s: --format massif writes one process, the selection has %zu (%s): "
                                   "choose one with --pid", o->db, n, names.s);
    sb_free(&names);
    return rc;
}

static void print(struct listing *l, void *arg)
{
    struct export_args *a = arg;
    struct outfile out;
    a->o.db = l->q[0].p->path;          /* "a.db (and 2 more)" for several files */
    if (a->format == EXPORT_MASSIF && (a->rc = check_one_process(&l->q[0], &a->o))) return;
    if ((a->rc = output_open(&out, a->o.out, OUTPUT_FILE))) return;
    FILE *f = out.f;
    switch (a->format) {
    case EXPORT_SPEEDSCOPE: a->rc = export_speedscope(l, &a->o, f); break;
    case EXPORT_PPROF: a->rc = export_pprof(l, &a->o, f); break;
    case EXPORT_MASSIF: a->rc = export_massif(l, &a->o, f); break;
    case EXPORT_FOLDED: fold_print(l, f); break;
    }
    if (a->format != EXPORT_FOLDED) listing_ignored_line(l, stderr);
    a->rc = output_close(&out, a->rc);     /* "wrote ..." the last line */
}

/* Without --format, the -o names that call for each format. */
static const struct output_kind kinds[] = {
    { "*.json", EXPORT_SPEEDSCOPE, "speedscope" }, { "*.pb.gz", EXPORT_PPROF, "pprof" },
    { "*.pb", EXPORT_PPROF, "pprof" }, { "massif.out*", EXPORT_MASSIF, "massif" },
    { "*.massif", EXPORT_MASSIF, "massif" }, { "*.folded", EXPORT_FOLDED, "folded" },
    { NULL }
};

/* The format: --format, else the one -o's name calls for; 0 or 2 (reported). */
static int export_format(struct common *c, struct export_args *a)
{
    if (!a->format_arg && !a->out_arg)
        return usage_error(c->cmd, "missing --format (speedscope, pprof, massif or folded), or -o FILE naming one");
    if (!a->format_arg) return (a->format = output_kind(c->cmd, a->out_arg, kinds, -1)) < 0 ? 2 : 0;
    for (a->format = 0; a->format < 4 && strcmp(a->format_arg, format_name[a->format]); a->format++) {}
    if (a->format == 4)
        return usage_error(c->cmd, "bad value '%s' for --format (expected speedscope, pprof, massif or folded)",
                           a->format_arg);
    return 0;
}

/* The values of the command's own options; 0 or 2 (reported). */
static int check_options(struct common *c, struct export_args *a)
{
    const char *massif_only = a->time_unit_arg ? "--time-unit" : a->threshold_arg ? "--threshold" : NULL;
    int rc = export_format(c, a);
    if (rc) return rc;
    a->o.by = -1;
    if (a->by_arg && (a->o.by = counter_parse(a->by_arg)) < 0)
        return usage_error(c->cmd, "bad value '%s' for --by (expected %s)", a->by_arg, COUNTER_LIST);
    if (a->o.by >= 0) c->out.by = a->o.by;
    if (a->format == EXPORT_SPEEDSCOPE && a->o.by >= 0 && (rc = counter_width_check(c->cmd, a->o.by))) return rc;
    int keeps_addresses = a->format == EXPORT_PPROF || a->format == EXPORT_MASSIF;
    if (keeps_addresses && a->by_arg)
        return usage_error(c->cmd, "--by goes with --format speedscope or folded");
    if (keeps_addresses && (c->view.lines || c->view.module))
        return usage_error(c->cmd, "--lines and --module go with --format speedscope or folded");
    if (massif_only && a->format != EXPORT_MASSIF)
        return usage_error(c->cmd, "%s goes with --format massif", massif_only);
    if (a->format == EXPORT_MASSIF && (c->sel.snap_kind != SNAP_LAST || c->sel.since || c->sel.until))
        return usage_error(c->cmd, "--format massif writes every snapshot: no --snapshot, --since or --until");
    if (a->time_unit_arg && strcmp(a->time_unit_arg, "ms") && strcmp(a->time_unit_arg, "B"))
        return usage_error(c->cmd, "bad value '%s' for --time-unit (expected ms or B)", a->time_unit_arg);
    a->o.time_bytes = a->time_unit_arg && !strcmp(a->time_unit_arg, "B");
    a->o.threshold = 1.0;
    if (a->threshold_arg) {
        char *end;
        errno = 0;
        a->o.threshold = strtod(a->threshold_arg, &end);
        if (errno || end == a->threshold_arg || *end || !(a->o.threshold >= 0 && a->o.threshold <= 100))
            return usage_error(c->cmd, "bad value '%s' for --threshold (expected a percentage, 0 to 100)",
                               a->threshold_arg);
    }
    return 0;
}

int cmd_export(int argc, char **argv)
{
    struct common c;
    struct export_args a = { 0 };
    const struct opt opts[] = {
        { .name = "format", .arg = "F", .str = &a.format_arg,
          .help = "speedscope, pprof, massif or folded (default: the one\n"
                  "-o's name calls for: *.json, *.pb.gz or *.pb, massif.out.*\n"
                  "or *.massif, *.folded)" },
        { .name = "output", .letter = 'o', .arg = "FILE", .str = &a.out_arg,
          .help = "write to FILE (default: stdout)" },
        { .name = "by", .arg = "COUNTER", .str = &a.by_arg,
          .help = "speedscope: only this counter's profile; folded: the\n"
                  "value (default memtot); a counter:\n" COUNTER_HELP },
        { .name = "time-unit", .arg = "U", .str = &a.time_unit_arg,
          .help = "massif: ms (default: since the process started) or B\n(bytes allocated so far)" },
        { .name = "threshold", .arg = "PCT", .str = &a.threshold_arg,
          .help = "massif: sites below PCT% of the heap are merged (default 1.0)" },
        OPTIONS_FILTER,
        OPTION_LINES("frames as 'function (file:line)' (speedscope, folded)"),
        OPTION_NATIVE("Python stacks with every native frame (default: Python\nfirst, as mpquery top --help-all says)"),
        OPTION_NO_INLINE("hide inlined frames (inline_depth > 0)"),
        OPTION_MODULE("append ' [module]' to named frames (speedscope, folded)"),
        OPTIONS_SELECT("select samples as in mpquery top --help (massif: every\nsnapshot, no --snapshot)"),
        OPTIONS_WINDOW,
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable)"),
        OPTION_QUIET("with -o, no line saying what it wrote"),
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "export", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing DB" };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    if ((rc = check_options(&c, &a))) return rc;
    a.o.out = a.out_arg;
    c.peak_rows = 1;        /* massif draws the peak snapshot's tree */
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    if ((rc = check_output(&c, a.o.out, &files, 1))) return rc;
    rc = listing_run(&c, &files, 1, print, &a);
    return rc ? rc : a.rc;
}
