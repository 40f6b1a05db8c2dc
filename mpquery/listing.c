/* The skeleton of top, fold, diff and leaks (listing.h): the rules and
 * suppressions loaded, each profile loaded, selected and mapped onto one
 * display tree, counters summed per node, what the filters leave out
 * taken out and counted; and the pieces of output these commands and the
 * report share (orders, the lines on what was left out or truncated, the
 * stack column). */
#include "mpquery.h"
#include "profile.h"
#include "listing.h"
#include "hists.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>

/* Profile i of a listing: loaded, selected (with c->sel, or its side's
 * selection in a diff), mapped onto t; 0 or the exit code. */
static int query_run(const struct common *c, const struct dbfiles *f, size_t i, struct dtree *t, struct query *q,
                     const struct listing_tree *from)
{
    char err[512];
    memset(q, 0, sizeof *q);
    const struct select_opts *o = c->sides.on ? &c->sides.sel[i] : &c->sel;
    int rc = load_selected(c, f, c->sides.on || c->server.side_where[0] || c->server.side_where[1] ? (int)i : -1,
                           (c->peak_rows || select_wants_peak(o) ? PROFILE_PEAK_ROWS : 0) | c->profile_flags, &q->p);
    if (rc) return rc;
    struct select_opts so = *o;
    so.window_quiet = c->out.format == FMT_CSV || c->out.format == FMT_JSON || mpquery_quiet;
    rc = select_apply(q->p, &so, &q->sel, err, sizeof err);
    if (rc) return error(rc, "%s: %s", q->p->path, err);
    if (from) {         /* from's paths, this listing's filters */
        q->stack_node = from->stack_node;
        *t = from->t;
        t->left_out = NULL;
        const struct view_opts *v = &c->view;
        if ((v->nfilter || v->nexclude || v->suppress || v->builtin) && (rc = view_left_out(t, v, err, sizeof err)))
            return error(rc, "%s: %s", c->cmd, err);
        return 0;
    }
    q->stack_node = xmalloc(q->p->nstacks * sizeof *q->stack_node);
    if ((rc = view_build(q->p, &c->view, t, q->stack_node, err, sizeof err)))
        return error(rc, "%s: %s", c->cmd, err);
    return 0;
}

static void query_free(struct query *q)
{
    selection_free(&q->sel);
    free(q->stack_node);
    profile_free(q->p);
}

/* Takes the paths the filters leave out (t.left_out) out of every
 * profile's counters, into l->left or, the built-in suppressions',
 * l->suppressed (counting the recorded stacks). */
static void listing_filter(struct listing *l)
{
    const uint8_t *left_out = l->t.left_out;
    for (size_t i = 0; i < l->n; i++) {
        const struct query *q = &l->q[i];
        struct left_out *to[3] = { NULL, &l->left[i], &l->suppressed[i] };
        for (uint32_t r = 0; r < q->p->nrecorded; r++) {
            uint32_t node = q->stack_node[q->p->recorded[r]];
            if (node != NONE && left_out[node] && !counters_zero(&q->sel.stack_c[r])) to[left_out[node]]->stacks++;
        }
        for (size_t node = 0; node < l->t.n; node++) {
            counters *own = &l->own[i][node];
            if (!left_out[node] || counters_zero(own)) continue;
            counters_add(&to[left_out[node]]->c, own);
            memset(own, 0, sizeof *own);
        }
    }
}

struct listing_memo { counters *self, *incl; };

/* Counters per node are summed once every profile is in the tree: the
 * second profile of a diff adds nodes. */
int listing_build(struct common *c, const struct dbfiles *profiles, size_t n, struct listing *l,
                  struct listing_rules *lr, const struct listing_tree *from)
{
    *l = (struct listing){ .c = c, .n = n, .tree_kept = from != NULL };
    int rc = load_rules(c, &lr->rules);
    if (rc) return rc;
    if ((rc = load_suppressions(c, &lr->suppress, &lr->builtin))) {
        rules_free(lr->rules);
        return rc;
    }
    l->nfilters = c->view.nfilter + c->view.nexclude + (lr->suppress ? rules_count_marks(lr->suppress) : 0);
    if (!from) dtree_init(&l->t);
    for (size_t i = 0; i < n && !rc; i++) rc = query_run(c, &profiles[i], i, &l->t, &l->q[i], from);
    for (size_t i = 0; i < n && !rc; i++) {
        l->own[i] = xcalloc(l->t.n, sizeof *l->own[i]);
        view_accumulate(l->q[i].p, &l->q[i].sel, l->q[i].stack_node, l->own[i]);
    }
    if (!rc && l->t.left_out) listing_filter(l);
    l->memo = xcalloc(1, sizeof *l->memo);
    for (size_t i = 0; i < n && !rc; i++) count_truncated(l->q[i].p, &l->q[i].sel, &l->trunc[i]);
    if (rc) listing_free(l, lr);
    return rc;
}

