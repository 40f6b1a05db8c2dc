/* mpquery serve's tree views (serve.h), in serve's process: the display
 * tree top and fold build (listing_run, the same options parsed by the
 * same parsers), then /tree: one node's children with the inclusive and
 * self figures of every counter; /bottomup: the same over the tree of
 * paths leaf first; /callers?function=F: F's callers (paths from F up)
 * and callees (from F down), F at its innermost place on each path;
 * /flame: the flame graph (serve_flame.c) of the tree or, reverse=1, of
 * the leaf-first one. A node is named in the URL by its path: root-first
 * names as fold writes them (';' as ':') separated by ';'. */
#include "mpquery.h"
#include "dtree.h"
#include "listing.h"
#include "options.h"
#include "serve.h"
#include "opt_groups.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- trees */
enum { LEAF_FIRST, CALLERS, CALLEES };

/* Path's components (names as fold writes them, ';' between) as a chain of
 * nodes of out from its root; per component i and label l of t,
 * match[i * nl + l]: l is component i. Returns how many; *end: the last. */
static size_t chain_of(const struct dtree *t, const char *path, struct dtree *out, uint8_t **match, uint32_t *end)
{
    size_t k = 0, nl = t->labels.n;
    struct strbuf e = { 0 };
    *end = 0;
    for (const char *p = path; p && *p; k++) {
        const char *semi = strchr(p, ';');
        size_t len = semi ? (size_t)(semi - p) : strlen(p);
        *match = xrealloc(*match, (k + 1) * nl);
        for (uint32_t l = 0; l < nl; l++) {
            e.len = 0;
            fold_escape(t->labels.str[l], t->labels.len[l], &e);
            (*match)[k * nl + l] = e.len == len && !memcmp(e.s, p, len);
        }
        *end = dtree_child(out, *end, strtab_intern(&out->labels, p, len));
        p = semi ? semi + 1 : NULL;
    }
    sb_free(&e);
    return k;
}

/* The part of a rerooted tree of t that a table shows: the chain of
 * nodes path names, the last one *at, and its children, into out, with
 * their inclusive values and self ones (the node's frame allocated: the
 * leaf of the paths counted) (incl, self: sized out->n), from one pass over t's paths that stops where a path leaves
 * the chain: a view does not build the whole tree. CALLERS: path starts
 * with f's name; CALLEES: the chain is f, its children what f calls. */
static void tree_part(const struct dtree *t, const counters *own, int mode, uint32_t f, const char *path,
                      struct dtree *out, counters **incl, counters **self, uint32_t *at)
{
    uint8_t *match = NULL;
    uint32_t end, nl = (uint32_t)t->labels.n, *map = none_array(nl);
    size_t k = chain_of(t, path, out, &match, &end);
    counters *in = xcalloc(out->n + nl + 1, sizeof *in), *se = xcalloc(out->n + nl + 1, sizeof *se);
    for (uint32_t n = 1; n < t->n; n++) {
        if (counters_zero(&own[n])) continue;
        uint32_t x = n, below = NONE, last = NONE, c;     /* last: t's node of end */
        while (mode != LEAF_FIRST && x != 0 && t->label[x] != f) below = x, x = t->parent[x];
        if (mode != LEAF_FIRST && x == 0) continue;
        if (mode == CALLEES) {
            c = below, last = x;        /* what f calls on this path (NONE: f allocated) */
        } else {
            size_t i = 0;
            for (; i < k && x != 0 && match[i * nl + t->label[x]]; i++) last = x, x = t->parent[x];
            if (i < k) continue;
            c = x == 0 ? NONE : x;      /* the next frame up (NONE: the path ends here) */
        }
        /* self: the node's frame is the path's leaf (it allocated) */
        counters_add(&in[end], &own[n]);
        if (last == n) counters_add(&se[end], &own[n]);
        if (c == NONE) continue;
        uint32_t l = t->label[c];
        if (map[l] == NONE) map[l] = strtab_intern(&out->labels, t->labels.str[l], t->labels.len[l]);
        uint32_t cn = dtree_child(out, end, map[l]);
        counters_add(&in[cn], &own[n]);
        if (c == n) counters_add(&se[cn], &own[n]);
    }
    free(map);
    free(match);
    *incl = in, *self = se, *at = end;
}

