/* mpquery diff A B: stacks (or functions) of two profiles matched by their
 * paths of names after rules (addresses and ids differ between runs): both
 * profiles are viewed into ONE display tree, so equal paths are equal nodes
 * and matching costs nothing per stack. Rows are sorted by |B - A|, larger
 * first; --fold writes "path A B" lines for flamegraph.pl's differential
 * mode (the difffolded.pl format). */
#include "mpquery.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
"usage: mpquery diff A.db B.db [options]\n"
"\n"
"What changed from profile A to profile B, matched by function names after\n"
"rules. Columns: a, b, delta (b - a), ratio (b / a, '-' when a is 0).\n"
"\n"
"  --by COUNTER        compare ncalls, memtot (default), nfree, memlive or maxlive\n"
"  -n N                show N rows (default 20, 0 = all)\n"
"  --functions         compare functions instead of stacks\n"
"  --self              with --functions, compare self values (default)\n"
"  --inclusive         with --functions, compare inclusive values\n"
"  --fold              write 'root;...;leaf A B' lines (flamegraph.pl's\n"
"                      differential input, as difffolded.pl makes)\n"
"  --depth K           frames shown per stack, leaf first (default 5, 0 = all)\n"
"  --lines, --no-inline, --module\n"
"                      frame display, as in mpquery top --help\n"
"  --run N|latest|all, --pid PID, --thread TID, --snapshot S\n"
"                      select samples in BOTH profiles, as in mpquery top --help\n"
"  --rules FILE        apply a rules file after filters/default.rules (repeatable)\n"
"  --no-default-rules  do not apply filters/default.rules\n"
"  --format F          text (default), csv or json\n"
"\n"
"example:\n"
"  mpquery diff before.db after.db --by memlive --functions -n 10\n"
"  mpquery diff before.db after.db --fold | flamegraph.pl > diff.svg\n";

static const struct option long_options[] = {
    { "by", required_argument, NULL, OPT_BY },
    { "functions", no_argument, NULL, OPT_FUNCTIONS },
    { "self", no_argument, NULL, OPT_SELF },
    { "inclusive", no_argument, NULL, OPT_INCLUSIVE },
    { "fold", no_argument, NULL, OPT_FOLD },
    { "depth", required_argument, NULL, OPT_DEPTH },
    { "lines", no_argument, NULL, OPT_LINES },
    { "no-inline", no_argument, NULL, OPT_NO_INLINE },
    { "module", no_argument, NULL, OPT_MODULE },
    { "run", required_argument, NULL, OPT_RUN },
    { "pid", required_argument, NULL, OPT_PID },
    { "thread", required_argument, NULL, OPT_THREAD },
    { "snapshot", required_argument, NULL, OPT_SNAPSHOT },
    { "rules", required_argument, NULL, OPT_RULES },
    { "no-default-rules", no_argument, NULL, OPT_NO_DEFAULT_RULES },
    { "format", required_argument, NULL, OPT_FORMAT },
    { "help", no_argument, NULL, OPT_HELP },
    { 0 }
};

struct diff_ctx { const int64_t *a, *b; const struct dtree *t; int functions; };

static int cmp_delta(uint32_t x, uint32_t y, void *ctx)
{
    const struct diff_ctx *d = ctx;
    int64_t dx = d->b[x] - d->a[x], dy = d->b[y] - d->a[y];
    int64_t ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;
    if (ax != ay) return ax > ay ? -1 : 1;
    if (dx != dy) return dx > dy ? -1 : 1;
    if (d->b[x] != d->b[y]) return d->b[x] > d->b[y] ? -1 : 1;
    if (d->functions) return strcmp(d->t->labels.str[x], d->t->labels.str[y]);
    return (x > y) - (x < y);
}

struct fold_ctx { const int64_t *a, *b; };

static void emit_fold(uint32_t node, const char *path, size_t len, void *ctx)
{
    const struct fold_ctx *x = ctx;
    if (!x->a[node] && !x->b[node]) return;
    fwrite(path, 1, len, stdout);
    printf(" %lld %lld\n", (long long)x->a[node], (long long)x->b[node]);
}

