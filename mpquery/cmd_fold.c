/* mpquery fold: folded stacks, one line per distinct path after rules,
 * "root;caller;...;leaf VALUE", the input format of flamegraph.pl and of
 * speedscope's importer. Paths that rules make equal are merged; zero
 * values are omitted; lines come out in path order (depth-first over the
 * display tree, siblings sorted by name), built incrementally so that no
 * path string is materialized twice. Frame names never break the format:
 * ';' becomes ':' and control characters (newline, tab, CR...) spaces. */
#include "mpquery.h"
#include "counters.h"
#include "dtree.h"
#include "listing.h"

#include <stdlib.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery fold DB... [options]\n"
"       mpquery fold --server URL [--where SQL] [options]\n"
"\n"
"Folded stacks (root;...;leaf VALUE) for flamegraph.pl or speedscope.\n"
"\n";

static const char more[] =
"\n"
"--since and --until: only the allocations made in that window (the\n"
"counters at its until snapshot less those at its since one; see mpquery\n"
"top --help-all, Time windows).\n"
"In frame names ';' is written as ':' and control characters as spaces.\n"
"A stack whose frames were all dropped by rules is written as '[no frames]'.\n"
"--format csv: 'path,COUNTER' rows (the path as folded); json:\n"
"{\"by\": COUNTER, \"stacks\": [{\"path\", \"value\"}, ...]}.\n"
"What --filter and --exclude leave out is said on stderr: 'ignored M stacks\n"
"(N calls, B bytes) with F filters'.\n"
"\n"
"example:\n"
"  mpquery fold app.db --by memlive > app.folded && flamegraph.pl app.folded > app.svg\n";

static const struct opt opts[] = {
    OPTION_BY("the value, a counter (default memtot):\n" COUNTER_HELP),
    OPTIONS_FILTER,
    OPTION_LINES("frames as 'function (file:line)'"),
    OPTION_NATIVE("Python stacks with every native frame (default: Python\nfirst, as mpquery top --help-all says)"),
    OPTION_NO_INLINE("hide inlined frames (inline_depth > 0)"),
    OPTION_MODULE("append ' [module]' to named frames"),
    OPTIONS_SELECT("select samples as in mpquery top --help"),
    OPTIONS_WINDOW,
    OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable)"),
    OPTION_FORMAT("text (default), csv or json"),
    OPTIONS_SERVER_STORE,
    { 0 }
};

static const struct cmd_opts fold_opts = {
    .cmd = "fold", .usage = usage, .more = more, .opts = opts,
    .missing = "missing DB"
};

struct fold_ctx { const counters *own; int by, format; FILE *out; struct json w; };

static void emit_line(uint32_t node, const char *path, size_t len, void *ctx)
{
    struct fold_ctx *x = ctx;
    int64_t v = x->own[node].v[x->by];
    if (v <= 0) return;
    if (x->format == FMT_CSV) {
        csv_field(x->out, path, len);
        fprintf(x->out, ",%lld\n", (long long)v);
    } else if (x->format == FMT_JSON) {
        json_open(&x->w, '{');
        json_key(&x->w, "path"), json_strn(&x->w, path, len);
        json_key(&x->w, "value"), json_int(&x->w, v);
        json_close(&x->w, '}');
    } else {
        fwrite(path, 1, len, x->out);
        fprintf(x->out, " %lld\n", (long long)v);
    }
}

/* The lines to out (a FILE *: stdout, or export's file), then on stderr
 * what the filters left out. Subtrees without a positive value are not
 * walked. */
void fold_print(struct listing *l, void *out)
{
    struct dtree *t = &l->t;
    int by = l->c->out.by;
    int64_t *keep = xmalloc(t->n * sizeof *keep);
    dtree_subtotal_of(t, l->own[0], by, keep);
    for (size_t n = 0; n < t->n; n++) keep[n] = keep[n] > 0;
    struct fold_ctx ctx = { l->own[0], by, l->c->out.format, out, { 0 } };
    if (ctx.format == FMT_CSV) fprintf(out, "path,%s\n", counter_name[by]);
    if (ctx.format == FMT_JSON) fold_json_start(&ctx.w, out, counter_name[by]);
    fold_walk(t, keep, emit_line, &ctx);
    if (ctx.format == FMT_JSON) fold_json_end(&ctx.w);
    free(keep);
    listing_ignored_line(l, stderr);
}

int cmd_fold(int argc, char **argv)
{
    struct common c;
    int rc = parse_options(&c, &fold_opts, argc, argv);
    if (rc != PARSE_OK) return rc;
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    return listing_run(&c, &files, 1, fold_print, stdout);
}
