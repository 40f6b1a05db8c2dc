/* mpquery tree: the tree of tag scopes (mp_tag_push: [tag] frames) or, with
 * --functions, the call tree of functions from the roots of the stacks,
 * one tree per process (or per thread, or group of threads, with
 * --per-thread). Per node, self (the allocations whose innermost tag, or
 * leaf, is the node) and total (the node and everything below) of every
 * counter. Built on the listing (rules, selection, filters, one display
 * tree): the scopes are the display paths' leading tag frames
 * (dtree_tag_scopes), and each root sums its own sample rows onto them.
 * Invariant: a node's total is its self plus its children's totals; the
 * allocations outside any tag are the root's "(no tag)" child and the
 * children -n leaves out one "(K more)" node, so that this holds for what
 * is printed too. */
#include "mpquery.h"
#include "profile.h"
#include "commands.h"
#include "listing.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery tree DB... [options]\n"
"\n"
"The tree of tag scopes (mp_tag_push) of each process, or with --functions\n"
"its call tree: per node, self (allocations made directly in the scope, or\n"
"with the function as the leaf) and total (the node and all below it),\n"
"after rules. Children are sorted by the --by counter, largest first.\n"
"\n";

static const char more[] =
"\n"
"Allocations outside any tag are the root's '(no tag)' child; the children\n"
"-n leaves out are one '(K more)' node (their selves and totals summed).\n"
"Percentages are of the total of all the trees printed (one process: its\n"
"total). Tags are the [tag] frames at the root of the stacks, named after\n"
"rules (which see '[tag] NAME'; the prefix is not shown).\n"
"\n"
"text: an indented tree, self and total of the --by counter with their %\n"
"(sizes in units, 1.21 MiB; --bytes: bytes).\n"
"csv: a row a node: root, depth, path (names from the root's child down,\n"
"';'-separated), self.COUNTER..., total.COUNTER....\n"
"json: an array of roots, each {\"name\", \"self\": {counters}, \"total\":\n"
"{counters}, \"children\": [nodes alike]}.\n"
"dot: a Graphviz digraph (dot -Tsvg tree.dot > tree.svg): a box a node with\n"
"its name, self and total in human units, filled darker the larger its self\n"
"share; edges parent -> child.\n"
"What --filter and --exclude leave out is said after the text, and on\n"
"stderr for csv, json and dot.\n"
"\n"
"examples:\n"
"  mpquery tree app.db\n"
"  mpquery tree app.db --per-thread --group-threads 'worker-[0-9]+' --by memlive\n"
"  mpquery tree app.db --format dot | dot -Tsvg > tags.svg\n"
"  mpquery tree app.db --functions --depth 6 -n 5\n";



struct tree_args {
    int functions;
    char *limit_arg, *depth_arg;
    size_t limit, depth;                /* 0: all */
    int format;
};

/* A node as printed, in pre-order. */
struct tnode {
    const char *name; size_t len;
    counters self, total;
    uint32_t depth, parent;             /* parent: index in the output, NONE for a root */
};

struct out { struct tnode *v; size_t n, cap; };

/* A child to be printed: a node of the tree (NONE: a pseudo node). */
struct child { uint32_t node; const char *name; size_t len; counters self, total; };

struct builder {
    const struct dtree *t;
    const counters *own, *sub;
    int tags, by;
    const struct tree_args *a;
    struct out *out;
    struct arena text;                  /* "(K more)" names */
};

static uint32_t out_push(struct out *o, const struct child *c, uint32_t depth, uint32_t parent)
{
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 256;
        o->v = xrealloc(o->v, o->cap * sizeof *o->v);
    }
    o->v[o->n] = (struct tnode){ c->name, c->len, c->self, c->total, depth, parent };
    return (uint32_t)o->n++;
}