void listing_free(struct listing *l, struct listing_rules *lr)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->own[i]);
        if (l->tree_kept) l->q[i].stack_node = NULL;
        query_free(&l->q[i]);
    }
    if (!l->tree_kept) dtree_free(&l->t);
    else free(l->t.left_out);      /* the listing's own (query_run, tree_keep) */
    if (l->memo) free(l->memo->self), free(l->memo->incl), free(l->memo);
    rules_free(lr->rules);
    rules_free(lr->suppress);
    rules_free(lr->builtin);
    memset(l, 0, sizeof *l);
}

void listing_functions(struct listing *l, const counters *own, counters **self, counters **incl, int *kept)
{
    size_t nl = l->t.labels.n;
    *kept = own == l->own[0] && l->memo;
    if (*kept && l->memo->self) {
        *self = l->memo->self, *incl = l->memo->incl;
        return;
    }
    *self = xcalloc(nl, sizeof **self), *incl = xcalloc(nl, sizeof **incl);
    dtree_functions(&l->t, own, *self, *incl);
    if (*kept) l->memo->self = *self, l->memo->incl = *incl;
}

/* ---------------------------------------------------------------- orders */
/* top's, leaks' and the report's: the larger value first; ties by the
 * lower stack id, by name for functions. */
int order_stack(uint32_t a, uint32_t b, void *ctx)
{
    const struct order_ctx *x = ctx;
    int64_t va = x->c[a].v[x->by], vb = x->c[b].v[x->by];
    if (va != vb) return va > vb ? -1 : 1;
    int64_t ia = x->p->stacks[x->rep[a]].id, ib = x->p->stacks[x->rep[b]].id;
    return (ia > ib) - (ia < ib);
}

