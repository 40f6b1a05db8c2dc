/* mpquery top: the N largest stacks (paths after rules; stacks whose paths
 * become equal are merged) or, with --functions, the N largest functions
 * with self (the function is the leaf after rules) and inclusive (the
 * function is anywhere on the path; a recursive stack counts once) values.
 * Rows with a zero sort counter are not listed; ties are broken by stack
 * id / function name so that output is deterministic. --per-thread lists
 * the N largest of each thread (or --group-threads group), largest group
 * first, with the group in a first column, 'thread'. */
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
"--per-thread: the N largest rows of each thread, in a first column 'thread'\n"
"named 'NAME (tid N)' (NAME after the rules' thread lines) or, for the\n"
"threads merged by --group-threads RE, 'RE'; threads (groups) in the order\n"
"of their total of the --by counter, largest first; each row's counters\n"
"are its thread's (group's) alone.\n"
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

/* The table's columns: those of one section's rows, after a first column
 * 'thread' with --per-thread. */
static void table_start(struct table *tab, const struct common *c, const char *const *cols, size_t n)
{
    const char *all[2 * NSTACK_COUNTERS + 8];
    size_t k = 0;
    if (c->per_thread) all[k++] = "thread";
    memcpy(all + k, cols, n * sizeof *cols);
    table_init(tab, k + n, all);
}

/* The stacks of one section: own (per display node) and q's stack_c its
 * counters; thread: its name, or NULL. */
static void stack_rows(const struct listing *l, const struct query *q, const counters *own, const char *thread,
                       struct table *tab)
{
    const struct common *c = l->c;
    const struct dtree *t = &l->t;
    uint32_t *rep = xmalloc(t->n * sizeof *rep), *nmerged = xmalloc(t->n * sizeof *nmerged);
    node_stacks(q, t, c->by, rep, nmerged);
    uint32_t *items = xmalloc(t->n * sizeof *items);
    size_t n = 0;
    for (uint32_t i = 1; i < t->n; i++)
        if (own[i].v[c->by] != 0 && rep[i] != NONE) items[n++] = i;
    struct top_ctx ctx = { own, q->p, rep, t, c->by };
    n = select_top(items, n, (size_t)c->limit, cmp_stack, &ctx);

    int json = c->format == FMT_JSON, nc = shown_counters(q->p);
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < n; i++) {
        uint32_t node = items[i];
        if (thread) table_str(tab, thread);
        for (int k = 0; k < nc; k++) table_int(tab, own[node].v[k]);
        table_stack(tab, c->format, q->p->stacks[rep[node]].id, nmerged[node]);
        dtree_short_path(t, node, c->format == FMT_TEXT ? (size_t)c->depth : 0, " < ", &sb);
        table_str(tab, sb.s);
        if (json) {
            dtree_frames_json(t, node, &sb);
            table_json(tab, sb.s);
        }
    }
    sb_free(&sb);
    free(items);
    free(rep);
    free(nmerged);
}

/* The functions of one section (own: per display node). */
static void function_rows(struct listing *l, const struct query *q, const counters *own, const char *thread,
                          struct table *tab, int inclusive)
{
    const struct common *c = l->c;
    struct dtree *t = &l->t;
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

    int nc = shown_counters(q->p);
    for (size_t i = 0; i < n; i++) {
        uint32_t l = items[i];
        if (thread) table_str(tab, thread);
        for (int k = 0; k < nc; k++) table_int(tab, self[l].v[k]);
        for (int k = 0; k < nc; k++) table_int(tab, incl[l].v[k]);
        table_strn(tab, t->labels.str[l], t->labels.len[l]);
    }
    free(items);
    free(self);
    free(incl);
}

static void section(struct listing *l, const struct query *q, const counters *own, const char *thread,
                    struct table *tab, const struct top_args *a)
{
    if (a->functions) function_rows(l, q, own, thread, tab, a->inclusive);
    else stack_rows(l, q, own, thread, tab);
}

/* --per-thread: a section per group with a value, largest first; each
 * sees its rows' counters alone, per display node (own) and per stack
 * (the stack_c of a copy of the query). Rows the filters leave out are
 * left out here too. */
struct group_order { const counters *c; const struct thread_groups *g; int by; };

static int cmp_group(uint32_t a, uint32_t b, void *ctx)
{
    const struct group_order *x = ctx;
    int64_t va = x->c[a].v[x->by], vb = x->c[b].v[x->by];
    if (va != vb) return va > vb ? -1 : 1;
    return strcmp(x->g->name[a], x->g->name[b]);
}

