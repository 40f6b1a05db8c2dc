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
 * A stack with Python frames gets more of these flags, unless --native
 * (view_python.c: a root on its outermost Python frame, the interpreter's
 * frames below it dropped).
 * Filters (--filter, --exclude, leaks' suppressions) mark display nodes,
 * not stacks (t->left_out): a path is kept or left out whole, and the
 * listing (common.c) takes the counters of those left out aside to report
 * them. Labels of [tag] frames are marked (t->tag_label) so that tree can
 * find the tag scopes, the leading tag labels of each path, whatever the
 * rules renamed them to. The tree once built is walked by dtree.c. */
#include "mpquery.h"
#include "profile.h"
#include "dtree.h"
#include "rules.h"
#include "select.h"
#include "view.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 32             /* frame flag: not shown at all (--no-inline); above RULE_* */
#define NO_FRAMES "[no frames]"

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

/* The system's directories (view.h: LABEL_OWN). */
static int is_system_path(const char *path)
{
    static const char *const dirs[] = { "/lib/", "/lib32/", "/lib64/", "/usr/lib/", "/usr/lib32/",
                                        "/usr/lib64/", "/usr/libexec/" };
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        if (!strncmp(path, dirs[i], strlen(dirs[i]))) return 1;
    return 0;
}

/* Per module of p: 1 when it is the program's own code (view.h). */
static uint8_t *own_modules(const struct profile *p)
{
    uint8_t *own = xcalloc(p->nmodules ? p->nmodules : 1, 1);
    for (size_t m = 0; m < p->nmodules; m++) {
        const struct module *mo = &p->modules[m];
        if (mo->special || mo->path[0] == '[') continue;
        own[m] = !is_system_path(mo->path);
        for (size_t k = 0; k < p->nprocs && !own[m]; k++)
            own[m] = p->procs[k].exe && !strcmp(p->procs[k].exe, mo->path);
    }
    return own;
}

/* Records what one-line labels need of label (view.h: LABEL_*), from one
 * of its frames: its flags (RULE_HIDE) and module. */
static void mark_label_kind(struct dtree *t, const struct profile *p, const uint8_t *own, uint32_t frame,
                            uint32_t label, unsigned flags)
{
    if (label >= t->kind_cap) {
        size_t cap = t->kind_cap ? t->kind_cap : 64;
        while (cap <= label) cap *= 2;
        t->label_kind = xrealloc(t->label_kind, cap);
        t->label_module = xrealloc(t->label_module, cap * sizeof *t->label_module);
        memset(t->label_kind + t->kind_cap, 0, cap - t->kind_cap);
        for (size_t i = t->kind_cap; i < cap; i++) t->label_module[i] = NONE;
        t->kind_cap = cap;
    }
    const struct frame *f = &p->frames[frame];
    const struct module *m = &p->modules[f->module];
    uint8_t k = t->label_kind[label];
    if (flags & RULE_HIDE) k |= LABEL_HIDE;
    if (own[f->module]) k |= LABEL_OWN;
    if (f->function == NONE && !m->special) {
        k |= LABEL_NONAME;
        t->label_module[label] = strtab_intern(&t->modules, m->base, strlen(m->base));
    }
    t->label_kind[label] = k;
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
        const char *refused = rules_regex_refused(res[i]);
        if (refused) {
            snprintf(err, errlen, "%s '%s'", refused, res[i]);
            for (size_t j = 0; j < i; j++) regfree(&out[j]);
            return EXIT_BAD_INPUT;
        }
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

/* What a label matches: --filter (1), --exclude (2), a suppression (4),
 * the built-in suppressions (16); 8: computed. */
enum { M_FILTER = 1, M_EXCLUDE = 2, M_SUPPRESS = 4, M_KNOWN = 8, M_BUILTIN = 16 };

static unsigned label_matches(const struct view_opts *o, const regex_t *fre, const regex_t *xre,
                              const char *s, size_t len, struct strbuf *scratch)
{
    unsigned m = M_KNOWN;
    if (match_any(fre, o->nfilter, s, len)) m |= M_FILTER;
    if (match_any(xre, o->nexclude, s, len)) m |= M_EXCLUDE;
    if (o->suppress && (rules_apply(o->suppress, s, len, scratch) & (RULE_DROP | RULE_PRUNE | RULE_ROOT)))
        m |= M_SUPPRESS;
    if (o->builtin && (rules_apply(o->builtin, s, len, scratch) & (RULE_DROP | RULE_PRUNE | RULE_ROOT)))
        m |= M_BUILTIN;
    return m;
}

/* view.h: t->left_out for every node of the tree (a diff's second
 * profile adds nodes: computed again). Each label is tested once; a node
 * inherits its parent's matches (parent index < child index), so a path
 * matches when any of its frames does. */
int view_left_out(struct dtree *t, const struct view_opts *o, char *err, size_t errlen)
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
        if (node_bits[n] & M_BUILTIN) left_out[n] = LEFT_BUILTIN;
        else left_out[n] = (o->nfilter && !(node_bits[n] & M_FILTER)) || (node_bits[n] & (M_EXCLUDE | M_SUPPRESS))
                               ? LEFT_FILTERS : 0;
    }
    for (size_t i = 0; i < o->nfilter + o->nexclude; i++) regfree(&fre[i]);
    free(fre);
    free(label_bits);
    free(node_bits);
    sb_free(&scratch);
    return 0;
}

