/* mpquery top: the N largest stacks (paths after rules; stacks whose paths
 * become equal are merged) or, with --functions, the N largest functions
 * with self (the function is the leaf after rules) and inclusive (the
 * function is anywhere on the path; a recursive stack counts once) values.
 * Rows with a zero sort counter are not listed; ties are broken by stack
 * id / function name so that output is deterministic. --per-thread lists
 * the N largest of each thread (or --group-threads group), largest group
 * first, with the group in a first column, 'thread'. Text is for people:
 * the --by counter with its share of the total and ncalls (every counter
 * with --all-counters), after a first row of the totals of everything
 * selected; csv and json have every counter, raw, and no totals row.
 * --mmap: the program's own mappings instead (stacks with an '[mmap]' leaf
 * frame), their four counters in every format, by mapped bytes; heap
 * stacks have those 0 and, as mapping stacks without --mmap (heap
 * counters 0), are not listed. */
#include "mpquery.h"
#include "profile.h"
#include "commands.h"
#include "info.h"
#include "listing.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "server.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery top DB... [options]\n"
"       mpquery top --server URL [--where SQL] [options]\n"
"\n"
"The largest allocation stacks (or functions) of a profile, after rules.\n"
"Several databases are one profile (every reading command takes them):\n"
"their runs are one selection, by default the latest run of each file\n"
"(--run all: every run; --run N: the id mpquery info shows), frames and\n"
"functions matched by name across files, as mpquery merge stores them.\n"
"With --server URL, the runs of a ClickHouse store (mpquery push) instead\n"
"of files: ClickHouse sums the counters of each distinct stack over the\n"
"selected runs, mpquery applies the rules to what comes back.\n"
"\n";

