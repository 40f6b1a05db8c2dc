/* listing_run (listing.h), and the listings kept in mpquery serve's and
 * report's process (listing.h:
 * listing_cached), so that the views of one state build their listing,
 * display tree and rules once: each by its key, the text of every option
 * its building reads (files, selection, rules, filters, display), at most
 * KEEP of them, the least recently used dropped first. A listing is
 * handed to a command as it was built: the commands only read it (their
 * tables, trees and graphs are made beside it); each gets the messages
 * its building wrote, as if it had built it. */
#define _GNU_SOURCE
#include "mpquery.h"
#include "listing.h"
#include "view.h"
#include "rules.h"

#include <stdlib.h>
#include <string.h>

#define KEEP 6

int listing_cache_on;

/* A display tree, its listings' (tree_key: the same up to the selection). */
struct tree {
    char *key;
    struct listing_tree lt;
    int refs;                   /* the listings kept that read it */
};
struct kept {
    char *key;
    struct listing l;
    struct listing_rules lr;
    struct tree *tree;
    struct strbuf notes;        /* its stderr while it was built */
    unsigned long used;
};
static struct kept kept[KEEP];
static struct tree trees[KEEP];
static unsigned long uses;

static void key_str(struct strbuf *k, const char *s) { sb_printf(k, "%s\x1f", s ? s : "\x1e"); }

/* What the display tree of c over f depends on (files, rules, display
 * options), as text: its paths; the filters only mark them (left_out,
 * each listing's own: view_left_out), so leaks' suppressions and a
 * --filter reuse the tree. */
static void tree_key(const struct common *c, const struct dbfiles *f, struct strbuf *k)
{
    for (size_t i = 0; i < f->n; i++) key_str(k, f->paths[i]);
    sb_printf(k, "|r%zu %d", c->rules.nfiles, c->rules.no_default);
    for (size_t i = 0; i < c->rules.nfiles; i++) key_str(k, c->rules.files[i]);
    const struct view_opts *v = &c->view;
    sb_printf(k, "|v%d %d %d %d %d %d", v->no_inline, v->lines, v->module, v->native, v->collapse,
              v->no_signatures);
}

/* What the listing depends on: its tree's key (tree_key, already in k),
 * the filters, then the selection. Every listing kept has its sample rows
 * (keep_rows, a few bytes a row), so that --per-thread's views share the
 * listing of the same selection. */
static void key_of(const struct common *c, struct strbuf *k)
{
    sb_printf(k, "|s%zu %d", c->rules.nsuppressions, c->rules.builtin_suppressions);
    for (size_t i = 0; i < c->rules.nsuppressions; i++) key_str(k, c->rules.suppressions[i]);
    const struct view_opts *v = &c->view;
    sb_printf(k, "|f%zu", v->nfilter);
    for (size_t i = 0; i < v->nfilter; i++) key_str(k, v->filter[i]);
    sb_printf(k, "|x%zu", v->nexclude);
    for (size_t i = 0; i < v->nexclude; i++) key_str(k, v->exclude[i]);
    const struct select_opts *s = &c->sel;
    sb_printf(k, "|%d %d %lld %d %lld %lld %d %lld %d %lld %d %d %d|", s->run_all, s->has_run,
              (long long)s->run_id, s->has_pid, (long long)s->pid, (long long)s->image, s->has_tid,
              (long long)s->tid, s->snap_kind, (long long)s->snap_value, s->live_only, c->peak_rows,
              c->profile_flags);
    key_str(k, s->exe), key_str(k, s->thread_re), key_str(k, s->snap_label), key_str(k, s->since);
    key_str(k, s->until);
    for (size_t i = 0; i < s->nthread_groups; i++) key_str(k, s->thread_groups[i]);
}

static void tree_unref(struct tree *t)
{
    if (--t->refs) return;
    dtree_free(&t->lt.t);
    free(t->lt.stack_node);
    free(t->key);
    memset(t, 0, sizeof *t);
}

static void drop(struct kept *e)
{
    if (!e->key) return;
    listing_free(&e->l, &e->lr);
    if (e->tree) tree_unref(e->tree);
    sb_free(&e->notes);
    free(e->key);
    memset(e, 0, sizeof *e);
}

void listing_cache_clear(void)
{
    for (size_t i = 0; i < KEEP; i++) drop(&kept[i]);
    for (size_t i = 0; i < KEEP; i++)       /* listing_tree_get's, each held by the cache itself */
        if (trees[i].key) tree_unref(&trees[i]);
}

/* The tree kept under key, or NULL. */
static struct tree *tree_of(const char *key, size_t len)
{
    for (size_t i = 0; i < KEEP; i++)
        if (trees[i].key && !strncmp(trees[i].key, key, len) && !trees[i].key[len]) return &trees[i];
    return NULL;
}

/* e's listing's tree (its child lists built: the listings only read it)
 * kept under key[0..len), for the listings of other selections. */
static void tree_keep(struct kept *e, const char *key, size_t len)
{
    struct tree *t = NULL;
    for (size_t i = 0; i < KEEP && !t; i++) if (!trees[i].key) t = &trees[i];
    if (!t) return;     /* never: a tree per listing at most */
    t->key = xmalloc(len + 1);
    memcpy(t->key, key, len);
    t->key[len] = 0;
    t->lt = (struct listing_tree){ e->l.t, e->l.q[0].stack_node };
    t->lt.t.left_out = NULL;        /* e's filters' (its own), not the tree's */
    t->refs = 1;
    e->tree = t;
    e->l.tree_kept = 1;
}