/* The URL parameter "KEY=PATH" of node n (root-first, encoded). */
static void path_param(struct strbuf *sb, const struct dtree *t, uint32_t n, const char *key)
{
    struct strbuf p = { 0 };
    dtree_fold_path(t, n, &p);
    sb_printf(sb, "%s=", key);
    url_encode(sb, p.s ? p.s : "");
    sb_free(&p);
}

/* ---------------------------------------------------------------- the table */
struct tree_page {
    const struct serve_req *r;
    const struct listing *l;
    const char *view;           /* the path of the view, for links */
    const char *extra;          /* parameters links keep (callers: function=F) */
    int callees;                /* a node links to its function's callers page */
    uint32_t *label_frame;      /* per label of l->t: a frame of it with a file, or NONE */
    int k[NSTACK_COUNTERS], nk; /* the counters shown */
    int rc;                     /* the view's exit code (a bad search: 2) */
};

static int cmp_by(const void *a, const void *b, void *ctx)
{
    const int64_t *v = ctx;
    int64_t x = v[*(const uint32_t *)a], y = v[*(const uint32_t *)b];
    return (x < y) - (x > y);
}

/* A link to node n of t in the view ("all" for the root). */
static void node_link(struct strbuf *sb, const struct tree_page *g, const struct dtree *t, uint32_t n)
{
    struct strbuf x = { 0 };
    if (g->callees && n != 0) {
        sb_puts(&x, "function=");
        url_encode(&x, t->labels.str[t->label[n]]);
    } else {
        if (g->extra) sb_printf(&x, "%s&", g->extra);
        path_param(&x, t, n, "path");
    }
    sb_puts(sb, "<a href=\"");
    serve_link(sb, g->r, g->view, x.s);
    sb_puts(sb, "\">");
    if (n == 0) sb_puts(sb, "all");
    else xml_escape(sb, t->labels.str[t->label[n]], t->labels.len[t->label[n]], 300);
    sb_puts(sb, "</a>");
    sb_free(&x);
}

/* Per label of l's tree, a frame of it whose file is known (the first
 * stack's), for the rows' links to /source. */
static uint32_t *label_frames(const struct listing *l)
{
    const struct profile *p = l->q[0].p;
    uint32_t *lf = none_array(l->t.labels.n + 1);
    for (size_t s = 0; s < p->nstacks; s++) {
        uint32_t node = l->q[0].stack_node[s];
        if (node == NONE || node == 0 || node >= l->t.n) continue;
        const struct frame *f = &p->frames[p->stacks[s].frame];
        if (lf[l->t.label[node]] == NONE && f->file != NONE && p->files[f->file]) lf[l->t.label[node]] = p->stacks[s].frame;
    }
    return lf;
}

/* " file:line", a link to /source, when node n's function has a frame
 * whose file is known. */
static void source_link(struct strbuf *sb, const struct tree_page *g, const struct dtree *t, uint32_t n)
{
    if (n == 0) return;
    struct dtree *base = (struct dtree *)&g->l->t;
    size_t nl = base->labels.n;
    uint32_t l = strtab_intern(&base->labels, t->labels.str[t->label[n]], t->labels.len[t->label[n]]);
    if (l >= nl || g->label_frame[l] == NONE) return;
    const struct profile *p = g->l->q[0].p;
    const struct frame *f = &p->frames[g->label_frame[l]];
    const char *file = p->files[f->file];
    struct strbuf x = { 0 };
    sb_puts(&x, "file=");
    url_encode(&x, file);
    if (f->line > 0) sb_printf(&x, "&line=%d", f->line);
    sb_puts(sb, " <a class=aside href=\"");
    serve_link(sb, g->r, "/source", x.s);
    sb_puts(sb, "\">");
    const char *base_name = path_basename(file);
    xml_escape(sb, base_name, strlen(base_name), 200);
    if (f->line > 0) sb_printf(sb, ":%d", f->line);
    sb_puts(sb, "</a>");
    sb_free(&x);
}

