/* A stack on one line for people (listing.h: where_labels), and under its
 * row one frame a line (--callers: table_print_callers). A label shows the
 * leaf, then the callers that fit the room, always the first frame of the
 * program's own code (LABEL_OWN) when it fits, with "…" for what is
 * skipped; frames a rule hides are left out and a run of frames without a
 * name in one module is one "[module ×N]". Labels of different paths are
 * made different by showing the first frame where the paths differ: two
 * rows never read the same unless their paths are equal. Only these
 * labels leave frames out: paths, fold, flame and --callers keep them. */
#include "mpquery.h"
#include "profile.h"
#include "listing.h"
#include "output.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>

#define SEP " < "
#define ELLIPSIS "\xe2\x80\xa6"         /* … */
#define TIMES "\xc3\x97"                /* × */

/* One row's path, leaf first, and which of its frames the label shows. */
struct where_path {
    uint32_t *label; size_t n;
    uint8_t *shown;                     /* per frame: W_* */
};
enum { W_SHOWN = 1, W_FORCED = 2 };

static uint8_t kind_of(const struct dtree *t, uint32_t label)
{
    return label < t->kind_cap ? t->label_kind[label] : 0;
}

static void path_of(const struct dtree *t, uint32_t node, struct where_path *w)
{
    w->n = 0;
    for (uint32_t n = node; n != 0 && n != NONE; n = t->parent[n]) w->n++;
    w->label = xmalloc((w->n ? w->n : 1) * sizeof *w->label);
    w->shown = xcalloc(w->n ? w->n : 1, 1);
    size_t i = 0;
    for (uint32_t n = node; n != 0 && n != NONE; n = t->parent[n]) w->label[i++] = t->label[n];
}

/* A label as one-line labels write it: as every view names the frame
 * (names.c), or for a frame without a name, when same_module says the
 * frame shown before it was of the same module, +0xOFFSET without the
 * module (a name a rule rewrote stays as it is). */
static void put_label_as(const struct dtree *t, uint32_t label, int same_module, struct strbuf *out)
{
    const char *s = t->labels.str[label];
    size_t n = t->labels.len[label];
    if (same_module && (kind_of(t, label) & LABEL_NONAME)) {
        uint32_t m = t->label_module[label];
        size_t ml = t->modules.len[m];
        if (n > ml + 3 && !memcmp(s, t->modules.str[m], ml) && !memcmp(s + ml, "+0x", 3)) s += ml, n -= ml;
    }
    sb_add(out, s, n);
}

static void put_label(const struct dtree *t, uint32_t label, struct strbuf *out)
{
    put_label_as(t, label, 0, out);
}

/* The module of a nameless label, else NONE. */
static uint32_t noname_module(const struct dtree *t, uint32_t label)
{
    return (kind_of(t, label) & LABEL_NONAME) ? t->label_module[label] : NONE;
}

/* Frame i is inside a run of frames without a name of one module (not its
 * first): such frames are shown as the run's "[module ×N]". */
static int in_run(const struct dtree *t, const struct where_path *w, size_t i)
{
    if (i == 0 || !(kind_of(t, w->label[i]) & LABEL_NONAME) || !(kind_of(t, w->label[i - 1]) & LABEL_NONAME))
        return 0;
    return t->label_module[w->label[i]] == t->label_module[w->label[i - 1]];
}

/* A gap of frames not shown, [i, j): nothing when they are all hidden,
 * "[module ×N]" when the others are N >= 2 nameless frames of one module
 * (and the gap is not the last, and not compact), else "…". */
static void put_gap(const struct dtree *t, const struct where_path *w, size_t i, size_t j, int compact,
                    struct strbuf *out)
{
    size_t count = 0;
    uint32_t module = NONE;
    int one_module = 1;
    for (size_t k = i; k < j; k++) {
        uint8_t kind = kind_of(t, w->label[k]);
        if (kind & LABEL_HIDE) continue;
        count++;
        uint32_t m = (kind & LABEL_NONAME) ? t->label_module[w->label[k]] : NONE;
        if (m == NONE || (module != NONE && m != module)) one_module = 0;
        module = m;
    }
    if (!count) return;
    if (out->len) sb_puts(out, SEP);
    if (one_module && count >= 2 && j < w->n && !compact)
        sb_printf(out, "[%.*s " TIMES "%zu]", (int)t->modules.len[module], t->modules.str[module], count);
    else
        sb_puts(out, ELLIPSIS);
}