/* A window's line (select_apply's: "mpquery: window ...: snapshots ..."),
 * which csv and json leave out (select.h: window_quiet). */
#define WINDOW_NOTE "mpquery: window "

static int window_quiet(const struct common *c)
{
    return c->out.format == FMT_CSV || c->out.format == FMT_JSON || mpquery_quiet;
}

/* notes to stderr, the window's line left out when c is quiet. */
static void say_notes(const struct common *c, const char *notes, size_t len)
{
    for (const char *s = notes, *end = notes + len; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);
        if (!window_quiet(c) || n < strlen(WINDOW_NOTE) || memcmp(s, WINDOW_NOTE, strlen(WINDOW_NOTE)))
            fwrite(s, 1, n, stderr);
        s += n;
    }
}

/* Builds the listing into e (over from's tree, when not NULL), its
 * messages caught (then said, say_notes); 0 or the exit code (nothing
 * kept). Built as text asks for it (the window's line said), so that a
 * table's view (csv) and a tree's share it. */
static int build(struct kept *e, struct common *c, const struct dbfiles *f, struct tree *from)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *notes = open_memstream(&buf, &len), *saved = stderr;
    fflush(stderr);
    if (notes) stderr = notes;
    int format = c->out.format;
    if (!mpquery_quiet) c->out.format = FMT_TEXT;
    int rc = listing_build(c, f, 1, &e->l, &e->lr, from ? &from->lt : NULL);
    c->out.format = format;
    if (notes) {
        fclose(notes);
        stderr = saved;
        if (len) say_notes(c, buf, len);
        if (!rc && len) sb_add(&e->notes, buf, len);
        free(buf);
    }
    return rc;
}

int listing_cached(struct common *c, const struct dbfiles *profiles, void (*print)(struct listing *l, void *ctx),
                   void *ctx)
{
    struct strbuf k = { 0 };
    c->sel.keep_rows = 1;
    tree_key(c, profiles, &k);
    size_t tree_len = k.len;
    key_of(c, &k);
    struct kept *e = NULL, *oldest = &kept[0];
    for (size_t i = 0; i < KEEP && !e; i++) {
        if (kept[i].key && !strcmp(kept[i].key, k.s)) e = &kept[i];
        else if (kept[i].used < oldest->used) oldest = &kept[i];
    }
    if (!e) {
        e = oldest;
        drop(e);
        struct tree *t = tree_of(k.s, tree_len);
        int rc = build(e, c, profiles, t);
        if (rc) {
            memset(e, 0, sizeof *e);
            sb_free(&k);
            return rc;
        }
        if (t) e->tree = t, t->refs++;
        else dtree_children(&e->l.t, 1), tree_keep(e, k.s, tree_len);
        e->key = k.s;
        k.s = NULL;
    } else if (e->notes.len)
        say_notes(c, e->notes.s, e->notes.len);
    sb_free(&k);
    e->used = ++uses;
    /* what load_rules and load_suppressions set in c, as they did */
    c->view.rules = c->sel.rules = e->lr.rules;
    if (e->lr.builtin) c->view.builtin = e->lr.builtin;
    if (e->lr.suppress) c->view.suppress = e->lr.suppress;
    struct listing l = e->l;
    l.c = c;
    print(&l, ctx);
    return 0;
}

const struct listing_tree *listing_tree_kept(const struct common *c, const struct dbfiles *profiles)
{
    if (!listing_cache_on || profiles->n != 1) return NULL;
    struct strbuf k = { 0 };
    tree_key(c, profiles, &k);
    struct tree *t = tree_of(k.s, k.len);
    sb_free(&k);
    return t ? &t->lt : NULL;
}

const struct listing_tree *listing_tree_get(const struct common *c, const struct dbfiles *profiles,
                                            const struct profile *p)
{
    const struct listing_tree *kept_tree = listing_tree_kept(c, profiles);
    if (kept_tree || !listing_cache_on || profiles->n != 1) return kept_tree;
    struct tree *t = NULL;
    for (size_t i = 0; i < KEEP && !t; i++) if (!trees[i].key) t = &trees[i];
    if (!t) return NULL;
    /* the paths alone (the filters mark them per listing), child lists
     * built as a kept tree's are; held by the cache until it is cleared,
     * and the listings of its key (the flame graph's, the trees') start
     * from it */
    struct view_opts v = c->view;
    v.nfilter = v.nexclude = 0, v.suppress = v.builtin = NULL;
    char err[512];
    dtree_init(&t->lt.t);
    t->lt.stack_node = xmalloc((p->nstacks + 1) * sizeof *t->lt.stack_node);
    if (view_build(p, &v, &t->lt.t, t->lt.stack_node, err, sizeof err)) {
        dtree_free(&t->lt.t);
        free(t->lt.stack_node);
        memset(t, 0, sizeof *t);
        return NULL;
    }
    dtree_children(&t->lt.t, 1);
    struct strbuf k = { 0 };
    tree_key(c, profiles, &k);
    t->key = k.s, t->refs = 1;
    return &t->lt;
}

/* listing.h: the listing kept (serve, report), or built for this command. */
int listing_run(struct common *c, const struct dbfiles *profiles, size_t n,
                void (*print)(struct listing *l, void *ctx), void *ctx)
{
    if (listing_cache_on && n == 1 && !c->sides.on && !c->server.url) return listing_cached(c, profiles, print, ctx);
    struct listing l;
    struct listing_rules lr;
    int rc = listing_build(c, profiles, n, &l, &lr, NULL);
    if (rc) return rc;
    print(&l, ctx);
    listing_free(&l, &lr);
    return 0;
}