static void row(struct strbuf *sb, const struct tree_page *g, const struct dtree *t, uint32_t n,
                const counters *incl, const counters *self, int current)
{
    sb_printf(sb, "<tr%s>", current ? " class=cur" : "");
    for (int i = 0; i < g->nk; i++) sb_printf(sb, "<td class=n>%lld</td>", (long long)incl->v[g->k[i]]);
    for (int i = 0; i < g->nk; i++) sb_printf(sb, "<td class=n>%lld</td>", (long long)self->v[g->k[i]]);
    sb_puts(sb, "<td class=name>");
    node_link(sb, g, t, n);
    if (n != 0) {
        struct strbuf x = { 0 };
        sb_puts(&x, "function=");
        url_encode(&x, t->labels.str[t->label[n]]);
        sb_puts(sb, " <a class=aside href=\"");
        serve_link(sb, g->r, "/callers", x.s);
        sb_puts(sb, "\">callers</a>");
        sb_free(&x);
    }
    source_link(sb, g, t, n);
    sb_puts(sb, "</td></tr>\n");
}

struct kid { uint32_t node; counters incl; int by; };

/* The inclusive counters of at's children kids[0..nc) (own summed over
 * each one's subtree), in one pass over the nodes after at in index order
 * (a node's parent comes before it), each node given the child whose
 * subtree holds it: a view of one node costs its part of the tree, and
 * no array of counters per node. */
static void kids_sums(const struct dtree *t, const counters *own, uint32_t at, struct kid *kids, uint32_t nc)
{
    uint32_t *slot = xmalloc(t->n * sizeof *slot);
    for (uint32_t i = 0; i < nc; i++) slot[kids[i].node] = i, memset(&kids[i].incl, 0, sizeof kids[i].incl);
    for (uint32_t n = at + 1; n < t->n; n++) {
        uint32_t p = t->parent[n];
        if (p != at) slot[n] = p > at ? slot[p] : NONE;
        if (slot[n] != NONE) counters_add(&kids[slot[n]].incl, &own[n]);
    }
    free(slot);
}

static int cmp_kid(const void *a, const void *b)
{
    const struct kid *x = a, *y = b;
    int64_t u = x->incl.v[x->by], v = y->incl.v[y->by];
    return (u < v) - (u > v);
}

/* Node at's ancestors as links, then a table of it and its children,
 * largest by the --by counter first, at most n=N (default 100); incl
 * their inclusive counters per node of t, or NULL: summed here, over the
 * subtrees shown alone (kids_sums). */