static void per_thread(struct listing *l, struct table *tab, const struct top_args *a)
{
    const struct common *c = l->c;
    const struct query *q = &l->q[0];
    const struct profile *p = q->p;
    const uint8_t *left_out = l->t.left_out;
    struct thread_groups g;
    char err[512];
    if (thread_groups_by_name(p, &q->sel, c->thread_groups, c->nthread_groups, &g, err, sizeof err)) {
        error(EXIT_BAD_INPUT, "top: %s", err);      /* options.c compiled them already */
        return;
    }
    uint32_t *rows = xmalloc((q->sel.nrows + 1) * sizeof *rows);
    size_t *start = group_rows(p, &q->sel, &g, rows);
    counters *total = xcalloc(g.n + 1, sizeof *total);
    uint32_t *order = xmalloc((g.n + 1) * sizeof *order);
    size_t n = 0;
    for (uint32_t k = 0; k < g.n; k++) {
        for (size_t i = start[k]; i < start[k + 1]; i++) {
            const struct sample *sa = &p->samples[rows[i]];
            if (!left_out || !left_out[q->stack_node[sa->stack]]) counters_add(&total[k], &sa->c);
        }
        if (total[k].v[c->by] != 0) order[n++] = k;
    }
    struct group_order go = { total, &g, c->by };
    n = select_top(order, n, n, cmp_group, &go);
    counters *own = xcalloc(l->t.n, sizeof *own), *stack_c = xcalloc(p->nstacks, sizeof *stack_c);
    struct query gq = *q;
    gq.sel.stack_c = stack_c;
    for (size_t j = 0; j < n; j++) {
        uint32_t k = order[j];
        for (size_t i = start[k]; i < start[k + 1]; i++) {
            const struct sample *sa = &p->samples[rows[i]];
            uint32_t node = q->stack_node[sa->stack];
            if (left_out && left_out[node]) continue;
            counters_add(&own[node], &sa->c);
            counters_add(&stack_c[sa->stack], &sa->c);
        }
        section(l, &gq, own, g.name[k], tab, a);
        for (size_t i = start[k]; i < start[k + 1]; i++) {
            const struct sample *sa = &p->samples[rows[i]];
            memset(&own[q->stack_node[sa->stack]], 0, sizeof *own);
            memset(&stack_c[sa->stack], 0, sizeof *stack_c);
        }
    }
    free(own);
    free(stack_c);
    free(order);
    free(total);
    free(rows);
    free(start);
    thread_groups_free(&g);
}

static void print(struct listing *l, void *arg)
{
    const struct top_args *a = arg;
    const struct common *c = l->c;
    int nc = shown_counters(l->q[0].p);
    const char *cols[2 * NSTACK_COUNTERS + 4];
    char names[2 * NSTACK_COUNTERS][32];
    size_t ncols;
    if (a->functions) {
        for (int k = 0; k < 2 * nc; k++) {
            snprintf(names[k], sizeof names[k], "%s.%s", k < nc ? "self" : "inclusive", counter_name[k % nc]);
            cols[k] = names[k];
        }
        cols[2 * nc] = "function";
        ncols = 2 * (size_t)nc + 1;
    } else {
        /* text: "stack" is "ID" or "ID+MERGED"; csv/json: separate columns */
        static const char *const text_rest[] = { "stack", "where" };
        static const char *const rest[] = { "stack", "stacks", "where", "frames" };
        size_t nrest = c->format == FMT_TEXT ? 2 : c->format == FMT_JSON ? 4 : 3;
        memcpy(cols, counter_name, (size_t)nc * sizeof *cols);
        memcpy(cols + nc, c->format == FMT_TEXT ? text_rest : rest, nrest * sizeof *cols);
        ncols = (size_t)nc + nrest;
    }
    struct table tab;
    table_start(&tab, c, cols, ncols);
    if (c->per_thread) per_thread(l, &tab, a);
    else section(l, &l->q[0], l->own[0], NULL, &tab, a);
    listing_print(l, &tab);
    table_free(&tab);
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
        OPTIONS_PER_THREAD("the largest rows of each thread, in a first column\n"
                           "'thread' (see below)"),
        OPTION_FORMAT("text (default), csv or json"),
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "top", .usage = usage, .more = more, .opts = opts,
                                .operands = 1, .missing = "missing DB" };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    return listing_run(&c, argv + optind, 1, print, &a);
}
