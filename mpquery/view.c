/* From database stacks to what the user sees: every frame gets a label
 * (its name after the rules, optionally decorated with file:line and
 * module) and every stack a node of the display tree, a trie of label
 * paths. Equal paths after rules are the same node, which is how fold
 * merges stacks and how diff matches two profiles.
 *
 * Cost: the rules run once per distinct function (and once per unnamed
 * frame), and so does the shortening of C++ names for text (names.c);
 * each stack costs one hash lookup because it extends its parent's
 * result (stacks are visited parents first). Stack rules, per path
 * root→leaf: the innermost `root` frame restarts the path, then the
 * outermost `prune` frame ends it, then `drop` frames are removed; with
 * --no-inline, inlined frames (inline_depth > 0) are skipped entirely.
 * Filters (--filter, --exclude, leaks' suppressions) mark display nodes,
 * not stacks (t->left_out): a path is kept or left out whole, and the
 * listing (common.c) takes the counters of those left out aside to report
 * them. Labels of [tag] frames are marked (t->tag_label) so that tree can
 * find the tag scopes, the leading tag labels of each path, whatever the
 * rules renamed them to. */
#include "mpquery.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "view.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 8              /* frame flag: not shown at all (--no-inline) */
#define NO_FRAMES "[no frames]"

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
}

void dtree_free(struct dtree *t)
{
    free(t->parent);
    free(t->label);
    free(t->child_start);
    free(t->child_list);
    free(t->left_out);
    free(t->tag_label);
    idmap_free(&t->child);
    strtab_free(&t->labels);
}

static uint32_t dtree_child(struct dtree *t, uint32_t parent, uint32_t label)
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

void frame_base_name(const struct profile *p, uint32_t frame, struct strbuf *out)
{
    const struct frame *f = &p->frames[frame];
    const struct module *m = &p->modules[f->module];
    out->len = 0;
    sb_add(out, "", 0);
    if (f->function != NONE) {
        const char *name = p->functions[f->function];
        if (module_is_tag(m)) sb_puts(out, "[tag] ");
        char *d = demangle(name);
        sb_puts(out, d ? d : name);
        free(d);
    } else if (m->special && strcmp(m->path, "[unknown]") != 0) {
        sb_puts(out, m->path);                      /* [truncated], [tag] ... */
    } else {
        sb_printf(out, "%s+0x%llx", m->base, (unsigned long long)f->offset);
    }
}

/* Per-name results of the rules, memoized per function. */
struct namer {
    const struct profile *p;
    const struct view_opts *o;
    struct dtree *t;
    uint32_t *fn_label;         /* per function: label id of the plain name */
    uint8_t *fn_flags;
    struct strbuf base, name, deco;
};

static void decorate(struct namer *nm, uint32_t frame, struct strbuf *out)
{
    const struct frame *f = &nm->p->frames[frame];
    const struct module *m = &nm->p->modules[f->module];
    if (nm->o->lines && f->file != NONE) {
        if (f->line > 0) sb_printf(out, " (%s:%d)", path_basename(nm->p->files[f->file]), f->line);
        else sb_printf(out, " (%s)", path_basename(nm->p->files[f->file]));
    }
    if (nm->o->module && f->function != NONE && !m->special) sb_printf(out, " [%s]", m->base);
}

/* Label id and flags of one frame. */
static uint32_t frame_label(struct namer *nm, uint32_t frame, unsigned *flags)
{
    const struct frame *f = &nm->p->frames[frame];
    if (nm->o->no_inline && f->inline_depth > 0) { *flags = SKIP; return NONE; }
    /* memoized per function, except tags: a tag may share its name (and so
     * its function id) with a real function but displays differently */
    uint32_t fn = nm->p->modules[f->module].special ? NONE : f->function;
    int decorated = nm->o->lines || nm->o->module;
    if (fn != NONE && nm->fn_label[fn] != NONE && !decorated) {
        *flags = nm->fn_flags[fn];
        return nm->fn_label[fn];
    }
    if (fn != NONE && nm->fn_label[fn] != NONE) {
        /* decorated: reuse the memoized name, add this frame's file:line */
        *flags = nm->fn_flags[fn];
        const struct strtab *l = &nm->t->labels;
        nm->deco.len = 0;
        sb_add(&nm->deco, l->str[nm->fn_label[fn]], l->len[nm->fn_label[fn]]);
        decorate(nm, frame, &nm->deco);
        return strtab_intern(&nm->t->labels, nm->deco.s, nm->deco.len);
    }
    frame_base_name(nm->p, frame, &nm->base);
    *flags = rules_apply(nm->o->rules, nm->base.s, nm->base.len, &nm->name);
    if (fn != NONE && (nm->o->collapse || nm->o->no_signatures)) {
        /* after every rule: the rules saw the whole name */
        int depth = nm->o->collapse ? rules_collapse_depth(nm->o->rules) : -1;
        shorten_name(nm->name.s, nm->name.len, depth, nm->o->no_signatures, &nm->base);
        struct strbuf x = nm->name;
        nm->name = nm->base;
        nm->base = x;
    }
    if (nm->name.len == 0) sb_puts(&nm->name, "[empty]");
    uint32_t plain = strtab_intern(&nm->t->labels, nm->name.s, nm->name.len);
    if (fn != NONE) {
        nm->fn_label[fn] = plain;
        nm->fn_flags[fn] = (uint8_t)*flags;
    }
    if (!decorated) return plain;
    decorate(nm, frame, &nm->name);
    return strtab_intern(&nm->t->labels, nm->name.s, nm->name.len);
}

