/* mpquery top: the N largest stacks (paths after rules; stacks whose paths
 * become equal are merged) or, with --functions, the N largest functions
 * with self (the function is the leaf after rules) and inclusive (the
 * function is anywhere on the path; a recursive stack counts once) values.
 * Rows with a zero sort counter are not listed; ties are broken by stack
 * id / function name so that output is deterministic. */
#include "mpquery.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery top DB [options]\n"
"\n"
"The largest allocation stacks (or functions) of a profile, after rules.\n"
"\n";

static const char more[] =
"\n"
"Counters are summed over threads and processes; maxlive then is the sum of\n"
"per-thread peaks (an upper bound of the stack's peak; exact when one thread\n"
"allocates from the stack). The 'stack' column is the database id of the\n"
"largest stack merged into the row ('+N' when N more were merged): see\n"
"mpquery show DB ID. nlive = ncalls - nfree, the blocks still allocated;\n"
"ntemp: of the blocks, how many were temporary (freed by the thread that\n"
"allocated them before it allocated or freed anything else; 0 in files of format\n"
"version 1).\n"
"\n"
"--filter and --exclude test the frame names as shown (after rules). What\n"
"they leave out is said after the table: 'ignored M stacks (N calls, B\n"
"bytes) with F filters' (csv: on stderr; json: the rows are then in\n"
"{\"ignored\": {\"stacks\", \"calls\", \"bytes\", \"filters\"}, \"rows\": [...]}).\n"
"\n"
"example:\n"
"  mpquery top app.db --by memlive -n 10 --functions\n";

/* What top lists: stacks, or functions sorted by self or inclusive. */
struct top_args { int functions, inclusive; };

struct top_ctx {
    const counters *c;          /* per node or per label */
    const struct profile *p;
    const uint32_t *rep;        /* per node: representative stack */
    const struct dtree *t;
    int by;
};

static int cmp_stack(uint32_t a, uint32_t b, void *ctx)
{
    const struct top_ctx *x = ctx;
    int64_t va = x->c[a].v[x->by], vb = x->c[b].v[x->by];
    if (va != vb) return va > vb ? -1 : 1;
    int64_t ia = x->p->stacks[x->rep[a]].id, ib = x->p->stacks[x->rep[b]].id;
    return (ia > ib) - (ia < ib);
}

static int cmp_function(uint32_t a, uint32_t b, void *ctx)
{
    const struct top_ctx *x = ctx;
    int64_t va = x->c[a].v[x->by], vb = x->c[b].v[x->by];
    if (va != vb) return va > vb ? -1 : 1;
    return strcmp(x->t->labels.str[a], x->t->labels.str[b]);
}

static void list_stacks(const struct listing *l)
{
    const struct common *c = l->c;
    const struct query *q = &l->q[0];
    const struct dtree *t = &l->t;
    const counters *own = l->own[0];
    uint32_t *rep = xmalloc(t->n * sizeof *rep), *nmerged = xmalloc(t->n * sizeof *nmerged);
    node_stacks(q, t, c->by, rep, nmerged);
    uint32_t *items = xmalloc(t->n * sizeof *items);
    size_t n = 0;
    for (uint32_t i = 1; i < t->n; i++)
        if (own[i].v[c->by] != 0 && rep[i] != NONE) items[n++] = i;
    struct top_ctx ctx = { own, q->p, rep, t, c->by };
    n = select_top(items, n, (size_t)c->limit, cmp_stack, &ctx);

    /* text: "stack" is "ID" or "ID+MERGED"; csv/json: separate columns */
    int json = c->format == FMT_JSON, nc = shown_counters(q->p);
    const char *cols[NSTACK_COUNTERS + 4];
    memcpy(cols, counter_name, nc * sizeof *cols);
    static const char *const text_rest[] = { "stack", "where" }, *const rest[] = { "stack", "stacks", "where", "frames" };
    if (c->format == FMT_TEXT) memcpy(cols + nc, text_rest, sizeof text_rest);
    else memcpy(cols + nc, rest, sizeof rest);
    struct table tab;
    table_init(&tab, nc + (c->format == FMT_TEXT ? 2 : json ? 4 : 3), cols);
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < n; i++) {
        uint32_t node = items[i];
        for (int k = 0; k < nc; k++) table_int(&tab, own[node].v[k]);
        table_stack(&tab, c->format, q->p->stacks[rep[node]].id, nmerged[node]);
        dtree_short_path(t, node, c->format == FMT_TEXT ? (size_t)c->depth : 0, " < ", &sb);
        table_str(&tab, sb.s);
        if (json) {
            dtree_frames_json(t, node, &sb);
            table_json(&tab, sb.s);
        }
    }
    listing_print(l, &tab);
    table_free(&tab);
    sb_free(&sb);
    free(items);
    free(rep);
    free(nmerged);
}