static int cmp_child(const void *x, const void *y, void *ctx)
{
    const struct child *a = x, *b = y;
    int by = *(const int *)ctx;
    if (a->total.v[by] != b->total.v[by]) return a->total.v[by] > b->total.v[by] ? -1 : 1;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->name, b->name, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

static struct child tree_child(const struct builder *b, uint32_t node)
{
    uint32_t l = b->t->label[node];
    return (struct child){ node, b->t->labels.str[l], b->t->labels.len[l], b->own[node], b->sub[node] };
}

/* The children of a tree node with a value, sorted, the root's "(no tag)"
 * among them, those past -n merged; returns how many (in *kids). */
static size_t children_of(struct builder *b, uint32_t node, struct child **kids, size_t *cap)
{
    const struct dtree *t = b->t;
    size_t n = 0, max = t->child_start[node + 1] - t->child_start[node] + 1;
    if (*cap < max + 1) {
        *cap = 2 * max + 1;
        *kids = xrealloc(*kids, *cap * sizeof **kids);
    }
    struct child *k = *kids;
    for (uint32_t i = t->child_start[node]; i < t->child_start[node + 1]; i++)
        if (!counters_zero(&b->sub[t->child_list[i]])) k[n++] = tree_child(b, t->child_list[i]);
    if (b->tags && node == 0 && !counters_zero(&b->own[0]))
        k[n++] = (struct child){ NONE, "(no tag)", 8, b->own[0], b->own[0] };
    qsort_r(k, n, sizeof *k, cmp_child, &b->by);
    if (!b->a->limit || n <= b->a->limit) return n;
    struct child rest = { NONE, NULL, 0, { { 0 } }, { { 0 } } };
    for (size_t i = b->a->limit; i < n; i++) {
        counters_add(&rest.self, &k[i].self);
        counters_add(&rest.total, &k[i].total);
    }
    char name[48];
    rest.len = (size_t)snprintf(name, sizeof name, "(%zu more)", n - b->a->limit);
    rest.name = arena_strndup(&b->text, name, rest.len);
    k[b->a->limit] = rest;
    return b->a->limit + 1;
}

/* One root and its tree, depth-first in pre-order (children in sorted
 * order: pushed on the stack in reverse). */
static void build_root(struct builder *b, const char *name)
{
    struct pending { struct child c; uint32_t depth, parent; };
    size_t sp = 0, scap = 64, kcap = 0;
    struct pending *stk = xmalloc(scap * sizeof *stk);
    struct child *kids = NULL;
    struct child root = { 0, name, strlen(name), b->own[0], b->sub[0] };
    if (b->tags) memset(&root.self, 0, sizeof root.self);     /* it is "(no tag)"'s */
    stk[sp++] = (struct pending){ root, 0, NONE };
    while (sp > 0) {
        struct pending cur = stk[--sp];
        uint32_t at = out_push(b->out, &cur.c, cur.depth, cur.parent);
        if (cur.c.node == NONE || (b->a->depth && cur.depth == b->a->depth)) continue;
        size_t n = children_of(b, cur.c.node, &kids, &kcap);
        if (sp + n > scap) {
            scap = 2 * (sp + n);
            stk = xrealloc(stk, scap * sizeof *stk);
        }
        while (n-- > 0) stk[sp++] = (struct pending){ kids[n], cur.depth + 1, at };
    }
    free(stk);
    free(kids);
}

/* ---------------------------------------------------------------- writers */
static double percent(int64_t v, int64_t whole) { return whole ? 100.0 * (double)v / (double)whole : 0.0; }

static void write_text(const struct out *o, int by, int64_t whole, int functions, int human)
{
    char self_col[32], total_col[32];
    snprintf(self_col, sizeof self_col, "self.%s", counter_name[by]);
    snprintf(total_col, sizeof total_col, "total.%s", counter_name[by]);
    const char *cols[] = { self_col, "self%", total_col, "total%", functions ? "function" : "tag" };
    struct table tab;
    table_init(&tab, 5, cols);
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < o->n; i++) {
        const struct tnode *x = &o->v[i];
        table_counter(&tab, by, x->self.v[by], human);
        table_num(&tab, percent(x->self.v[by], whole), 1);
        table_counter(&tab, by, x->total.v[by], human);
        table_num(&tab, percent(x->total.v[by], whole), 1);
        sb.len = 0;
        for (uint32_t d = 0; d < x->depth; d++) sb_puts(&sb, "  ");
        sb_add(&sb, x->name, x->len);
        table_strn(&tab, sb.s, sb.len);
    }
    table_print(&tab, FMT_TEXT, stdout);
    table_free(&tab);
    sb_free(&sb);
}