static void tree_table(struct strbuf *sb, const struct tree_page *g, struct dtree *t, const counters *own,
                       const counters *incl, uint32_t at)
{
    int by = g->l->c->out.by;
    uint32_t chain[256];
    size_t depth = 0;
    for (uint32_t x = at; x != 0 && depth < 256; x = t->parent[x]) chain[depth++] = x;
    sb_puts(sb, "<p class=crumbs>");
    node_link(sb, g, t, 0);
    while (depth--) sb_puts(sb, " &gt; "), node_link(sb, g, t, chain[depth]);
    sb_puts(sb, "</p>\n<table class=t><tr>");
    for (int i = 0; i < g->nk; i++) sb_printf(sb, "<th>%s</th>", counter_name[g->k[i]]);
    for (int i = 0; i < g->nk; i++) sb_printf(sb, "<th>self %s</th>", counter_name[g->k[i]]);
    sb_puts(sb, "<th>function</th></tr>\n");
    if (t->children_ready < 2) dtree_children(t, 1);
    uint32_t a = t->child_start[at], b = t->child_start[at + 1], nc = b - a;
    struct kid *kids = xmalloc((nc + 1) * sizeof *kids);
    counters sum = own[at];
    for (uint32_t i = 0; i < nc; i++) {
        kids[i].node = t->child_list[a + i], kids[i].by = by;
        if (incl) kids[i].incl = incl[kids[i].node];
    }
    if (!incl) kids_sums(t, own, at, kids, nc);
    for (uint32_t i = 0; i < nc; i++) counters_add(&sum, &kids[i].incl);
    row(sb, g, t, at, incl ? &incl[at] : &sum, &own[at], 1);
    qsort(kids, nc, sizeof *kids, cmp_kid);
    const char *np = serve_param(g->r, "n");
    size_t limit = np ? (size_t)atol(np) : 100, shown = 0, some = 0;
    if (limit == 0) limit = g->r->rows_cap;     /* report -n 0: what its bound holds */
    for (uint32_t i = 0; i < nc; i++) {
        if (counters_zero(&kids[i].incl)) continue;
        some++;
        if (limit == 0 || shown < limit) row(sb, g, t, kids[i].node, &kids[i].incl, &own[kids[i].node], 0), shown++;
    }
    sb_puts(sb, "</table>\n");
    if (shown < some) sb_printf(sb, "<p class=note>%zu of %zu children shown (n=N for more)</p>\n", shown, some);
    free(kids);
}

/* ---------------------------------------------------------------- the views */
static uint32_t label_of(const struct dtree *t, const char *name)
{
    size_t len = strlen(name);
    for (uint32_t l = 0; l < t->labels.n; l++)
        if (t->labels.len[l] == len && !memcmp(t->labels.str[l], name, len)) return l;
    return NONE;
}

/* /callers without a function: the functions, largest inclusive value
 * first (at most n=N, 100), each a link to its callers. */
static void function_list(struct strbuf *sb, struct tree_page *g, struct listing *l)
{
    struct dtree *t = &l->t;
    size_t nl = t->labels.n, n = 0;
    int by = l->c->out.by;
    counters *self, *incl;
    int kept;
    listing_functions(l, l->own[0], &self, &incl, &kept);
    uint32_t *items = xmalloc((nl + 1) * sizeof *items);
    int64_t *v = xmalloc((nl + 1) * sizeof *v);
    for (uint32_t i = 0; i < nl; i++)
        if ((v[i] = incl[i].v[by]) != 0) items[n++] = i;
    qsort_r(items, n, sizeof *items, cmp_by, v);
    const char *np = serve_param(g->r, "n");
    size_t limit = np ? (size_t)atol(np) : 100;
    sb_printf(sb, "<p class=note>Choose a function: its callers and callees (%zu functions by inclusive %s).</p>\n"
                  "<table class=t><tr><th>inclusive %s</th><th>self %s</th><th>function</th></tr>\n",
              n, counter_name[by], counter_name[by], counter_name[by]);
    for (size_t i = 0; i < n && (limit == 0 || i < limit); i++) {
        struct strbuf x = { 0 };
        sb_puts(&x, "function=");
        url_encode(&x, t->labels.str[items[i]]);
        sb_printf(sb, "<tr><td class=n>%lld</td><td class=n>%lld</td><td><a href=\"", (long long)v[items[i]],
                  (long long)self[items[i]].v[by]);
        serve_link(sb, g->r, "/callers", x.s);
        sb_puts(sb, "\">");
        xml_escape(sb, t->labels.str[items[i]], t->labels.len[items[i]], 300);
        sb_puts(sb, "</a></td></tr>\n");
        sb_free(&x);
    }
    sb_puts(sb, "</table>\n");
    if (!kept) free(self), free(incl);
    free(items), free(v);
}