static const char more[] =
"\n"
HELP_WINDOW
"\n"
"Columns (text): the --by counter, '%' its share of the total of every row\n"
"(listed or not), and ncalls; --all-counters (and csv, json) every counter:\n"
"ncalls (allocations), memtot (bytes allocated), nfree (of these, freed),\n"
"nlive = ncalls - nfree (blocks still allocated), memlive (bytes still\n"
"allocated), maxlive (peak of memlive), ntemp (of the blocks, how many were\n"
"temporary: freed by the thread that allocated them before it allocated or\n"
"freed anything else; 0 in files of format version 1), time (MP_TIME),\n"
"memcold, coldage (MP_COLD: see mpquery leaks --cold); those the profile\n"
"has (time, cold ones: recorded with them).\n"
"\n"
"--mmap: the program's own mappings (mmap, mremap, brk of its code, not\n"
"the allocator's) instead of heap blocks, by stack, sorted by mapped (--by:\n"
"nmap, mapped, maxmapped or rss), with those four columns: nmap (mappings\n"
"made), mapped (bytes mapped now), maxmapped (its peak), rss (bytes of them\n"
"resident at the snapshot). The stack's leaf is what was mapped: 'mmap\n"
"anonymous', 'mmap anonymous shared', 'mmap brk' or 'mmap FILE'.\n"
"With --functions: self.COUNTER (the function is the leaf), self% (its share\n"
"of the total), inclusive.COUNTER (the function is anywhere on the stack),\n"
"inclusive%; ncalls of the kind sorted by. The first row, '(total: S\n"
"stacks in R rows)', sums every stack selected: S recorded stacks with a\n"
"value of the --by counter (mpquery info counts the stacks with samples:\n"
"with ncalls, the same), R the rows they make after rules (the rows there\n"
"are with -n 0; text merges the stacks whose shortened names are equal).\n"
"In a sampled profile (MP_SAMPLE) every row is an estimate from the sampled\n"
"blocks and so is that sum: '(estimated total, from samples: ...)', near\n"
"the exact totals mpquery info shows, above or below them (a function's\n"
"inclusive counters count each stack once, never more than that sum).\n"
"Counters are summed over threads and processes; maxlive then is the sum of\n"
"per-thread peaks (an upper bound of the stack's peak; exact when one thread\n"
"allocates from the stack). --by maxlive's first row is '(sum of S stacks'\n"
"own peaks, in R rows)': peaks at different times, not the process peak\n"
"(info's 'peak': top --snapshot peak --by memlive's total). The 'stack'\n"
"column is the database id of the largest stack merged into the row ('+N'\n"
"when N more were merged): see mpquery show DB ID.\n"
"\n"
"Text is for people: sizes in units (1.21 MiB; --bytes: bytes), C++ names\n"
"shortened after the rules (template arguments <\xe2\x80\xa6> by the rules'\n"
"collapse-templates, no parameter lists; --full-names, --signatures), and\n"
"on a terminal lines fit its width (COLUMNS) and long output goes through\n"
"$PAGER (less -SFRX). csv and json keep whole names and raw numbers.\n"
"\n"
"The 'where' column (text) is the stack on one line, leaf first: the leaf,\n"
"the first frame of the program's own code (the main executable, or a\n"
"module outside /lib and /usr/lib) when it fits, then callers while they\n"
"fit the terminal's width (off a terminal, or with --depth K: at most K\n"
"frames, 5 by default); '\xe2\x80\xa6' for frames skipped, frames the rules\n"
"hide left out, a run of nameless frames of one module as\n"
"'[libLLVM-14 \xc3\x97N]'. Two rows of different stacks never read the same: the\n"
"first frame where they differ is added. --callers prints every frame of\n"
"the stack under its row, with file:line where known.\n"
"\n"
"Python first: a stack with Python frames starts at its outermost one, and\n"
"the interpreter's frames under it (those of the module that calls Python\n"
"frames: libpython, python3.X) are folded into the frame they serve, as in\n"
"every view but show; --native shows them all. Totals never change.\n"
"\n"
"--per-thread: the N largest rows of each thread, in a first column 'thread'\n"
"named 'NAME (tid N)' (NAME after the rules' thread lines) or, for the\n"
"threads merged by --group-threads RE, 'RE'; threads (groups) in the order\n"
"of their total of the --by counter, largest first; each row's counters\n"
"are its thread's (group's) alone, and so are the totals row and '%'.\n"
HELP_GROUP
"\n"
"--filter and --exclude test the frame names as shown (after rules). What\n"
"they leave out is said after the table: 'ignored M stacks (N calls, B\n"
"bytes) with F filters' (csv: on stderr; json: the rows are then in\n"
"{\"ignored\": {\"stacks\", \"calls\", \"bytes\", \"filters\"}, \"rows\": [...]}).\n"
"\n"
"example:\n"
"  mpquery top app.db --by memlive -n 10 --functions\n";

/* What top lists: stacks, or functions sorted by self or inclusive; the
 * counters its rows show (for functions, the self ones and the
 * inclusive ones), in their order. */
struct top_args {
    int functions, inclusive, all_counters, callers, mmap;
    int rc;                     /* print's exit code: --mmap without mappings */
    /* text, per row of the table: its display node and stack (NONE for
     * a totals row), for the where column and --callers */
    uint32_t *row_node, *row_stack; size_t nrows, cap;
    int counter[NSTACK_COUNTERS], ncounters;
    int incl_counter[NSTACK_COUNTERS], nincl_counters;
};

/* Of the counters in set: text without --all-counters (or --mmap) the
 * --by counter and ncalls (with_ncalls); else every one. Returns how
 * many, into k. */
static int shown(const struct common *c, const struct top_args *a, counter_set set, int with_ncalls, int *k)
{
    int n = 0;
    for (int i = 0; i < NSTACK_COUNTERS; i++) {
        if (!counter_shown(set, i)) continue;
        if (c->out.format != FMT_TEXT || a->all_counters || a->mmap || i == c->out.by || (i == NCALLS && with_ncalls))
            k[n++] = i;
    }
    return n;
}