static void print_rows(const struct common *c, struct dtree *t, const int64_t *a, const int64_t *b,
                       size_t nitems, int functions)
{
    uint32_t *items = xmalloc((nitems ? nitems : 1) * sizeof *items);
    size_t n = 0;
    for (uint32_t i = functions ? 0 : 1; i < nitems; i++)
        if (a[i] || b[i]) items[n++] = i;
    struct diff_ctx ctx = { a, b, t, functions };
    n = select_top(items, n, (size_t)c->limit, cmp_delta, &ctx);
    static const char *const cols[] = { "a", "b", "delta", "ratio", "where" };
    static const char *const fcols[] = { "a", "b", "delta", "ratio", "function" };
    struct table tab;
    table_init(&tab, 5, functions ? fcols : cols);
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < n; i++) {
        uint32_t k = items[i];
        table_int(&tab, a[k]);
        table_int(&tab, b[k]);
        table_int(&tab, b[k] - a[k]);
        if (a[k]) table_num(&tab, (double)b[k] / (double)a[k], 3);
        else table_null(&tab);
        if (functions) {
            table_strn(&tab, t->labels.str[k], t->labels.len[k]);
        } else {
            dtree_short_path(t, k, c->format == FMT_TEXT ? (size_t)c->depth : 0, " < ", &sb);
            table_str(&tab, sb.s);
        }
    }
    table_print(&tab, c->format, stdout);
    table_free(&tab);
    sb_free(&sb);
    free(items);
}

int cmd_diff(int argc, char **argv)
{
    struct common c;
    common_init(&c, "diff");
    int functions = 0, inclusive = 0, fold = 0, opt, rc;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":n:", long_options, NULL)) != -1) {
        if (opt == OPT_HELP) { fputs(help, stdout); return 0; }
        if (opt == OPT_FUNCTIONS) { functions = 1; continue; }
        if (opt == OPT_SELF) { inclusive = 0; continue; }
        if (opt == OPT_INCLUSIVE) { inclusive = 1; continue; }
        if (opt == OPT_FOLD) { fold = 1; continue; }
        rc = common_option(&c, opt, optarg);
        if (rc < 0) return EXIT_BAD_INPUT;
        if (rc == 0) return bad_option(c.cmd, opt, argv);
    }
    if (optind + 2 != argc)
        return usage_error(c.cmd, optind + 2 > argc ? "needs two profiles A and B" : "too many arguments");
    if (fold && functions) return usage_error(c.cmd, "--fold and --functions do not combine");

    struct ruleset *rules;
    if ((rc = load_rules(&c, &rules))) return rc;
    struct dtree t;
    struct query qa, qb;
    dtree_init(&t);
    memset(&qb, 0, sizeof qb);
    rc = query_run(&c, argv[optind], &t, &qa);
    if (!rc) rc = query_run(&c, argv[optind + 1], &t, &qb);
    if (!rc) {
        counters *own_a = xcalloc(t.n, sizeof *own_a), *own_b = xcalloc(t.n, sizeof *own_b);
        view_accumulate(qa.p, &qa.sel, qa.stack_node, own_a);
        view_accumulate(qb.p, &qb.sel, qb.stack_node, own_b);
        size_t nitems = functions ? t.labels.n : t.n;
        int64_t *a = xcalloc(nitems, sizeof *a), *b = xcalloc(nitems, sizeof *b);
        if (functions) {
            size_t nl = t.labels.n;
            counters *sa = xcalloc(nl, sizeof *sa), *ia = xcalloc(nl, sizeof *ia);
            counters *sbf = xcalloc(nl, sizeof *sbf), *ib = xcalloc(nl, sizeof *ib);
            dtree_functions(&t, own_a, sa, ia);
            dtree_functions(&t, own_b, sbf, ib);
            for (size_t l = 0; l < nl; l++) {
                a[l] = (inclusive ? ia : sa)[l].v[c.by];
                b[l] = (inclusive ? ib : sbf)[l].v[c.by];
            }
            free(sa); free(ia); free(sbf); free(ib);
        } else {
            for (size_t n = 0; n < t.n; n++) {
                a[n] = own_a[n].v[c.by];
                b[n] = own_b[n].v[c.by];
            }
        }
        if (fold) {
            counters *suba = xmalloc(t.n * sizeof *suba), *subb = xmalloc(t.n * sizeof *subb);
            dtree_subtotals(&t, own_a, suba);
            dtree_subtotals(&t, own_b, subb);
            int64_t *keep = xmalloc(t.n * sizeof *keep);
            for (size_t n = 0; n < t.n; n++) keep[n] = suba[n].v[c.by] || subb[n].v[c.by];
            struct fold_ctx fx = { a, b };
            fold_walk(&t, keep, emit_fold, &fx);
            free(keep); free(suba); free(subb);
        } else {
            print_rows(&c, &t, a, b, nitems, functions);
        }
        free(a); free(b); free(own_a); free(own_b);
    }
    query_free(&qa);
    query_free(&qb);
    dtree_free(&t);
    rules_free(rules);
    return rc;
}