static int is_tag_frame(const struct profile *p, uint32_t frame)
{
    const struct module *m = &p->modules[p->frames[frame].module];
    return module_is_tag(m);
}

/* Remembers that label came from a [tag] frame (tree's scopes). */
static void mark_tag_label(struct dtree *t, uint32_t label)
{
    if (label >= t->tag_cap) {
        size_t cap = t->tag_cap ? t->tag_cap : 64;
        while (cap <= label) cap *= 2;
        t->tag_label = xrealloc(t->tag_label, cap);
        memset(t->tag_label + t->tag_cap, 0, cap - t->tag_cap);
        t->tag_cap = cap;
    }
    t->tag_label[label] = 1;
}

/* --filter / --exclude: per label, does it match any of the regexes? */
static int compile_all(const char *const *res, size_t n, regex_t *out, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        int rc = regcomp(&out[i], res[i], REG_EXTENDED | REG_NOSUB);
        if (rc) {
            char msg[256];
            regerror(rc, &out[i], msg, sizeof msg);
            snprintf(err, errlen, "bad regex '%s' (%s)", res[i], msg);
            for (size_t j = 0; j < i; j++) regfree(&out[j]);
            return EXIT_BAD_INPUT;
        }
    }
    return 0;
}

static int match_any(const regex_t *re, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        regmatch_t m[1] = { { 0, (regoff_t)len } };
        if (regexec(&re[i], s, 1, m, REG_STARTEND) == 0) return 1;
    }
    return 0;
}

/* What a label matches: --filter (1), --exclude (2), a suppression (4);
 * 8: computed. */
enum { M_FILTER = 1, M_EXCLUDE = 2, M_SUPPRESS = 4, M_KNOWN = 8 };

static unsigned label_matches(const struct view_opts *o, const regex_t *fre, const regex_t *xre,
                              const char *s, size_t len, struct strbuf *scratch)
{
    unsigned m = M_KNOWN;
    if (match_any(fre, o->nfilter, s, len)) m |= M_FILTER;
    if (match_any(xre, o->nexclude, s, len)) m |= M_EXCLUDE;
    if (o->suppress && (rules_apply(o->suppress, s, len, scratch) & (RULE_DROP | RULE_PRUNE | RULE_ROOT)))
        m |= M_SUPPRESS;
    return m;
}

/* t->left_out for every node of the tree (a diff's second profile adds
 * nodes: computed again). Each label is tested once; a node inherits its
 * parent's matches (parent index < child index), so a path matches when
 * any of its frames does. */
static int mark_left_out(struct dtree *t, const struct view_opts *o, char *err, size_t errlen)
{
    regex_t *fre = xmalloc((o->nfilter + o->nexclude + 1) * sizeof *fre), *xre = fre + o->nfilter;
    int rc = compile_all(o->filter, o->nfilter, fre, err, errlen);
    if (rc) { free(fre); return rc; }
    if ((rc = compile_all(o->exclude, o->nexclude, xre, err, errlen))) {
        for (size_t i = 0; i < o->nfilter; i++) regfree(&fre[i]);
        free(fre);
        return rc;
    }
    uint8_t *label_bits = xcalloc(t->labels.n, 1);
    uint8_t *node_bits = xcalloc(t->n, 1);
    struct strbuf scratch = { 0 };
    uint8_t *left_out = t->left_out = xrealloc(t->left_out, t->n);
    left_out[0] = 0;
    for (size_t n = 1; n < t->n; n++) {
        uint32_t l = t->label[n];
        if (!label_bits[l])
            label_bits[l] = (uint8_t)label_matches(o, fre, xre, t->labels.str[l], t->labels.len[l], &scratch);
        node_bits[n] = (uint8_t)(node_bits[t->parent[n]] | (label_bits[l] & ~M_KNOWN));
        left_out[n] = (o->nfilter && !(node_bits[n] & M_FILTER)) || (node_bits[n] & (M_EXCLUDE | M_SUPPRESS));
    }
    for (size_t i = 0; i < o->nfilter + o->nexclude; i++) regfree(&fre[i]);
    free(fre);
    free(label_bits);
    free(node_bits);
    sb_free(&scratch);
    return 0;
}