/* Streamed, not through a table: a call tree's paths are as large as fold's. */
static void write_csv(const struct out *o, counter_set shown)
{
    fputs("root,depth,path", stdout);
    int k[NSTACK_COUNTERS], nc = counter_list(shown, k);
    for (int i = 0; i < 2 * nc; i++) printf(",%s.%s", i < nc ? "self" : "total", counter_name[k[i % nc]]);
    fputc('\n', stdout);
    struct strbuf path = { 0 };
    size_t *plen = xmalloc((o->n + 1) * sizeof *plen);  /* per node: its path's length */
    const struct tnode *root = NULL;
    for (size_t i = 0; i < o->n; i++) {
        const struct tnode *x = &o->v[i];
        if (x->parent == NONE) {
            root = x;
            path.len = 0;
            sb_add(&path, "", 0);
        } else {
            path.len = plen[x->parent];
            if (o->v[x->parent].parent != NONE) sb_putc(&path, ';');
            fold_escape(x->name, x->len, &path);
        }
        plen[i] = path.len;
        csv_field(stdout, root->name, root->len);
        printf(",%u,", x->depth);
        csv_field(stdout, path.s, path.len);
        for (int j = 0; j < nc; j++) printf(",%lld", (long long)x->self.v[k[j]]);
        for (int j = 0; j < nc; j++) printf(",%lld", (long long)x->total.v[k[j]]);
        fputc('\n', stdout);
    }
    sb_free(&path);
    free(plen);
}

static void json_counters(const counters *c, counter_set shown)
{
    fputc('{', stdout);
    int k[NSTACK_COUNTERS], nc = counter_list(shown, k);
    for (int i = 0; i < nc; i++) printf("%s\"%s\": %lld", i ? ", " : "", counter_name[k[i]], (long long)c->v[k[i]]);
    fputc('}', stdout);
}

/* Written by hand, not with struct json: a call tree nests deeper than its
 * 32 levels. Each node on a line, indented by its depth. */
static void write_json(const struct out *o, counter_set nc)
{
    uint32_t open = 0;                  /* nodes whose children array is open */
    fputc('[', stdout);
    for (size_t i = 0; i < o->n; i++) {
        const struct tnode *x = &o->v[i];
        int first = x->depth == open;   /* the first child of its parent (or root) */
        for (; open > x->depth; open--) fputs("]}", stdout);
        printf("%s\n%*s{\"name\": ", first ? "" : ",", (int)x->depth + 1, "");
        json_string(stdout, x->name, x->len);
        fputs(", \"self\": ", stdout);
        json_counters(&x->self, nc);
        fputs(", \"total\": ", stdout);
        json_counters(&x->total, nc);
        fputs(", \"children\": [", stdout);
        open = x->depth + 1;
    }
    for (; open > 0; open--) fputs("]}", stdout);
    fputs(o->n ? "\n]\n" : "]\n", stdout);
}

/* "1.21 MiB", "3.40k calls", "1.50 ms": v of counter k for people
 * (fmt_human), counts with what they count. */
static void human(int k, int64_t v, struct strbuf *sb)
{
    static const char *const what[NSTACK_COUNTERS] = {
        [NCALLS] = " calls", [NFREE] = " frees", [NLIVE] = " live blocks", [NTEMP] = " temporary blocks",
        [NMAP] = " mappings", [COLDAGE] = " snapshots cold" };
    char buf[64];
    sb_puts(sb, fmt_human(k, v, buf, sizeof buf));
    if (what[k]) sb_puts(sb, what[k]);
}

/* A name inside a quoted dot string: '"' and '\' escaped, control
 * characters as spaces, invalid UTF-8 as U+FFFD, cut after 120 bytes. */
static void dot_name(const char *s, size_t n, struct strbuf *sb)
{
    size_t max = 120;
    for (size_t i = 0; i < n;) {
        if (i >= max) { sb_puts(sb, "..."); return; }
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') { sb_putc(sb, '\\'); sb_putc(sb, (char)c); i++; continue; }
        if (c < 0x20 || c == 0x7f) { sb_putc(sb, ' '); i++; continue; }
        size_t len = utf8_seq_len(s + i, n - i);
        if (!len) { sb_puts(sb, "\xef\xbf\xbd"); i++; continue; }
        sb_add(sb, s + i, len);
        i += len;
    }
}

/* "self: 1.0 MiB (89.9%), 4 calls" */
static void dot_value(const char *what, const counters *c, int by, int64_t whole, struct strbuf *sb)
{
    sb_printf(sb, "\\n%s: ", what);
    human(by, c->v[by], sb);
    sb_printf(sb, " (%.1f%%)", percent(c->v[by], whole));
    if (by != NCALLS) {
        sb_puts(sb, ", ");
        human(NCALLS, c->v[NCALLS], sb);
    }
}

