/* The display tree (struct dtree), once view.c has built it: a trie of
 * label paths where node 0 is the root and a parent's index is below its
 * children's, so one backward pass sums subtrees and one forward pass
 * orders them. Its children lists, subtotals, tag scopes, per-function
 * sums, and its paths as text, JSON and fold lines. */
#include "mpquery.h"
#include "counters.h"
#include "dtree.h"

#include <stdlib.h>
#include <string.h>

void dtree_init(struct dtree *t)
{
    memset(t, 0, sizeof *t);
    t->cap = 1024;
    t->parent = xmalloc(t->cap * sizeof *t->parent);
    t->label = xmalloc(t->cap * sizeof *t->label);
    t->parent[0] = NONE;
    t->label[0] = NONE;
    t->n = 1;
    idmap_init(&t->child, 1024);
    strtab_init(&t->labels);
    strtab_init(&t->modules);
}

void dtree_free(struct dtree *t)
{
    free(t->parent);
    free(t->label);
    free(t->child_start);
    free(t->child_list);
    free(t->left_out);
    free(t->tag_label);
    free(t->label_kind);
    free(t->label_module);
    strtab_free(&t->modules);
    idmap_free(&t->child);
    strtab_free(&t->labels);
}

uint32_t dtree_child(struct dtree *t, uint32_t parent, uint32_t label)
{
    int created;
    uint32_t *v = idmap_put(&t->child, (uint64_t)parent << 32 | label, &created);
    if (!created) return *v;
    if (t->n == t->cap) {
        t->cap *= 2;
        t->parent = xrealloc(t->parent, t->cap * sizeof *t->parent);
        t->label = xrealloc(t->label, t->cap * sizeof *t->label);
    }
    t->parent[t->n] = parent;
    t->label[t->n] = label;
    t->children_ready = 0;
    return *v = (uint32_t)t->n++;
}
void dtree_subtotals(const struct dtree *t, const counters *own, counters *sub)
{
    memcpy(sub, own, t->n * sizeof *sub);
    for (size_t n = t->n; n-- > 1;) counters_add(&sub[t->parent[n]], &sub[n]);
}

void dtree_subtotal_of(const struct dtree *t, const counters *own, int k, int64_t *sub)
{
    for (size_t n = 0; n < t->n; n++) sub[n] = own[n].v[k];
    for (size_t n = t->n; n-- > 1;) sub[t->parent[n]] = counter_combine(k, sub[t->parent[n]], sub[n]);
}

#define TAG_PREFIX "[tag] "

void dtree_tag_scopes(const struct dtree *t, struct dtree *scopes, uint32_t *scope_of)
{
    /* per node of t: 1 while its path is tags only */
    uint8_t *tags_only = xmalloc(t->n);
    size_t plen = strlen(TAG_PREFIX);
    scope_of[0] = 0;
    tags_only[0] = 1;
    for (size_t n = 1; n < t->n; n++) {
        uint32_t parent = t->parent[n], l = t->label[n];
        tags_only[n] = tags_only[parent] && l < t->tag_cap && t->tag_label[l];
        if (!tags_only[n]) {
            scope_of[n] = scope_of[parent];
            continue;
        }
        const char *name = t->labels.str[l];
        size_t len = t->labels.len[l];
        if (len > plen && !memcmp(name, TAG_PREFIX, plen)) name += plen, len -= plen;
        scope_of[n] = dtree_child(scopes, scope_of[parent], strtab_intern(&scopes->labels, name, len));
    }
    free(tags_only);
}