int view_build(const struct profile *p, const struct view_opts *o,
               struct dtree *t, uint32_t *stack_node, char *err, size_t errlen)
{
    struct namer nm = { .p = p, .o = o, .t = t };
    nm.fn_label = none_array(p->nfunctions);
    nm.fn_flags = xcalloc(p->nfunctions, 1);
    uint32_t *flabel = xmalloc(p->nframes * sizeof *flabel);
    uint8_t *fflags = xmalloc(p->nframes);
    for (size_t f = 0; f < p->nframes; f++) {
        unsigned flags;
        flabel[f] = frame_label(&nm, (uint32_t)f, &flags);
        fflags[f] = (uint8_t)flags;
        if (flabel[f] != NONE && is_tag_frame(p, (uint32_t)f)) mark_tag_label(t, flabel[f]);
    }

    /* stacks, parents first: each extends its parent's (node, pruned) */
    idmap_reserve(&t->child, p->nstacks);
    if (t->cap < t->n + p->nstacks + 1) {
        t->cap = t->n + p->nstacks + 1;
        t->parent = xrealloc(t->parent, t->cap * sizeof *t->parent);
        t->label = xrealloc(t->label, t->cap * sizeof *t->label);
    }
    uint8_t *pruned = xcalloc(p->nstacks, 1);
    for (size_t k = 0; k < p->nstacks; k++) {
        uint32_t s = p->stack_order[k];
        const struct stack *st = &p->stacks[s];
        uint32_t node = st->parent == NONE ? 0 : stack_node[st->parent];
        uint8_t was_pruned = st->parent == NONE ? 0 : pruned[st->parent];
        unsigned fl = fflags[st->frame];
        if (fl & SKIP) {
            /* inherit */
        } else if (fl & RULE_ROOT) {
            node = (fl & RULE_DROP) ? 0 : dtree_child(t, 0, flabel[st->frame]);
            was_pruned = (fl & RULE_PRUNE) != 0;
        } else if (!was_pruned) {
            if (!(fl & RULE_DROP)) node = dtree_child(t, node, flabel[st->frame]);
            was_pruned = (fl & RULE_PRUNE) != 0;
        }
        stack_node[s] = node;
        pruned[s] = was_pruned;
    }
    /* a stack whose frames were all dropped still counts, as "[no frames]" */
    uint32_t empty = NONE;
    for (size_t s = 0; s < p->nstacks; s++) {
        if (stack_node[s] != 0) continue;
        if (empty == NONE)
            empty = dtree_child(t, 0, strtab_intern(&t->labels, NO_FRAMES, strlen(NO_FRAMES)));
        stack_node[s] = empty;
    }
    int rc = 0;
    if (o->nfilter || o->nexclude || o->suppress) rc = mark_left_out(t, o, err, errlen);
    free(pruned);
    free(flabel);
    free(fflags);
    free(nm.fn_label);
    free(nm.fn_flags);
    sb_free(&nm.base);
    sb_free(&nm.name);
    sb_free(&nm.deco);
    return rc;
}

void view_accumulate(const struct profile *p, const struct selection *s,
                     const uint32_t *stack_node, counters *node_c)
{
    for (size_t i = 0; i < p->nstacks; i++)
        if (stack_node[i] != NONE) counters_add(&node_c[stack_node[i]], &s->stack_c[i]);
}

void dtree_subtotals(const struct dtree *t, const counters *own, counters *sub)
{
    memcpy(sub, own, t->n * sizeof *sub);
    for (size_t n = t->n; n-- > 1;) counters_add(&sub[t->parent[n]], &sub[n]);
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
    t->children_ready = 1;
}

void dtree_functions(struct dtree *t, const counters *own, counters *self, counters *incl)
{
    size_t nl = t->labels.n;
    counters *sub = xmalloc(t->n * sizeof *sub);
    dtree_subtotals(t, own, sub);
    for (size_t n = 1; n < t->n; n++) counters_add(&self[t->label[n]], &own[n]);
    if (!t->children_ready) dtree_children(t, 0);
    /* depth-first; a label counts at its outermost occurrence on the path */
    uint32_t *active = xcalloc(nl, sizeof *active);
    uint32_t *stk = xmalloc(t->n * sizeof *stk), *pos = xmalloc(t->n * sizeof *pos);
    size_t sp = 0;
    stk[0] = 0;
    pos[0] = t->child_start[0];
    sp = 1;
    while (sp > 0) {
        uint32_t n = stk[sp - 1];
        if (pos[sp - 1] < t->child_start[n + 1]) {
            uint32_t c = t->child_list[pos[sp - 1]++];
            if (counters_zero(&sub[c])) continue;
            if (active[t->label[c]]++ == 0) counters_add(&incl[t->label[c]], &sub[c]);
            stk[sp] = c;
            pos[sp] = t->child_start[c];
            sp++;
        } else {
            if (n != 0) active[t->label[n]]--;
            sp--;
        }
    }
    free(active);
    free(stk);
    free(pos);
    free(sub);
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