/* The label of w's shown frames; *nshown: how many. compact (a label too
 * long anyway): every gap as "…", and a nameless frame of the module of
 * the nameless frame shown before it as +0xOFFSET. */
static void render_as(const struct dtree *t, const struct where_path *w, int compact, struct strbuf *out,
                      size_t *nshown)
{
    out->len = 0;
    sb_add(out, "", 0);
    *nshown = 0;
    uint32_t last_module = NONE;
    for (size_t i = 0; i < w->n;) {
        if (w->shown[i]) {
            uint32_t m = noname_module(t, w->label[i]);
            if (out->len) sb_puts(out, SEP);
            put_label_as(t, w->label[i], compact && m != NONE && m == last_module, out);
            last_module = m;
            ++*nshown;
            i++;
            continue;
        }
        size_t j = i;
        while (j < w->n && !w->shown[j]) j++;
        put_gap(t, w, i, j, compact, out);
        i = j;
    }
}

static void render(const struct dtree *t, const struct where_path *w, struct strbuf *out, size_t *nshown)
{
    render_as(t, w, 0, out, nshown);
}

static size_t count_shown(const struct where_path *w)
{
    size_t n = 0;
    for (size_t k = 0; k < w->n; k++) n += (w->shown[k] & W_SHOWN) != 0;
    return n;
}

/* Whether w's shown frames fit: the depth counted, the width rendered
 * (only with a width: off a terminal a label is rendered once). */
static int fits(const struct dtree *t, const struct where_path *w, const struct where_fit *fit, struct strbuf *sb)
{
    if (fit->depth && count_shown(w) > fit->depth) return 0;
    if (!fit->width) return 1;
    size_t nshown;
    render(t, w, sb, &nshown);
    return utf8_chars(sb->s, sb->len) <= fit->width;
}

#define PARTIAL_MIN 4

static int shown_after(const struct where_path *w, size_t i)
{
    for (size_t k = i + 1; k < w->n; k++)
        if (w->shown[k]) return 1;
    return 0;
}

/* The columns fit->width leaves for frame i once shown: the label then
 * runs past the width, so it is written compact (render_as), and the
 * frames before i with their gaps and separators come first. */
static size_t room_left(const struct dtree *t, struct where_path *w, const struct where_fit *fit, size_t i,
                        struct strbuf *sb)
{
    size_t nshown, label, tail = 0;
    w->shown[i] |= W_SHOWN;
    render_as(t, w, 1, sb, &nshown);
    w->shown[i] &= (uint8_t)~W_SHOWN;
    size_t total = utf8_chars(sb->s, sb->len);
    sb->len = 0;
    put_label(t, w->label[i], sb);
    label = utf8_chars(sb->s, sb->len);
    sb->len = 0;
    put_gap(t, w, i + 1, w->n, 1, sb);       /* sb empty: no separator, " < " added below */
    if (sb->len) tail = utf8_chars(sb->s, sb->len) + strlen(SEP);
    size_t used = total > label + tail ? total - label - tail : 0;   /* compact may write i shorter */
    return fit->width > used ? fit->width - used : 0;
}

/* Chooses w's shown frames: the leaf (the first not hidden), the forced
 * ones, then the program's first own frame when it fits, then callers in
 * order while they fit, and with a width, when no frame after it is
 * shown, the caller that did not fit if at least PARTIAL_MIN columns of
 * it do (the table cuts it, which says more than "…"); the label into out. */
static void choose(const struct dtree *t, struct where_path *w, const struct where_fit *fit, struct strbuf *out)
{
    for (size_t i = 0; i < w->n; i++) w->shown[i] &= W_FORCED;
    size_t leaf = 0;
    while (leaf < w->n && (kind_of(t, w->label[leaf]) & LABEL_HIDE)) leaf++;
    if (leaf == w->n) leaf = 0;
    if (w->n) w->shown[leaf] |= W_SHOWN;
    for (size_t i = 0; i < w->n; i++)
        if (w->shown[i] & W_FORCED) w->shown[i] |= W_SHOWN;
    for (size_t i = 0; i < w->n; i++) {
        uint8_t kind = kind_of(t, w->label[i]);
        if (!(kind & LABEL_OWN) || (kind & LABEL_HIDE)) continue;
        if (!w->shown[i]) {
            w->shown[i] |= W_SHOWN;
            if (!fits(t, w, fit, out)) w->shown[i] &= (uint8_t)~W_SHOWN;
        }
        break;
    }
    for (size_t i = leaf + 1; i < w->n; i++) {
        if (w->shown[i] || (kind_of(t, w->label[i]) & LABEL_HIDE) || in_run(t, w, i)) continue;
        w->shown[i] |= W_SHOWN;
        if (fits(t, w, fit, out)) continue;
        w->shown[i] &= (uint8_t)~W_SHOWN;
        if (fit->width && !shown_after(w, i) && (!fit->depth || count_shown(w) < fit->depth)
            && room_left(t, w, fit, i, out) >= PARTIAL_MIN)
            w->shown[i] |= W_SHOWN;
        break;
    }
    size_t nshown;
    render(t, w, out, &nshown);
    if (fit->width && utf8_chars(out->s, out->len) > fit->width) render_as(t, w, 1, out, &nshown);
}