/* /callers: F's callers as a tree (expanding by path), then its callees. */
static int callers_page(struct strbuf *sb, struct tree_page *g, struct listing *l)
{
    const char *f = serve_param(g->r, "function");
    uint32_t fl = f ? label_of(&l->t, f) : NONE;
    if (!f) {
        function_list(sb, g, l);
        return 0;
    }
    if (fl == NONE) {
        return error(EXIT_BAD_INPUT, "callers: no frame named '%s' in the selection (after rules)", f);
    }
    struct strbuf x = { 0 };
    sb_puts(&x, "function=");
    url_encode(&x, f);
    g->extra = x.s;
    struct strbuf fp = { 0 };
    fold_escape(f, strlen(f), &fp);
    for (int mode = CALLERS; mode <= CALLEES; mode++) {
        struct dtree t;
        counters *incl, *self;
        uint32_t at;
        const char *path = mode == CALLERS ? serve_param(g->r, "path") : NULL;
        dtree_init(&t);
        tree_part(&l->t, l->own[0], mode, fl, path ? path : fp.s, &t, &incl, &self, &at);
        sb_puts(sb, mode == CALLERS ? "<h2>callers (from the function up to the root)</h2>\n"
                                    : "<h2>callees (from the function down to the allocation)</h2>\n");
        g->callees = mode == CALLEES;
        tree_table(sb, g, &t, self, incl, at);
        dtree_free(&t);
        free(incl), free(self);
    }
    sb_free(&fp);
    sb_free(&x);
    return 0;
}

static void bottomup_page(struct strbuf *sb, struct tree_page *g, struct listing *l)
{
    struct dtree t;
    counters *incl, *self;
    uint32_t at;
    dtree_init(&t);
    tree_part(&l->t, l->own[0], LEAF_FIRST, NONE, serve_param(g->r, "path"), &t, &incl, &self, &at);
    tree_table(sb, g, &t, self, incl, at);
    dtree_free(&t);
    free(incl);
    free(self);
}

static void print(struct listing *l, void *ctx)
{
    struct tree_page *g = ctx;
    g->l = l;
    g->nk = counter_list(shown_counters(l->q[0].p) & (COUNTER_BIT(TIME) - 1), g->k);
    g->label_frame = label_frames(l);
    struct strbuf sb = { 0 };
    int rc = 0;
    if (!strcmp(g->view, "/flame")) rc = serve_flame_page(g->r, l);
    else if (!strcmp(g->view, "/callers")) rc = callers_page(&sb, g, l);
    else if (!strcmp(g->view, "/tree"))
        tree_table(&sb, g, &l->t, l->own[0], NULL, serve_node_of(&l->t, serve_param(g->r, "path")));
    else bottomup_page(&sb, g, l);
    if (sb.len) fwrite(sb.s, 1, sb.len, stdout);
    sb_free(&sb);
    free(g->label_frame);
    g->rc = rc;
    if (!rc) listing_ignored_line(l, stderr);
}

int serve_tree_view(void *ctx, int argc, char **argv)
{
    struct common c;
    const struct opt opts[] = {
        OPTION_BY("the counter (default memtot)"),
        OPTIONS_FILTER,
        OPTIONS_DISPLAY(NULL),
        OPTIONS_SELECT("select samples as in mpquery top --help"),
        OPTIONS_RULES("a rules file"),
        OPTIONS_WINDOW,
        OPTIONS_SERVER_STORE,
        { 0 }
    };
    /* its options are top's: their messages name top (see mpquery top --help) */
    const struct cmd_opts d = { .cmd = "top", .usage = "", .more = "", .opts = opts, .missing = "missing DB" };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    struct tree_page g = { .r = ctx };
    g.view = g.r->path;
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    rc = listing_run(&c, &files, 1, print, &g);
    return rc ? rc : g.rc;
}