static void list_functions(struct listing *l, int inclusive)
{
    const struct common *c = l->c;
    struct dtree *t = &l->t;
    const counters *own = l->own[0];
    size_t nl = t->labels.n;
    counters *self = xcalloc(nl, sizeof *self), *incl = xcalloc(nl, sizeof *incl);
    dtree_functions(t, own, self, incl);
    uint32_t *items = xmalloc(nl * sizeof *items);
    const counters *key = inclusive ? incl : self;
    size_t n = 0;
    for (uint32_t l = 0; l < nl; l++)
        if (key[l].v[c->by] != 0) items[n++] = l;
    struct top_ctx ctx = { key, NULL, NULL, t, c->by };
    n = select_top(items, n, (size_t)c->limit, cmp_function, &ctx);

    int nc = shown_counters(l->q[0].p);
    char names[2 * NSTACK_COUNTERS][32];
    const char *cols[2 * NSTACK_COUNTERS + 1];
    for (int k = 0; k < 2 * nc; k++) {
        snprintf(names[k], sizeof names[k], "%s.%s", k < nc ? "self" : "inclusive", counter_name[k % nc]);
        cols[k] = names[k];
    }
    cols[2 * nc] = "function";
    struct table tab;
    table_init(&tab, 2 * nc + 1, cols);
    for (size_t i = 0; i < n; i++) {
        uint32_t l = items[i];
        for (int k = 0; k < nc; k++) table_int(&tab, self[l].v[k]);
        for (int k = 0; k < nc; k++) table_int(&tab, incl[l].v[k]);
        table_strn(&tab, t->labels.str[l], t->labels.len[l]);
    }
    listing_print(l, &tab);
    table_free(&tab);
    free(items);
    free(self);
    free(incl);
}

static void print(struct listing *l, void *arg)
{
    const struct top_args *a = arg;
    if (a->functions) list_functions(l, a->inclusive);
    else list_stacks(l);
}

int cmd_top(int argc, char **argv)
{
    struct common c;
    struct top_args a = { 0 };
    const struct opt opts[] = {
        OPTION_BY("sort by this counter (default memtot):\n" COUNTER_LIST),
        OPTION_LIMIT,
        OPTIONS_FUNCTIONS(&a.functions, &a.inclusive,
                          "list functions instead of stacks, with self and inclusive\n"
                          "values (self: the function is the leaf after rules;\n"
                          "inclusive: anywhere on the stack, counted once per stack)",
                          "with --functions, sort by the self value (default)",
                          "with --functions, sort by the inclusive value"),
        OPTIONS_FILTER,
        OPTION_DEPTH,
        OPTION_LINES("show frames as 'function (file:line)'"),
        OPTION_NO_INLINE("hide inlined frames (inline_depth > 0): each address\n"
                         "shows only the function it is compiled in"),
        OPTION_MODULE("append ' [module]' to named frames (frames without a\n"
                      "name always show as module+0xOFFSET)"),
        OPTIONS_SELECT_EACH,
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable;\n"
                      "a bare NAME also finds filters/NAME.rules)"),
        OPTION_FORMAT("text (default), csv or json"),
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "top", .usage = usage, .more = more, .opts = opts,
                                .operands = 1, .missing = "missing DB" };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    return listing_run(&c, argv + optind, 1, print, &a);
}