static void note_row(struct top_args *a, uint32_t node, uint32_t stack)
{
    if (a->nrows == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        a->row_node = xrealloc(a->row_node, a->cap * sizeof *a->row_node);
        a->row_stack = xrealloc(a->row_stack, a->cap * sizeof *a->row_stack);
    }
    a->row_node[a->nrows] = node;
    a->row_stack[a->nrows++] = stack;
}

/* The table's columns: those of one section's rows, after a first column
 * 'thread' with --per-thread. */
static void table_start(struct table *tab, const struct common *c, const char *const *cols, size_t n)
{
    const char *all[2 * NSTACK_COUNTERS + 8];
    size_t k = 0;
    if (c->sel.per_thread || c->sel.group_by) all[k++] = group_by_name[c->sel.group_by];
    memcpy(all + k, cols, n * sizeof *cols);
    table_init(tab, k + n, all);
}

/* The counters k[0..n) of x; in text the --by counter's share of total
 * after it. */
static void put_counters(struct table *tab, const struct common *c, const int *k, int n, const counters *x,
                         const counters *total)
{
    for (int i = 0; i < n; i++) {
        table_counter(tab, k[i], x->v[k[i]], c->out.human);
        if (c->out.format != FMT_TEXT || k[i] != c->out.by) continue;
        if (total->v[c->out.by] != 0) table_num(tab, 100.0 * (double)x->v[c->out.by] / (double)total->v[c->out.by], 1);
        else table_null(tab);
    }
}

/* A sampled profile's rows are estimates (MP_SAMPLE), and so is their
 * total: near the exact totals (mpquery info), above or below them. */
#define ESTIMATED_NOTE "; exact totals: mpquery info"
static const char *estimated_total(const struct profile *p)
{
    return info_any_sampled(p) ? "estimated total, from samples" : "total";
}

/* The counters of every stack of a section, summed. */
static void section_total(const struct dtree *t, const counters *own, counters *total)
{
    memset(total, 0, sizeof *total);
    for (uint32_t i = 1; i < t->n; i++) counters_add(total, &own[i]);
}

/* Text's first row of a section: its totals (functions: self and
 * inclusive; stacks: no stack id), and what the section has. */
static void total_row(struct table *tab, const struct common *c, struct top_args *a, const char *thread,
                      const counters *total, int functions, const char *what)
{
    note_row(a, NONE, NONE);
    if (thread) table_str(tab, thread);
    put_counters(tab, c, a->counter, a->ncounters, total, total);
    if (functions) put_counters(tab, c, a->incl_counter, a->nincl_counters, total, total);
    else table_str(tab, "");
    table_str(tab, what);
}

/* The stacks of one section: own (per display node) and q's stack_c its
 * counters; thread: its name, or NULL. */
static void stack_rows(const struct listing *l, const struct query *q, const counters *own, const char *thread,
                       struct table *tab, struct top_args *a)
{
    const struct common *c = l->c;
    const struct dtree *t = &l->t;
    uint32_t *rep = xmalloc(t->n * sizeof *rep), *nmerged = xmalloc(t->n * sizeof *nmerged);
    node_stacks(q, t, c->out.by, rep, nmerged);
    uint32_t *items = xmalloc(t->n * sizeof *items);
    size_t n = 0, nstacks = 0;
    for (uint32_t i = 1; i < t->n; i++)
        if (own[i].v[c->out.by] != 0 && rep[i] != NONE) items[n++] = i;
    for (uint32_t r = 0; r < q->p->nrecorded; r++) {   /* not nmerged: a merged stack may have no --by */
        uint32_t i = q->stack_node[q->p->recorded[r]];
        nstacks += i != NONE && rep[i] != NONE && own[i].v[c->out.by] != 0 && q->sel.stack_c[r].v[c->out.by] != 0;
    }
    counters total;
    section_total(t, own, &total);
    if (c->out.format == FMT_TEXT) {
        char name[192];
        const char *est = info_any_sampled(q->p) ? ", estimated from samples" ESTIMATED_NOTE : "";
        if (c->out.by == MAXLIVE)       /* peaks at different times: not the process peak */
            snprintf(name, sizeof name, "(sum of %zu stacks' own peaks, in %zu rows%s)", nstacks, n, est);
        else
            snprintf(name, sizeof name, "(%s: %zu stacks in %zu rows%s)", estimated_total(q->p), nstacks, n,
                     info_any_sampled(q->p) ? ESTIMATED_NOTE : "");
        total_row(tab, c, a, thread, &total, 0, name);
    }
    struct order_ctx ctx = { own, q->p, rep, t, c->out.by };
    n = select_top(items, n, (size_t)c->out.limit, order_stack, &ctx);