static void write_dot(const struct out *o, int by, int64_t whole)
{
    struct strbuf sb = { 0 };
    printf("digraph mallocprof_tree {\n"
           "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", colorscheme=blues9];\n"
           "  edge [color=\"#555555\"];\n");
    for (size_t i = 0; i < o->n; i++) {
        const struct tnode *x = &o->v[i];
        /* fill 1 (lightest) .. 9 (darkest) by the node's self share */
        double share = whole > 0 && x->self.v[by] > 0 ? (double)x->self.v[by] / (double)whole : 0;
        int fill = 1 + (int)floor(share * 8 + 0.5);
        if (fill > 9) fill = 9;
        sb.len = 0;
        dot_name(x->name, x->len, &sb);
        dot_value("self", &x->self, by, whole, &sb);
        dot_value("total", &x->total, by, whole, &sb);
        printf("  n%zu [label=\"%s\", fillcolor=%d%s%s];\n", i, sb.s, fill, fill >= 7 ? ", fontcolor=white" : "",
               x->parent == NONE ? ", penwidth=2" : "");
        if (x->parent != NONE) printf("  n%u -> n%zu;\n", x->parent, i);
    }
    printf("}\n");
    sb_free(&sb);
}

/* ---------------------------------------------------------------- roots */
/* The roots in order: largest total by the counter first, then by name. */
struct root { size_t start, end; };

static int cmp_root(const void *x, const void *y, void *ctx)
{
    const struct root *a = x, *b = y;
    const struct builder *bl = ctx;
    const struct tnode *ra = &bl->out->v[a->start], *rb = &bl->out->v[b->start];
    struct child ca = { 0, ra->name, ra->len, ra->self, ra->total }, cb = { 0, rb->name, rb->len, rb->self, rb->total };
    return cmp_child(&ca, &cb, (void *)&bl->by);
}

/* The roots' trees reordered into `sorted`, parents renumbered. */
static void order_roots(const struct builder *b, struct root *roots, size_t nroots, struct out *sorted)
{
    qsort_r(roots, nroots, sizeof *roots, cmp_root, (void *)b);
    const struct out *o = b->out;
    sorted->v = xmalloc((o->n + 1) * sizeof *sorted->v);
    sorted->n = sorted->cap = 0;
    for (size_t r = 0; r < nroots; r++) {
        size_t at = sorted->n;
        for (size_t i = roots[r].start; i < roots[r].end; i++) {
            struct tnode x = o->v[i];
            if (x.parent != NONE) x.parent = (uint32_t)(x.parent - roots[r].start + at);
            sorted->v[sorted->n++] = x;
        }
    }
}

/* Each group's rows summed onto the tree (own), its subtotals, its root
 * and nodes appended to b->out. */
static void build_groups(struct builder *b, const struct listing *l, const struct thread_groups *g,
                         const uint32_t *node_of, struct root *roots, size_t *nroots)
{
    const struct query *q = &l->q[0];
    const struct dtree *t = b->t;
    uint32_t *rows = xmalloc((q->sel.nrows + 1) * sizeof *rows);
    size_t *start = group_rows(&q->sel, g, rows);
    counters *own = xmalloc(t->n * sizeof *own), *sub = xmalloc(t->n * sizeof *sub);
    b->own = own;
    b->sub = sub;
    *nroots = 0;
    for (size_t k = 0; k < g->n; k++) {
        memset(own, 0, t->n * sizeof *own);
        for (size_t i = start[k]; i < start[k + 1]; i++) {
            const struct sample *sa = &q->sel.samples[rows[i]];
            uint32_t dn = q->stack_node[sa->stack];
            if (dn == NONE || (l->t.left_out && l->t.left_out[dn])) continue;
            counters_add(&own[node_of[dn]], &sa->c);
        }
        dtree_subtotals(t, own, sub);
        if (counters_zero(&sub[0])) continue;
        roots[*nroots].start = b->out->n;
        build_root(b, g->name[k]);
        roots[(*nroots)++].end = b->out->n;
    }
    free(own);
    free(sub);
    free(rows);
    free(start);
}