/* Rows are grouped by label through interned ids (equal text, equal id):
 * a round sorts integers, not strings, so a listing of 100k rows with many
 * equal labels takes rounds of milliseconds. qsort has no context
 * argument; mpquery has one thread. */
static const uint32_t *sort_ids;
static int cmp_rows(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (sort_ids[x] != sort_ids[y]) return sort_ids[x] < sort_ids[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* The first frame index where the paths of rows g[0..n) do not all agree
 * (a path that ends there differs too). */
static size_t first_difference(const struct where_path *paths, const uint32_t *g, size_t n)
{
    for (size_t d = 0;; d++) {
        const struct where_path *a = &paths[g[0]];
        for (size_t k = 1; k < n; k++) {
            const struct where_path *b = &paths[g[k]];
            if (d >= a->n || d >= b->n || a->label[d] != b->label[d]) return d;
        }
    }
}

/* The labels being made: per row its text and interned id. */
struct where_rows { char **labels; uint32_t *ids; struct strtab text; };

static void set_label(struct where_rows *w, size_t r, const struct strbuf *sb)
{
    free(w->labels[r]);
    w->labels[r] = xstrdup(sb->s);
    w->ids[r] = strtab_intern(&w->text, sb->s, sb->len);
}

/* One pass over rows with equal labels and different nodes: each group's
 * first difference is forced shown and its labels made again. Only rows
 * whose label another row has too are sorted (after the first rounds, a
 * few), so a pass costs a count over the rows. Returns whether any label
 * changed. */
static int separate_once(const struct dtree *t, const uint32_t *nodes, size_t n, const struct where_fit *fit,
                         struct where_path *paths, struct where_rows *w, struct strbuf *sb,
                         uint32_t *order, uint32_t *g)
{
    uint32_t *count = xcalloc(w->text.n ? w->text.n : 1, sizeof *count);
    for (size_t r = 0; r < n; r++)
        if (nodes[r] != NONE) count[w->ids[r]]++;
    size_t m = 0;
    for (uint32_t r = 0; r < n; r++)
        if (nodes[r] != NONE && count[w->ids[r]] > 1) order[m++] = r;
    free(count);
    sort_ids = w->ids;
    qsort(order, m, sizeof *order, cmp_rows);
    int changed = 0;
    for (size_t i = 0, j; i < m; i = j) {
        size_t ng = 0;
        for (j = i; j < m && w->ids[order[j]] == w->ids[order[i]]; j++)
            if (ng == 0 || nodes[order[j]] != nodes[g[0]]) g[ng++] = order[j];
        if (ng < 2) continue;
        size_t d = first_difference(paths, g, ng);
        for (size_t k = i; k < j; k++) {
            struct where_path *p = &paths[order[k]];
            if (d >= p->n || (p->shown[d] & W_FORCED)) continue;
            p->shown[d] |= W_FORCED;
            choose(t, p, fit, sb);
            set_label(w, order[k], sb);
            changed = 1;
        }
    }
    return changed;
}

void where_labels(const struct dtree *t, const uint32_t *nodes, size_t n, const struct where_fit *fit,
                  char **labels)
{
    struct where_path *paths = xcalloc(n ? n : 1, sizeof *paths);
    struct where_rows w = { .labels = labels, .ids = xmalloc((n ? n : 1) * sizeof *w.ids) };
    uint32_t *order = xmalloc((n ? n : 1) * sizeof *order), *g = xmalloc((n ? n : 1) * sizeof *g);
    struct strbuf sb = { 0 };
    strtab_init(&w.text);
    for (size_t r = 0; r < n; r++) {
        labels[r] = NULL;
        sb.len = 0;
        sb_add(&sb, "", 0);
        if (nodes[r] != NONE) {
            path_of(t, nodes[r], &paths[r]);
            choose(t, &paths[r], fit, &sb);
        }
        set_label(&w, r, &sb);
    }
    while (separate_once(t, nodes, n, fit, paths, &w, &sb, order, g)) {}
    for (size_t r = 0; r < n; r++) {
        free(paths[r].label);
        free(paths[r].shown);
    }
    free(paths);
    free(order);
    free(g);
    free(w.ids);
    strtab_free(&w.text);
    sb_free(&sb);
}

/* ---------------------------------------------------------------- in a table */

/* The narrowest room a label gets: narrower terminals cut the line. */
#define WHERE_MIN_WIDTH 24

void table_where_column(struct table *tab, size_t col, const struct dtree *t, const uint32_t *rows, size_t depth)
{
    struct where_fit fit = { .depth = depth };
    if (tab->width) {
        size_t used = table_columns_before(tab, col);
        fit.width = tab->width > used + WHERE_MIN_WIDTH ? tab->width - used : WHERE_MIN_WIDTH;
    }
    char **labels = xmalloc((tab->nrows ? tab->nrows : 1) * sizeof *labels);
    where_labels(t, rows, tab->nrows, &fit, labels);
    for (size_t r = 0; r < tab->nrows; r++) {
        struct cell *x = &tab->cells[r * tab->ncols + col];
        if (rows[r] == NONE) { free(labels[r]); continue; }
        free(x->s);
        x->s = labels[r];
        x->type = CELL_STR;
    }
    free(labels);
}

/* ---------------------------------------------------------------- --callers */
/* The frame of stack s (or of its callers) that made display node `node`:
 * the outermost of the consecutive stacks mapped to it, from s up;
 * NONE when none is. *s moves to that stack's parent. */
static uint32_t frame_of_node(const struct query *q, uint32_t *s, uint32_t node)
{
    const struct profile *p = q->p;
    while (*s != NONE && q->stack_node[*s] != node) *s = p->stacks[*s].parent;
    if (*s == NONE) return NONE;
    uint32_t at = *s;
    while (p->stacks[at].parent != NONE && q->stack_node[p->stacks[at].parent] == node) at = p->stacks[at].parent;
    *s = p->stacks[at].parent;
    return p->stacks[at].frame;
}

/* The frames of node's path, one a line: "    LABEL (file:line)", or
 * "    LABEL [module]" for a named frame without a file, cut to width. */
static void print_callers(const struct query *q, const struct dtree *t, const struct view_opts *o, uint32_t node,
                          uint32_t stack, size_t width, FILE *f)
{
    const struct profile *p = q->p;
    struct strbuf line = { 0 };
    uint32_t s = stack;
    for (uint32_t n = node; n != 0 && n != NONE; n = t->parent[n]) {
        uint32_t l = t->label[n], fr = s == NONE ? NONE : frame_of_node(q, &s, n);
        line.len = 0;
        sb_puts(&line, "    ");
        sb_add(&line, t->labels.str[l], t->labels.len[l]);
        if (fr != NONE && !o->lines && !o->module) {
            const struct frame *x = &p->frames[fr];
            const struct module *m = &p->modules[x->module];
            if (x->file != NONE && x->line > 0)
                sb_printf(&line, " (%s:%d)", path_basename(p->files[x->file]), x->line);
            else if (x->file != NONE)
                sb_printf(&line, " (%s)", path_basename(p->files[x->file]));
            else if (x->function != NONE && !m->special)
                sb_printf(&line, " [%s]", m->base);
        }
        text_line(f, line.s, line.len, width);
    }
    sb_free(&line);
}

void table_print_callers(const struct table *tab, const struct query *q, const struct dtree *t,
                         const struct view_opts *o, const uint32_t *rows, const uint32_t *stacks, FILE *f)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) {
        table_print(tab, FMT_TEXT, f);
        return;
    }
    table_print(tab, FMT_TEXT, m);
    fclose(m);
    /* one line a row after the header: text_line cleaned them */
    const char *s = text, *end = text + len;
    for (size_t r = 0; s < end; r++) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);
        fwrite(s, 1, n, f);
        s += n;
        if (r >= 1 && r - 1 < tab->nrows && rows[r - 1] != NONE)
            print_callers(q, t, o, rows[r - 1], stacks[r - 1], tab->width, f);
    }
    free(text);
}