/* Each frame's label (NONE: none) and rule flags; the labels' kinds marked. */
static void label_frames(struct namer *nm, uint32_t *flabel, uint8_t *fflags)
{
    const struct profile *p = nm->p;
    struct dtree *t = nm->t;
    uint8_t *own = own_modules(p);
    for (size_t f = 0; f < p->nframes; f++) {
        unsigned flags;
        flabel[f] = frame_label(nm, (uint32_t)f, &flags);
        fflags[f] = (uint8_t)flags;
        if (flabel[f] == NONE) continue;
        if (is_tag_frame(p, (uint32_t)f)) mark_tag_label(t, flabel[f]);
        mark_label_kind(t, p, own, (uint32_t)f, flabel[f], flags);
    }
    free(own);
}

int view_build(const struct profile *p, const struct view_opts *o,
               struct dtree *t, uint32_t *stack_node, char *err, size_t errlen)
{
    struct namer nm = { .p = p, .o = o, .t = t };
    nm.fn_label = none_array(p->nfunctions);
    nm.fn_flags = xcalloc(p->nfunctions, 1);
    uint32_t *flabel = xmalloc(p->nframes * sizeof *flabel);
    uint8_t *fflags = xmalloc(p->nframes);
    label_frames(&nm, flabel, fflags);

    /* stacks, parents first: each extends its parent's (node, pruned) */
    idmap_reserve(&t->child, p->nstacks);
    if (t->cap < t->n + p->nstacks + 1) {
        t->cap = t->n + p->nstacks + 1;
        t->parent = xrealloc(t->parent, t->cap * sizeof *t->parent);
        t->label = xrealloc(t->label, t->cap * sizeof *t->label);
    }
    uint8_t *pruned = xcalloc(p->nstacks, 1);
    uint8_t *python = o->native ? NULL : view_python_flags(p);
    for (size_t k = 0; k < p->nstacks; k++) {
        uint32_t s = p->stack_order[k];
        const struct stack *st = &p->stacks[s];
        uint32_t node = st->parent == NONE ? 0 : stack_node[st->parent];
        uint8_t was_pruned = st->parent == NONE ? 0 : pruned[st->parent];
        unsigned fl = fflags[st->frame] | (python ? python[s] : 0);
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
    if (o->nfilter || o->nexclude || o->suppress || o->builtin) rc = view_left_out(t, o, err, errlen);
    free(pruned);
    free(python);
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
    for (size_t r = 0; r < p->nrecorded; r++) {
        uint32_t node = stack_node[p->recorded[r]];
        if (node != NONE) counters_add(&node_c[node], &s->stack_c[r]);
    }
}