int order_function(uint32_t a, uint32_t b, void *ctx)
{
    const struct order_ctx *x = ctx;
    int64_t va = x->c[a].v[x->by], vb = x->c[b].v[x->by];
    if (va != vb) return va > vb ? -1 : 1;
    const struct strtab *l = &x->t->labels;
    size_t na = l->len[a], nb = l->len[b];
    int c = memcmp(l->str[a], l->str[b], na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

/* more bytes live, then more blocks, then the lower stack id */
int order_leak(uint32_t a, uint32_t b, void *ctx)
{
    const struct order_ctx *x = ctx;
    const counters *ca = &x->c[a], *cb = &x->c[b];
    if (ca->v[MEMLIVE] != cb->v[MEMLIVE]) return ca->v[MEMLIVE] > cb->v[MEMLIVE] ? -1 : 1;
    if (ca->v[NLIVE] != cb->v[NLIVE]) return ca->v[NLIVE] > cb->v[NLIVE] ? -1 : 1;
    int64_t ia = x->p->stacks[x->rep[a]].id, ib = x->p->stacks[x->rep[b]].id;
    return (ia > ib) - (ia < ib);
}

/* ---------------------------------------------------------------- truncated stacks */
static int64_t settings_depth(const char *settings)
{
    const char *d = settings ? strstr(settings, "MP_DEPTH=") : NULL;
    return d ? strtoll(d + 9, NULL, 10) : 0;
}

void count_truncated(const struct profile *p, const struct selection *s, struct truncated *out)
{
    memset(out, 0, sizeof *out);
    uint8_t *cut = xcalloc(p->nmodules ? p->nmodules : 1, 1);
    int any = 0;
    for (size_t m = 0; m < p->nmodules; m++) any |= cut[m] = !strcmp(p->modules[m].path, "[truncated]");
    for (uint32_t r = 0; any && r < p->nrecorded; r++) {
        if (!s->stack_c[r].v[NCALLS]) continue;
        uint32_t root = p->recorded[r];
        while (p->stacks[root].parent != NONE) root = p->stacks[root].parent;
        if (!cut[p->frames[p->stacks[root].frame].module]) continue;
        out->stacks++;
        out->calls = sat_add(out->calls, s->stack_c[r].v[NCALLS]);
    }
    free(cut);
    for (size_t k = 0; out->stacks && k < p->nprocs; k++) {
        int64_t d = s->proc_snapshot[k] != NONE ? settings_depth(p->procs[k].settings) : 0;
        if (d > out->depth) out->depth = d;
    }
}

void truncated_line(const struct truncated *t, const char *side, FILE *f)
{
    if (!t->stacks) return;
    if (f != stdout) fflush(stdout);
    fprintf(f, "%lld stack%s (%lld calls)%s %s deeper than MP_DEPTH", (long long)t->stacks, t->stacks == 1 ? "" : "s",
            (long long)t->calls, side, t->stacks == 1 ? "was" : "were");
    if (t->depth) fprintf(f, "=%lld", (long long)t->depth);
    fputs(": inclusive figures of outer functions are low; ", f);
    if (t->depth && t->depth < 1024)
        fprintf(f, "record with MP_DEPTH=%lld\n", (long long)(t->depth * 4 < 1024 ? t->depth * 4 : 1024));
    else
        fputs("record with a larger MP_DEPTH (at most 1024)\n", f);
}

/* ---------------------------------------------------------------- printing */
static void listing_truncated_lines(const struct listing *l, FILE *f)
{
    for (size_t i = 0; i < l->n; i++) truncated_line(&l->trunc[i], l->n > 1 ? (i ? " in b" : " in a") : "", f);
}

void listing_ignored_line(const struct listing *l, FILE *f)
{
    static const char *const names[] = { "a", "b" };
    listing_truncated_lines(l, f);
    if (!l->left[0].stacks && !l->left[1].stacks) return;
    if (f != stdout) fflush(stdout);        /* after what stdout had before it */
    fputs("ignored ", f);
    /* what the stacks amount to: calls and bytes, or by a mapping counter (top --mmap) mappings and
       bytes mapped */
    int maps = counter_shown(MAPPING_COUNTERS, l->c->out.by);
    for (size_t i = 0; i < l->n; i++) {
        const struct left_out *x = &l->left[i];
        char size[32];                  /* in units only under a text table */
        fprintf(f, "%s%lld stacks (%lld %s, %s%s)", i ? ", " : "", (long long)x->stacks,
                (long long)x->c.v[maps ? NMAP : NCALLS], maps ? "mappings" : "calls",
                fmt_size(l->c->out.human && f == stdout, x->c.v[maps ? MAPPED : MEMTOT], size, sizeof size),
                maps ? " mapped" : "");
        if (l->n > 1) fprintf(f, " in %s", names[i]);
    }
    fprintf(f, " with %zu filters\n", l->nfilters);
}

static void json_left_out(struct json *w, const struct left_out *x)
{
    json_key(w, "stacks"); json_int(w, x->stacks);
    json_key(w, "calls"); json_int(w, x->c.v[NCALLS]);
    json_key(w, "bytes"); json_int(w, x->c.v[MEMTOT]);
}

/* {"ignored": {stacks, calls, bytes, filters}, "rows": [...]}; a diff's
 * ignored object holds one {stacks, calls, bytes} per profile, a and b. */
static void json_listing(const struct listing *l, const struct table *tab)
{
    struct json w;
    json_init(&w, stdout);
    json_open(&w, '{');
    json_key(&w, "ignored");
    json_open(&w, '{');
    if (l->n == 1) json_left_out(&w, &l->left[0]);
    for (size_t i = 0; l->n > 1 && i < l->n; i++) {
        json_key(&w, i ? "b" : "a");
        json_open(&w, '{');
        json_left_out(&w, &l->left[i]);
        json_close(&w, '}');
    }
    json_key(&w, "filters"); json_int(&w, (int64_t)l->nfilters);
    json_close(&w, '}');
    json_rows_last(&w, "rows", tab);
}

void listing_print(const struct listing *l, const struct table *tab)
{
    int format = l->c->out.format;
    if (l->c->out.pager) pager_start();
    if (format == FMT_JSON && l->nfilters) {
        json_listing(l, tab);
        listing_truncated_lines(l, stderr);
        return;
    }
    table_print(tab, format, stdout);
    listing_ignored_line(l, format == FMT_TEXT ? stdout : stderr);
}

void listing_print_callers(const struct listing *l, const struct table *tab, const uint32_t *rows,
                           const uint32_t *stacks)
{
    if (l->c->out.pager) pager_start();
    table_print_callers(tab, &l->q[0], &l->t, &l->c->view, rows, stacks, stdout);
    listing_ignored_line(l, stdout);
}

int listing_callers_check(const struct common *c, int functions)
{
    if (c->out.format != FMT_TEXT)
        return usage_error(c->cmd, "--callers is for text output (csv and json have the whole stack in 'where')");
    if (functions) return usage_error(c->cmd, "--callers shows stacks, not --functions");
    return 0;
}

size_t listing_depth(const struct common *c)
{
    return c->out.width && !c->out.depth_given ? 0 : (size_t)c->out.depth;
}

void node_stacks(const struct query *q, const struct dtree *t, int by, uint32_t *rep, uint32_t *nmerged)
{
    const struct profile *p = q->p;
    const counters *c = q->sel.stack_c;
    for (size_t n = 0; n < t->n; n++) {
        rep[n] = NONE;
        nmerged[n] = 0;
    }
    for (uint32_t r = 0; r < p->nrecorded; r++) {
        uint32_t s = p->recorded[r], n = q->stack_node[s];
        if (n == NONE || counters_zero(&c[r])) continue;
        nmerged[n]++;
        const counters *best = rep[n] == NONE ? NULL : &c[p->recorded_of[rep[n]]];
        if (!best || c[r].v[by] > best->v[by] || (c[r].v[by] == best->v[by] && p->stacks[s].id < p->stacks[rep[n]].id))
            rep[n] = s;
    }
}

void table_stack(struct table *tab, int format, int64_t id, uint32_t nmerged)
{
    if (format != FMT_TEXT) {
        table_int(tab, id);
        table_int(tab, nmerged);
        return;
    }
    char cell[48];
    if (nmerged > 1) snprintf(cell, sizeof cell, "%lld+%u", (long long)id, nmerged - 1);
    else snprintf(cell, sizeof cell, "%lld", (long long)id);
    table_str(tab, cell);
}
