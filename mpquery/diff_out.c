/* diff's --fold and --flame (diff.h): the two sides' values per path of
 * the display tree, as difffolded.pl's lines, or drawn as a differential
 * flame graph (flame.c) of B coloured by the change from A. */
#include "diff.h"
#include "dtree.h"
#include "output.h"

#include <stdio.h>
#include <stdlib.h>

struct fold_ctx { const int64_t *a, *b; int format; struct json w; };

static void emit_fold(uint32_t node, const char *path, size_t len, void *ctx)
{
    struct fold_ctx *x = ctx;
    if (!x->a[node] && !x->b[node]) return;
    if (x->format == FMT_CSV) {
        csv_field(stdout, path, len);
        printf(",%lld,%lld\n", (long long)x->a[node], (long long)x->b[node]);
    } else if (x->format == FMT_JSON) {
        json_open(&x->w, '{');
        json_key(&x->w, "path"), json_strn(&x->w, path, len);
        json_key(&x->w, "a"), json_int(&x->w, x->a[node]);
        json_key(&x->w, "b"), json_int(&x->w, x->b[node]);
        json_close(&x->w, '}');
    } else {
        fwrite(path, 1, len, stdout);
        printf(" %lld %lld\n", (long long)x->a[node], (long long)x->b[node]);
    }
}

/* --fold: subtrees where both profiles are zero are not walked. */
void diff_fold(struct listing *l, const int64_t *a, const int64_t *b)
{
    struct dtree *t = &l->t;
    int by = l->c->out.by;
    int64_t *keep = xmalloc(t->n * sizeof *keep), *subb = xmalloc(t->n * sizeof *subb);
    dtree_subtotal_of(t, l->own[0], by, keep);
    dtree_subtotal_of(t, l->own[1], by, subb);
    for (size_t n = 0; n < t->n; n++) keep[n] = keep[n] || subb[n];
    struct fold_ctx fx = { a, b, l->c->out.format, { 0 } };
    if (fx.format == FMT_CSV) printf("path,a,b\n");
    if (fx.format == FMT_JSON) fold_json_start(&fx.w, stdout, counter_name[by]);
    fold_walk(t, keep, emit_fold, &fx);
    if (fx.format == FMT_JSON) fold_json_end(&fx.w);
    free(keep);
    free(subb);
    listing_ignored_line(l, stderr);
}

/* --flame: widths from b, colours from a to b, per subtree. */
int diff_flame(struct listing *l, const struct flame_opts *f)
{
    struct dtree *t = &l->t;
    counters *suba = xmalloc(t->n * sizeof *suba), *subb = xmalloc(t->n * sizeof *subb);
    dtree_subtotals(t, l->own[0], suba);
    dtree_subtotals(t, l->own[1], subb);
    struct strbuf source = { 0 };
    sb_printf(&source, "%s \xe2\x86\x92 %s", l->q[0].p->path, l->q[1].p->path);
    const struct flame_graph g = { .t = t, .sub = subb, .base = suba, .by = l->c->out.by, .source = source.s };
    listing_ignored_line(l, stderr);
    int rc = flame_write(&g, f);            /* "wrote ..." the last line */
    sb_free(&source);
    free(suba);
    free(subb);
    return rc;
}