static void print(struct listing *l, void *arg)
{
    const struct tree_args *a = arg;
    const struct common *c = l->c;
    const struct query *q = &l->q[0];
    struct thread_groups g;
    char err[512];
    if (!c->sel.per_thread && !c->sel.group_by) {
        thread_groups_by_process(q->p, &q->sel, &g);
    } else if (thread_groups_of(q->p, &q->sel, &c->sel, &g, err, sizeof err)) {
        error(EXIT_BAD_INPUT, "tree: %s", err);   /* options.c compiled them already */
        return;
    }
    /* the tree printed: the display tree itself, or its tag scopes */
    struct dtree scopes, *t = &l->t;
    uint32_t *node_of = xmalloc(l->t.n * sizeof *node_of);
    if (a->functions) {
        for (uint32_t n = 0; n < l->t.n; n++) node_of[n] = n;
    } else {
        dtree_init(&scopes);
        dtree_tag_scopes(&l->t, &scopes, node_of);
        t = &scopes;
    }
    dtree_children(t, 0);

    struct out o = { 0 }, sorted = { 0 };
    struct builder b = { .t = t, .tags = !a->functions, .by = c->out.by, .a = a, .out = &o };
    struct root *roots = xmalloc((g.n + 1) * sizeof *roots);
    size_t nroots;
    build_groups(&b, l, &g, node_of, roots, &nroots);
    order_roots(&b, roots, nroots, &sorted);
    int64_t whole = 0;
    for (size_t r = 0; r < nroots; r++) whole = counter_combine(c->out.by, whole, o.v[roots[r].start].total.v[c->out.by]);

    counter_set nc = shown_counters(q->p);
    if (a->format == FMT_TEXT) write_text(&sorted, c->out.by, whole, a->functions, c->out.human);
    else if (a->format == FMT_CSV) write_csv(&sorted, nc);
    else if (a->format == FMT_JSON) write_json(&sorted, nc);
    else write_dot(&sorted, c->out.by, whole);
    listing_ignored_line(l, a->format == FMT_TEXT ? stdout : stderr);

    free(o.v);
    free(sorted.v);
    free(roots);
    free(node_of);
    arena_free(&b.text);
    if (!a->functions) dtree_free(&scopes);
    thread_groups_free(&g);
}

/* -n and --depth, the tree's own (defaults differ from top's). */
static int tree_values(struct tree_args *a)
{
    int64_t v;
    if (a->limit_arg && (parse_int64(a->limit_arg, &v) || v < 0 || v > 100000000))
        return usage_error("tree", "bad value '%s' for -n (expected a count >= 0, 0 = all)", a->limit_arg);
    if (a->limit_arg) a->limit = (size_t)v;
    if (a->depth_arg && (parse_int64(a->depth_arg, &v) || v < 0 || v > 100000))
        return usage_error("tree", "bad value '%s' for --depth (expected a depth >= 0, 0 = all)", a->depth_arg);
    if (a->depth_arg) a->depth = (size_t)v;
    return 0;
}

int cmd_tree(int argc, char **argv)
{
    struct common c;
    struct tree_args a = { 0 };
    const struct opt opts[] = {
        OPTION_BY("sort children by this counter, shown in text and dot\n"
                  "(default memtot):\n" COUNTER_HELP),
        { .name = "functions", .flag = &a.functions, .value = 1,
          .help = "the call tree of functions instead of tags (self: the\n"
                  "function is the leaf after rules)" },
        OPTIONS_PER_THREAD("a tree per thread (default: per process), named\n"
                           "'NAME (tid N)' (NAME after the rules' thread lines)"),
        OPTION_GROUP(0),
        { .name = "limit", .letter = 'n', .arg = "N", .str = &a.limit_arg,
          .help = "at most N children per node, the largest; the others are\n"
                  "one '(K more)' node (default 0 = all)" },
        { .name = "depth", .arg = "K", .str = &a.depth_arg,
          .help = "at most K levels below the root (default 0 = all)" },
        OPTIONS_FILTER,
        OPTIONS_DISPLAY("with --functions, frames as in mpquery top --help"),
        OPTIONS_SELECT_EACH,
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable;\n"
                      "a bare NAME also finds filters/NAME.rules)"),
        OPTION_FORMAT("text (default), csv, json or dot (Graphviz)"),
        OPTIONS_READABLE,
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "tree", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing DB", .readable = 1 };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    if ((rc = tree_values(&a))) return rc;
    a.format = c.out.format;
    c.sel.keep_rows = 1;
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    return listing_run(&c, &files, 1, print, &a);
}
