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
"mpquery show DB ID.\n"
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

static void frames_json(const struct dtree *t, uint32_t node, struct strbuf *out)
{
    out->len = 0;
    sb_putc(out, '[');
    for (uint32_t n = node; n != 0; n = t->parent[n]) {
        if (n != node) sb_puts(out, ", ");
        json_string_sb(out, t->labels.str[t->label[n]], t->labels.len[t->label[n]]);
    }
    sb_putc(out, ']');
}

static void list_stacks(const struct common *c, const struct query *q, const struct dtree *t,
                        const counters *own)
{
    const struct profile *p = q->p;
    uint32_t *rep = none_array(t->n), *nmerged = xcalloc(t->n, sizeof *nmerged);
    for (uint32_t s = 0; s < p->nstacks; s++) {
        uint32_t n = q->stack_node[s];
        if (n == NONE || counters_zero(&q->sel.stack_c[s])) continue;
        nmerged[n]++;
        if (rep[n] == NONE || q->sel.stack_c[s].v[c->by] > q->sel.stack_c[rep[n]].v[c->by]
            || (q->sel.stack_c[s].v[c->by] == q->sel.stack_c[rep[n]].v[c->by]
                && p->stacks[s].id < p->stacks[rep[n]].id))
            rep[n] = s;
    }
    uint32_t *items = xmalloc(t->n * sizeof *items);
    size_t n = 0;
    for (uint32_t i = 1; i < t->n; i++)
        if (own[i].v[c->by] != 0 && rep[i] != NONE) items[n++] = i;
    struct top_ctx ctx = { own, p, rep, t, c->by };
    n = select_top(items, n, (size_t)c->limit, cmp_stack, &ctx);

    /* text: "stack" is "ID" or "ID+MERGED"; csv/json: separate columns */
    static const char *const text_cols[] = { "ncalls", "memtot", "nfree", "memlive", "maxlive",
                                             "stack", "where" };
    static const char *const cols[] = { "ncalls", "memtot", "nfree", "memlive", "maxlive",
                                        "stack", "stacks", "where", "frames" };
    int json = c->format == FMT_JSON;
    struct table tab;
    if (c->format == FMT_TEXT) table_init(&tab, 7, text_cols);
    else table_init(&tab, json ? 9 : 8, cols);
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < n; i++) {
        uint32_t node = items[i];
        for (int k = 0; k < NCOUNTERS; k++) table_int(&tab, own[node].v[k]);
        if (c->format == FMT_TEXT) {
            sb.len = 0;
            sb_printf(&sb, "%lld", (long long)p->stacks[rep[node]].id);
            if (nmerged[node] > 1) sb_printf(&sb, "+%u", nmerged[node] - 1);
            table_str(&tab, sb.s);
        } else {
            table_int(&tab, p->stacks[rep[node]].id);
            table_int(&tab, nmerged[node]);
        }
        dtree_short_path(t, node, c->format == FMT_TEXT ? (size_t)c->depth : 0, " < ", &sb);
        table_str(&tab, sb.s);
        if (json) {
            frames_json(t, node, &sb);
            table_json(&tab, sb.s);
        }
    }
    table_print(&tab, c->format, stdout);
    table_free(&tab);
    sb_free(&sb);
    free(items);
    free(rep);
    free(nmerged);
}

static void list_functions(const struct common *c, struct dtree *t, const counters *own, int inclusive)
{
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

    static const char *const cols[] = {
        "self.ncalls", "self.memtot", "self.nfree", "self.memlive", "self.maxlive",
        "inclusive.ncalls", "inclusive.memtot", "inclusive.nfree", "inclusive.memlive",
        "inclusive.maxlive", "function" };
    struct table tab;
    table_init(&tab, 11, cols);
    for (size_t i = 0; i < n; i++) {
        uint32_t l = items[i];
        for (int k = 0; k < NCOUNTERS; k++) table_int(&tab, self[l].v[k]);
        for (int k = 0; k < NCOUNTERS; k++) table_int(&tab, incl[l].v[k]);
        table_strn(&tab, t->labels.str[l], t->labels.len[l]);
    }
    table_print(&tab, c->format, stdout);
    table_free(&tab);
    free(items);
    free(self);
    free(incl);
}

static void print(struct listing *l, void *arg)
{
    const struct top_args *a = arg;
    if (a->functions) list_functions(l->c, &l->t, l->own[0], a->inclusive);
    else list_stacks(l->c, &l->q[0], &l->t, l->own[0]);
}

int cmd_top(int argc, char **argv)
{
    struct common c;
    struct top_args a = { 0 };
    const struct opt opts[] = {
        OPTION_BY("sort by ncalls, memtot (default), nfree, memlive or maxlive"),
        OPTION_LIMIT,
        OPTIONS_FUNCTIONS(&a.functions, &a.inclusive,
                          "list functions instead of stacks, with self and inclusive\n"
                          "values (self: the function is the leaf after rules;\n"
                          "inclusive: anywhere on the stack, counted once per stack)",
                          "with --functions, sort by the self value (default)",
                          "with --functions, sort by the inclusive value"),
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