static int label_cmp(const void *a, const void *b, void *ctx)
{
    const struct dtree *t = ctx;
    uint32_t la = t->label[*(const uint32_t *)a], lb = t->label[*(const uint32_t *)b];
    size_t na = t->labels.len[la], nb = t->labels.len[lb];
    int c = memcmp(t->labels.str[la], t->labels.str[lb], na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

void dtree_children(struct dtree *t, int sorted)
{
    if (t->children_ready >= (sorted ? 2u : 1u)) return;     /* built already (listing_cache.c: shared) */
    free(t->child_start);
    free(t->child_list);
    t->child_start = xcalloc(t->n + 1, sizeof *t->child_start);
    t->child_list = xmalloc(t->n * sizeof *t->child_list);
    for (size_t n = 1; n < t->n; n++) t->child_start[t->parent[n] + 1]++;
    for (size_t n = 0; n < t->n; n++) t->child_start[n + 1] += t->child_start[n];
    uint32_t *fill = xmalloc((t->n + 1) * sizeof *fill);
    memcpy(fill, t->child_start, (t->n + 1) * sizeof *fill);
    for (size_t n = 1; n < t->n; n++) t->child_list[fill[t->parent[n]]++] = (uint32_t)n;
    free(fill);
    if (sorted)
        for (size_t n = 0; n < t->n; n++) {
            uint32_t a = t->child_start[n], b = t->child_start[n + 1];
            if (b - a > 1) qsort_r(t->child_list + a, b - a, sizeof *t->child_list, label_cmp, t);
        }
    t->children_ready = sorted ? 2 : 1;
}

/* A node on dtree_functions' walk: its next child and its subtree's sum so far. */
struct walk { uint32_t node, pos; counters sum; };

void dtree_functions(struct dtree *t, const counters *own, counters *self, counters *incl)
{
    size_t nl = t->labels.n, sp = 0, cap = 64;
    for (size_t n = 1; n < t->n; n++) counters_add(&self[t->label[n]], &own[n]);
    if (!t->children_ready) dtree_children(t, 0);
    /* depth-first, each subtree summed as the walk leaves it (no array
     * per node: a view of a large tree allocates per label and per level
     * only); a label counts at its outermost occurrence on the path */
    uint32_t *active = xcalloc(nl ? nl : 1, sizeof *active);
    struct walk *w = xmalloc(cap * sizeof *w);
    w[sp++] = (struct walk){ 0, t->child_start[0], own[0] };
    while (sp > 0) {
        struct walk *top = &w[sp - 1];
        if (top->pos < t->child_start[top->node + 1]) {
            uint32_t c = t->child_list[top->pos++];
            active[t->label[c]]++;
            if (sp == cap) w = xrealloc(w, (cap *= 2) * sizeof *w);
            w[sp++] = (struct walk){ c, t->child_start[c], own[c] };
            continue;
        }
        uint32_t n = top->node;
        if (n != 0) {
            if (active[t->label[n]]-- == 1) counters_add(&incl[t->label[n]], &top->sum);
            counters_add(&w[sp - 2].sum, &top->sum);
        }
        sp--;
    }
    free(active);
    free(w);
}

void dtree_short_path(const struct dtree *t, uint32_t node, size_t depth,
                      const char *sep, struct strbuf *out)
{
    size_t k = 0;
    out->len = 0;
    sb_add(out, "", 0);
    for (uint32_t n = node; n != 0 && n != NONE; n = t->parent[n], k++) {
        if (depth && k == depth) { sb_puts(out, sep); sb_puts(out, "..."); break; }
        if (k) sb_puts(out, sep);
        sb_add(out, t->labels.str[t->label[n]], t->labels.len[t->label[n]]);
    }
}

void dtree_frames_json(const struct dtree *t, uint32_t node, struct strbuf *out)
{
    out->len = 0;
    sb_putc(out, '[');
    for (uint32_t n = node; n != 0; n = t->parent[n]) {
        if (n != node) sb_puts(out, ", ");
        json_string_sb(out, t->labels.str[t->label[n]], t->labels.len[t->label[n]]);
    }
    sb_putc(out, ']');
}

static int needs_escape(unsigned char c) { return c == ';' || c < 0x20 || c == 0x7f; }

void fold_escape(const char *s, size_t n, struct strbuf *out)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!needs_escape(c)) continue;
        sb_add(out, s + start, i - start);
        sb_putc(out, c == ';' ? ':' : ' ');
        start = i + 1;
    }
    sb_add(out, s + start, n - start);
}

void dtree_fold_path(const struct dtree *t, uint32_t node, struct strbuf *out)
{
    size_t k = 0;
    for (uint32_t n = node; n != 0; n = t->parent[n]) k++;
    uint32_t *path = xmalloc((k + 1) * sizeof *path);
    k = 0;
    for (uint32_t n = node; n != 0; n = t->parent[n]) path[k++] = n;
    out->len = 0;
    sb_add(out, "", 0);
    while (k-- > 0) {
        fold_escape(t->labels.str[t->label[path[k]]], t->labels.len[t->label[path[k]]], out);
        if (k) sb_putc(out, ';');
    }
    free(path);
}

void fold_walk(struct dtree *t, const int64_t *sub,
               void (*emit)(uint32_t node, const char *path, size_t len, void *ctx), void *ctx)
{
    dtree_children(t, 1);
    /* each label escaped once, not once per line it appears on */
    size_t nl = t->labels.n;
    const char **esc = xcalloc(nl, sizeof *esc);
    uint32_t *esc_len = xmalloc(nl * sizeof *esc_len);
    struct arena esc_text = { 0 };
    struct strbuf path = { 0 }, tmp = { 0 };
    uint32_t *stk = xmalloc(t->n * sizeof *stk), *pos = xmalloc(t->n * sizeof *pos);
    size_t *plen = xmalloc(t->n * sizeof *plen);
    size_t sp = 1;
    stk[0] = 0;
    pos[0] = t->child_start[0];
    plen[0] = 0;
    sb_add(&path, "", 0);
    while (sp > 0) {
        uint32_t n = stk[sp - 1];
        if (pos[sp - 1] == t->child_start[n + 1]) { sp--; continue; }
        uint32_t ch = t->child_list[pos[sp - 1]++];
        if (!sub[ch]) continue;
        uint32_t l = t->label[ch];
        if (!esc[l]) {
            tmp.len = 0;
            fold_escape(t->labels.str[l], t->labels.len[l], &tmp);
            esc[l] = arena_strndup(&esc_text, tmp.s ? tmp.s : "", tmp.len);
            esc_len[l] = (uint32_t)tmp.len;
        }
        path.len = plen[sp - 1];
        if (n != 0) sb_putc(&path, ';');
        sb_add(&path, esc[l], esc_len[l]);
        emit(ch, path.s, path.len, ctx);
        stk[sp] = ch;
        pos[sp] = t->child_start[ch];
        plen[sp] = path.len;
        sp++;
    }
    free(stk);
    free(pos);
    free(plen);
    free(esc);
    free(esc_len);
    arena_free(&esc_text);
    sb_free(&path);
    sb_free(&tmp);
}

void fold_json_start(struct json *w, FILE *f, const char *by)
{
    json_init(w, f);
    json_open(w, '{');
    json_key(w, "by"), json_str(w, by);
    json_key(w, "stacks"), json_open(w, '[');
}

void fold_json_end(struct json *w)
{
    json_close(w, ']');
    json_close(w, '}');
    fputc('\n', w->f);
}