    int json = c->out.format == FMT_JSON;
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < n; i++) {
        uint32_t node = items[i];
        if (thread) table_str(tab, thread);
        put_counters(tab, c, a->counter, a->ncounters, &own[node], &total);
        table_stack(tab, c->out.format, q->p->stacks[rep[node]].id, nmerged[node]);
        if (c->out.format == FMT_TEXT) {
            table_str(tab, "");         /* the where column, once every row is in (print) */
            note_row(a, node, rep[node]);
            continue;
        }
        dtree_short_path(t, node, 0, " < ", &sb);
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
static void function_rows(struct listing *l, const counters *own, const char *thread, struct table *tab,
                          struct top_args *a)
{
    const struct common *c = l->c;
    struct dtree *t = &l->t;
    size_t nl = t->labels.n;
    counters *self, *incl;
    int kept;
    listing_functions(l, own, &self, &incl, &kept);
    uint32_t *items = xmalloc(nl * sizeof *items);
    const counters *key = a->inclusive ? incl : self;
    size_t n = 0;
    for (uint32_t l = 0; l < nl; l++)
        if (key[l].v[c->out.by] != 0) items[n++] = l;
    counters total;
    section_total(t, own, &total);
    if (c->out.format == FMT_TEXT) {
        char name[192];
        const char *est = info_any_sampled(l->q[0].p) ? ", estimated from samples" ESTIMATED_NOTE : "";
        if (c->out.by == MAXLIVE) snprintf(name, sizeof name, "(sum of %zu functions' own peaks%s)", n, est);
        else snprintf(name, sizeof name, "(%s: %zu functions%s)", estimated_total(l->q[0].p), n,
                      info_any_sampled(l->q[0].p) ? ESTIMATED_NOTE : "");
        total_row(tab, c, a, thread, &total, 1, name);
    }
    struct order_ctx ctx = { key, NULL, NULL, t, c->out.by };
    n = select_top(items, n, (size_t)c->out.limit, order_function, &ctx);

    for (size_t i = 0; i < n; i++) {
        uint32_t l = items[i];
        if (thread) table_str(tab, thread);
        put_counters(tab, c, a->counter, a->ncounters, &self[l], &total);
        put_counters(tab, c, a->incl_counter, a->nincl_counters, &incl[l], &total);
        table_strn(tab, t->labels.str[l], t->labels.len[l]);
    }
    free(items);
    if (!kept) free(self), free(incl);
}

static void section(struct listing *l, const struct query *q, const counters *own, const char *thread,
                    struct table *tab, struct top_args *a)
{
    if (a->functions) function_rows(l, own, thread, tab, a);
    else stack_rows(l, q, own, thread, tab, a);
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

static void per_thread(struct listing *l, struct table *tab, struct top_args *a)
{
    const struct common *c = l->c;
    const struct query *q = &l->q[0];
    const struct profile *p = q->p;
    const uint8_t *left_out = l->t.left_out;
    struct thread_groups g;
    char err[512];
    if (thread_groups_of(p, &q->sel, &c->sel, &g, err, sizeof err)) {
        error(EXIT_BAD_INPUT, "top: %s", err);      /* options.c compiled them already */
        return;
    }
    uint32_t *rows = xmalloc((q->sel.nrows + 1) * sizeof *rows);
    size_t *start = group_rows(&q->sel, &g, rows);
    counters *total = xcalloc(g.n + 1, sizeof *total);
    uint32_t *order = xmalloc((g.n + 1) * sizeof *order);
    size_t n = 0;
    for (uint32_t k = 0; k < g.n; k++) {
        for (size_t i = start[k]; i < start[k + 1]; i++) {
            const struct sample *sa = &q->sel.samples[rows[i]];
            if (!left_out || !left_out[q->stack_node[sa->stack]]) counters_add(&total[k], &sa->c);
        }
        if (total[k].v[c->out.by] != 0) order[n++] = k;
    }
    struct group_order go = { total, &g, c->out.by };
    n = select_top(order, n, n, cmp_group, &go);
    if (n == 1 && start[order[0] + 1] - start[order[0]] == q->sel.nrows) {
        /* one group with every row (one thread): its counters are the
         * listing's own, and its functions the listing's (kept, serve) */
        section(l, q, l->own[0], g.name[order[0]], tab, a);
        n = 0;
    }
    counters *own = xcalloc(l->t.n, sizeof *own), *stack_c = xcalloc(p->nrecorded ? p->nrecorded : 1, sizeof *stack_c);
    struct query gq = *q;
    gq.sel.stack_c = stack_c;
    for (size_t j = 0; j < n; j++) {
        uint32_t k = order[j];
        for (size_t i = start[k]; i < start[k + 1]; i++) {
            const struct sample *sa = &q->sel.samples[rows[i]];
            uint32_t node = q->stack_node[sa->stack];
            if (left_out && left_out[node]) continue;
            counters_add(&own[node], &sa->c);
            counters_add(&stack_c[sa->rec], &sa->c);
        }
        section(l, &gq, own, g.name[k], tab, a);
        for (size_t i = start[k]; i < start[k + 1]; i++) {
            const struct sample *sa = &q->sel.samples[rows[i]];
            memset(&own[q->stack_node[sa->stack]], 0, sizeof *own);
            memset(&stack_c[sa->rec], 0, sizeof *stack_c);
        }
    }
    free(own), free(stack_c), free(order), free(total), free(rows), free(start);
    thread_groups_free(&g);
}

/* Column names: PREFIX.COUNTER for k[0..n) (PREFIX NULL: COUNTER), and
 * in text PREFIX% (or %) after the --by counter's. */
static size_t counter_columns(const struct common *c, const char *prefix, const int *k, int n,
                              const char **cols, char (*names)[32])
{
    size_t m = 0;
    for (int i = 0; i < n; i++) {
        if (prefix) snprintf(names[m], sizeof names[m], "%s.%s", prefix, counter_name[k[i]]);
        else snprintf(names[m], sizeof names[m], "%s", counter_name[k[i]]);
        cols[m] = names[m];
        m++;
        if (c->out.format != FMT_TEXT || k[i] != c->out.by) continue;
        snprintf(names[m], sizeof names[m], "%s%%", prefix ? prefix : "");
        cols[m] = names[m];
        m++;
    }
    return m;
}

static void print(struct listing *l, void *arg)
{
    struct top_args *a = arg;
    const struct common *c = l->c;
    const struct profile *p = l->q[0].p;
    counter_set nc = a->mmap ? MAPPING_COUNTERS : shown_counters(p);
    if (a->mmap && !p->has_mappings) {
        a->rc = error(EXIT_BAD_INPUT, "%s: no mappings in this profile (the program made no mmap of its own, or "
                      "was recorded before format version 5)", p->path);
        return;
    }
    const char *cols[2 * NSTACK_COUNTERS + 6];
    char names[2 * NSTACK_COUNTERS + 2][32];
    size_t ncols;
    if (a->functions) {
        a->ncounters = shown(c, a, nc, !a->inclusive, a->counter);
        a->nincl_counters = shown(c, a, nc, a->inclusive, a->incl_counter);
        ncols = counter_columns(c, "self", a->counter, a->ncounters, cols, names);
        ncols += counter_columns(c, "inclusive", a->incl_counter, a->nincl_counters, cols + ncols, names + ncols);
        cols[ncols++] = "function";
    } else {
        /* text: "stack" is "ID" or "ID+MERGED"; csv/json: separate columns */
        static const char *const text_rest[] = { "stack", "where" };
        static const char *const rest[] = { "stack", "stacks", "where", "frames" };
        size_t nrest = c->out.format == FMT_TEXT ? 2 : c->out.format == FMT_JSON ? 4 : 3;
        a->ncounters = shown(c, a, nc, 1, a->counter);
        ncols = counter_columns(c, NULL, a->counter, a->ncounters, cols, names);
        memcpy(cols + ncols, c->out.format == FMT_TEXT ? text_rest : rest, nrest * sizeof *cols);
        ncols += nrest;
    }
    struct table tab;
    table_start(&tab, c, cols, ncols);
    tab.width = c->out.width;
    if (c->sel.per_thread || c->sel.group_by) per_thread(l, &tab, a);
    else section(l, &l->q[0], l->own[0], NULL, &tab, a);
    if (c->out.format == FMT_TEXT && !a->functions)
        table_where_column(&tab, tab.ncols - 1, &l->t, a->row_node, listing_depth(c));
    if (a->callers && !a->functions) listing_print_callers(l, &tab, a->row_node, a->row_stack);
    else listing_print(l, &tab);
    table_free(&tab);
    free(a->row_node);
    free(a->row_stack);
}

int cmd_top(int argc, char **argv)
{
    struct common c;
    struct top_args a = { 0 };
    const struct opt opts[] = {
        OPTION_BY("sort by this counter (default memtot):\n" COUNTER_HELP),
        OPTION_LIMIT,
        OPTIONS_FUNCTIONS(&a.functions, &a.inclusive,
                          "list functions instead of stacks, with self and inclusive\n"
                          "values (self: the function is the leaf after rules;\n"
                          "inclusive: anywhere on the stack, counted once per stack)",
                          "with --functions, sort by the self value (default)",
                          "with --functions, sort by the inclusive value"),
        { .name = "callers", .flag = &a.callers, .value = 1,
          .help = "text: under each row its whole stack, one frame a line,\n"
                  "leaf first, with file:line where known" },
        { .name = "mmap", .flag = &a.mmap, .value = 1,
          .help = "the program's own mappings by stack (mmap, mremap, brk),\n"
                  "by mapped bytes (see below)" },
        { .name = "all-counters", .flag = &a.all_counters, .value = 1,
          .help = "text: every counter (default: --by's and ncalls)" },
        OPTIONS_FILTER,
        OPTION_DEPTH,
        OPTION_LINES("show frames as 'function (file:line)'"),
        OPTION_NATIVE("Python stacks with every frame (default: Python first)"),
        OPTION_NO_INLINE("hide inlined frames (inline_depth > 0): each address\n"
                         "shows only the function it is compiled in"),
        OPTION_MODULE("append ' [module]' to named frames (frames without a\n"
                      "name always show as module+0xOFFSET)"),
        OPTIONS_SELECT_EACH,
        OPTIONS_WINDOW,
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable;\n"
                      "a bare NAME also finds filters/NAME.rules)"),
        OPTIONS_PER_THREAD("each thread's largest rows, in a first column 'thread'"),
        OPTION_GROUP(0),
        OPTIONS_READABLE,
        OPTION_FORMAT("text (default), csv or json"),
        OPTIONS_SERVER_STORE,
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "top", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing DB", .readable = 1 };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    if (a.callers && (rc = listing_callers_check(&c, a.functions))) return rc;
    if (a.mmap && !c.out.by_given) c.out.by = MAPPED;
    if (a.mmap && !counter_shown(MAPPING_COUNTERS, c.out.by))
        return usage_error("top", "--mmap sorts by nmap, mapped, maxmapped or rss, not --by %s", counter_name[c.out.by]);
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    rc = listing_run(&c, &files, 1, print, &a);
    return rc ? rc : a.rc;
}
