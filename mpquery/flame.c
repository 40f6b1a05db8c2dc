/* Flame graphs as one self-contained SVG (CSS and JavaScript inline, no
 * network reference), for flame and diff --flame, or as an element of
 * report's HTML page (which has the style and script once for all its
 * graphs, their ids prefixed to stay unique): a frame per display node
 * whose subtree has a value, as wide as that value, children in label
 * order under their parent (the root at the top, so that a deep profile
 * opens on it; --no-icicle: on their parent, the root at the bottom). Frames narrower than
 * --min-width pixels are merged, per parent, into one "[N narrow frames]"
 * frame, itself left out when still too narrow: the file grows with the
 * picture (at most width / min-width frames a row), not with the profile.
 * The frames are plain SVG (a picture without the script, tooltips in
 * <title>: the name on the first line, then the values); the script adds
 * zoom, search and the details line, reading each frame's exact offset and
 * value, in counter units, from its data-o and data-v attributes. */
#include "flame.h"
#include "listing.h"
#include "options.h"
#include "output.h"
#include "tempfile.h"
#include "view.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAD 10              /* left and right margins, px */
#define ROW 16              /* px a frame row; a frame is ROW - 1 high */
#define TEXT_DY 12          /* a label's baseline below its frame's top */
#define TOP 60              /* title, subtitle and buttons above the frames */
#define BOTTOM 30           /* the details line below them */
#define CHAR_W 7.08         /* mean glyph width of the 12 px font (0.59 em), to elide labels */
#define TEXT_PAD 3          /* px between a frame's edge and its label */
#define TITLE_CHARS 2000    /* a tooltip shows at most this much of a name */

int flame_check_options(const char *cmd, struct flame_opts *f)
{
    int64_t width = 1200;
    if (f->width_arg && (parse_int64(f->width_arg, &width) || width < 100 || width > 100000))
        return usage_error(cmd, "bad value '%s' for --width (expected pixels, 100 to 100000)", f->width_arg);
    f->width = (int)width;
    f->min_width = 0.1;
    if (f->min_width_arg) {
        char *end;
        double m = strtod(f->min_width_arg, &end);
        if (end == f->min_width_arg || *end || !(m >= 0 && m <= (double)width))
            return usage_error(cmd, "bad value '%s' for --min-width (expected pixels, 0 to the width)",
                               f->min_width_arg);
        f->min_width = m;
    }
    f->icicle = f->orientation != FLAME_UPWARD;
    return 0;
}

int flame_check_output(const char *cmd, const struct flame_opts *f)
{
    static const struct output_kind svg[] = { { "*.svg", 0, "SVG" }, { NULL } };
    if (f->out) return output_kind(cmd, f->out, svg, 0) < 0 ? 2 : 0;
    if (isatty(STDOUT_FILENO))
        return usage_error(cmd, "the graph is SVG: write it to a file with -o FILE.svg, or to a pipe");
    return 0;
}

/* ---------------------------------------------------------------- XML text */
static void xml_puts(struct strbuf *sb, const char *s) { xml_escape(sb, s, strlen(s), SIZE_MAX); }

/* ---------------------------------------------------------------- layout */
/* A frame to draw: a node, or (node NONE) the narrow children of one
 * parent merged, merged being their index in layout.msum. off: where it
 * starts, in counter units from the root's start. */
struct fframe { uint32_t node, depth, merged; int64_t off; };
struct layout {
    struct fframe *f; size_t n, cap;
    counters *msum; uint32_t *mcount; size_t nm, mcap;   /* per merged frame: sub, base sums; count */
    uint32_t maxdepth;
};
/* The walk's state per level: the next child, where it goes, and the
 * narrow children merged so far (sub, base). */
struct level { uint32_t node, depth, pos, count; int64_t x; counters sum[2]; };

static void add_frame(struct layout *lay, uint32_t node, uint32_t depth, int64_t off, uint32_t merged)
{
    if (lay->n == lay->cap) {
        lay->cap = lay->cap ? 2 * lay->cap : 1024;
        lay->f = xrealloc(lay->f, lay->cap * sizeof *lay->f);
    }
    lay->f[lay->n++] = (struct fframe){ node, depth, merged, off };
    if (depth > lay->maxdepth) lay->maxdepth = depth;
}

static void add_merged(struct layout *lay, const struct level *l)
{
    if (lay->nm == lay->mcap) {
        lay->mcap = lay->mcap ? 2 * lay->mcap : 256;
        lay->msum = xrealloc(lay->msum, 2 * lay->mcap * sizeof *lay->msum);
        lay->mcount = xrealloc(lay->mcount, lay->mcap * sizeof *lay->mcount);
    }
    lay->msum[2 * lay->nm] = l->sum[0];
    lay->msum[2 * lay->nm + 1] = l->sum[1];
    lay->mcount[lay->nm] = l->count;
    add_frame(lay, NONE, l->depth + 1, l->x, (uint32_t)lay->nm++);
}

/* Depth-first, children in label order: the wide ones side by side from
 * their parent's start, then the narrow ones merged. */
static void layout(const struct flame_graph *g, double scale, double min_width, struct layout *lay)
{
    struct dtree *t = g->t;
    dtree_children(t, 1);
    add_frame(lay, 0, 0, 0, NONE);
    size_t cap = 64, sp = 1;
    struct level *st = xmalloc(cap * sizeof *st);
    st[0] = (struct level){ .node = 0, .pos = t->child_start[0] };
    while (sp > 0) {
        struct level *l = &st[sp - 1];
        if (l->pos == t->child_start[l->node + 1]) {
            if (l->count && (double)l->sum[0].v[g->by] * scale >= min_width) add_merged(lay, l);
            sp--;
            continue;
        }
        uint32_t c = t->child_list[l->pos++];
        int64_t v = g->sub[c].v[g->by];
        if (v <= 0) continue;
        if ((double)v * scale < min_width) {
            counters_add(&l->sum[0], &g->sub[c]);
            if (g->base) counters_add(&l->sum[1], &g->base[c]);
            l->count++;
            continue;
        }
        struct level child = { .node = c, .depth = l->depth + 1, .pos = t->child_start[c], .x = l->x };
        add_frame(lay, c, child.depth, l->x, NONE);
        l->x = sat_add(l->x, v);
        if (sp == cap) st = xrealloc(st, (cap *= 2) * sizeof *st);
        st[sp++] = child;
    }
    free(st);
}

/* ---------------------------------------------------------------- colours */
struct rgb { int r, g, b; };

static struct rgb hsl(double h, double s, double l)
{
    double c = (1 - fabs(2 * l - 1)) * s, hp = h / 60, x = c * (1 - fabs(fmod(hp, 2) - 1)), m = l - c / 2;
    double r = 0, g = 0, b = 0;
    if (hp < 1) r = c, g = x;
    else if (hp < 2) r = x, g = c;
    else if (hp < 3) g = c, b = x;
    else if (hp < 4) g = x, b = c;
    else if (hp < 5) r = x, b = c;
    else r = c, b = x;
    return (struct rgb){ (int)lround((r + m) * 255), (int)lround((g + m) * 255), (int)lround((b + m) * 255) };
}

/* Warm: a hue from red to yellow, a saturation and lightness from the
 * key's hash (a module's path, or a name); the name's hash varies those
 * two (not the hue), so that neighbouring frames of one module differ. */
static struct rgb warm(uint64_t key, uint64_t name)
{
    double h = (double)(key % 52) + 4;
    double s = 0.72 + (double)((key >> 16) % 17) / 100 + ((double)((name >> 24) % 17) - 8) / 100;
    double l = 0.62 + (double)((key >> 32) % 9) / 100 + ((double)((name >> 8) % 15) - 7) / 100;
    return hsl(h, s, l);
}

static const struct rgb root_colour = { 236, 220, 190 }, merged_colour = { 220, 220, 220 },
                        plain_colour = { 208, 208, 216 }, same_colour = { 224, 224, 224 };

/* Red where the value grew from a to b, blue where it shrank, deeper as
 * the change is larger relative to the larger of the two. */
static struct rgb change_colour(int64_t a, int64_t b)
{
    if (a < 0) a = 0;
    if (b < 0) b = 0;
    if (a == b) return same_colour;
    double t = (double)(a > b ? a - b : b - a) / (double)(a > b ? a : b);
    int pale = (int)lround(60 + 175 * (1 - t));
    return b > a ? (struct rgb){ 255, pale, pale } : (struct rgb){ pale, pale, 255 };
}

/* ---------------------------------------------------------------- writing */
struct writer {
    const struct flame_graph *g;
    const struct flame_opts *o;
    const struct layout *lay;
    FILE *f;
    double scale;
    const counters *total, *base_total;
    const char *prefix;         /* in a page: its ids' prefix; NULL: a document of its own */
    /* per label, escaped once: its text (cut at TITLE_CHARS) and characters */
    const char **esc; uint32_t *esc_len, *chars;
    struct arena text;
    struct strbuf sb, tmp;
};

static void label_of(const struct writer *w, const struct fframe *fr, const char **s, size_t *n, struct strbuf *tmp)
{
    const struct dtree *t = w->g->t;
    if (fr->node == NONE) {
        tmp->len = 0;
        sb_printf(tmp, "[%u narrow frames]", w->lay->mcount[fr->merged]);
        *s = tmp->s, *n = tmp->len;
    } else if (fr->node == 0) {
        *s = "all", *n = 3;
    } else {
        *s = t->labels.str[t->label[fr->node]], *n = t->labels.len[t->label[fr->node]];
    }
}

/* The escaped name of a node's label, cached. */
static void cached_name(struct writer *w, uint32_t label)
{
    if (w->esc[label]) return;
    const struct strtab *l = &w->g->t->labels;
    w->tmp.len = 0;
    xml_escape(&w->tmp, l->str[label], l->len[label], TITLE_CHARS);
    w->esc[label] = arena_strndup(&w->text, w->tmp.s ? w->tmp.s : "", w->tmp.len);
    w->esc_len[label] = (uint32_t)w->tmp.len;
    w->chars[label] = (uint32_t)utf8_chars(l->str[label], l->len[label]);
}

static void add_percent(struct strbuf *sb, int64_t v, int64_t total)
{
    if (total > 0) sb_printf(sb, " (%.2f%%)", 100.0 * (double)v / (double)total);
}

/* The tooltip after the name: every counter (flame) or a, b, delta and
 * ratio of the --by counter (diff). */
static void add_values(struct writer *w, const counters *c, const counters *base, uint32_t module)
{
    const struct flame_graph *g = w->g;
    char h[64];
    if (!base) {
        for (int k = 0; k < NSTACK_COUNTERS; k++) {
            if (!counter_shown(g->counters, k)) continue;
            sb_printf(&w->sb, "\n%s: %s", counter_name[k], fmt_human(k, c->v[k], h, sizeof h));
            if (!counter_is_max(k)) add_percent(&w->sb, c->v[k], w->total->v[k]);
        }
        if (module != NONE && !g->p->modules[module].special) {
            sb_puts(&w->sb, "\nmodule: ");
            xml_puts(&w->sb, g->p->modules[module].base);
        }
        return;
    }
    int by = g->by;
    int64_t a = base->v[by], b = c->v[by];
    sb_printf(&w->sb, "\n%s in a: %s", counter_name[by], fmt_human(by, a, h, sizeof h));
    add_percent(&w->sb, a, w->base_total->v[by]);
    sb_printf(&w->sb, "\n%s in b: %s", counter_name[by], fmt_human(by, b, h, sizeof h));
    add_percent(&w->sb, b, w->total->v[by]);
    sb_printf(&w->sb, "\ndelta: %s%s", b > a ? "+" : "", fmt_human(by, b - a, h, sizeof h));
    if (a > 0) sb_printf(&w->sb, "\nratio: %.3f", (double)b / (double)a);
    else sb_puts(&w->sb, "\nratio: - (not in a)");
}

static struct rgb frame_colour(const struct writer *w, const struct fframe *fr, const counters *c,
                               const counters *base, const char *name, size_t n)
{
    const struct flame_graph *g = w->g;
    if (base) return change_colour(base->v[g->by], c->v[g->by]);
    if (fr->node == 0) return root_colour;
    if (fr->node == NONE) return merged_colour;
    uint64_t hn = hash_bytes(name, n);
    if (g->colors == COLORS_HASH) return warm(hn, hn);
    uint32_t m = g->node_module ? g->node_module[fr->node] : NONE;
    if (m == NONE || g->p->modules[m].special) return plain_colour;
    const char *path = g->p->modules[m].path;
    return warm(hash_bytes(path, strlen(path)), hn);
}

/* <g data-o data-v><title/><rect/><text/></g>; the label only where at
 * least 3 characters fit (the script adds the others' when zooming). */
static void write_frame(struct writer *w, const struct fframe *fr)
{
    const struct flame_graph *g = w->g;
    const counters *c, *base = NULL;
    if (fr->node == NONE) {
        c = &w->lay->msum[2 * fr->merged];
        if (g->base) base = c + 1;
    } else {
        c = &g->sub[fr->node];
        if (g->base) base = &g->base[fr->node];
    }
    const char *name, *esc;
    size_t n, esc_n, chars;
    label_of(w, fr, &name, &n, &w->tmp);
    if (fr->node != NONE && fr->node != 0) {
        uint32_t label = g->t->label[fr->node];
        cached_name(w, label);
        esc = w->esc[label], esc_n = w->esc_len[label], chars = w->chars[label];
    } else {
        esc = name, esc_n = n, chars = n;      /* "all", "[N narrow frames]": nothing to escape */
    }
    int64_t v = c->v[g->by];
    double x = PAD + (double)fr->off * w->scale, width = (double)v * w->scale;
    int y = w->o->icicle ? TOP + (int)fr->depth * ROW : TOP + (int)(w->lay->maxdepth - fr->depth) * ROW;
    struct rgb col = frame_colour(w, fr, c, base, name, n);

    struct strbuf *sb = &w->sb;
    sb->len = 0;
    sb_printf(sb, "<g data-o=\"%lld\" data-v=\"%lld\"><title>", (long long)fr->off, (long long)v);
    sb_add(sb, esc, esc_n);
    add_values(w, c, base, fr->node == NONE || !g->node_module ? NONE : g->node_module[fr->node]);
    sb_printf(sb, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\"/>",
              x, y, width, ROW - 1, col.r, col.g, col.b);
    double fit = floor((width - 2 * TEXT_PAD) / CHAR_W);
    if (fit >= 3) {
        sb_printf(sb, "<text x=\"%.2f\" y=\"%d\">", x + TEXT_PAD, y + TEXT_DY);
        if ((double)chars <= fit) sb_add(sb, esc, esc_n);
        else xml_escape(sb, name, n, (size_t)fit);
        sb_puts(sb, "</text>");
    }
    sb_puts(sb, "</g>\n");
    fwrite(sb->s, 1, sb->len, w->f);
}

/* ---------------------------------------------------------------- the file (its style and script: flame_script.c) */
/* The <svg> element: as a document of its own, with the XML prolog, the
 * namespace and the style; in a page, its ids prefixed (the page has the
 * style). */
static void write_svg_start(struct writer *w, int height)
{
    const struct flame_opts *o = w->o;
    struct strbuf *sb = &w->sb;
    int width = o->width;
    if (!w->prefix) sb_puts(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
    sb_printf(sb, "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"", width, height, width, height);
    if (w->prefix) {
        sb_puts(sb, " data-id-prefix=\"");
        xml_puts(sb, w->prefix);
        sb_putc(sb, '"');
    } else {
        sb_puts(sb, " xmlns=\"http://www.w3.org/2000/svg\"");
    }
    sb_printf(sb, " class=\"flame\" data-pad=\"%d\" data-plot-width=\"%d\" data-row=\"%d\" data-char-width=\"%.2f\""
                  " data-text-dy=\"%d\" data-by=\"%s\">\n",
              PAD, width - 2 * PAD, ROW, CHAR_W, TEXT_DY, counter_name[w->g->by]);
    if (!w->prefix) sb_printf(sb, "<style>\n%s</style>\n", flame_style);
    sb_printf(sb, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", width, height);
}

static void write_header(struct writer *w, int height)
{
    const struct flame_graph *g = w->g;
    const struct flame_opts *o = w->o;
    const char *id = w->prefix ? w->prefix : "";
    int width = o->width;
    char h[64];
    struct strbuf *sb = &w->sb;
    sb->len = 0;
    write_svg_start(w, height);
    sb_printf(sb, "<text id=\"%stitle\" class=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">", id, width / 2);
    if (o->title) xml_puts(sb, o->title);
    else if (g->base) sb_printf(sb, "Differential %s graph: %s", o->icicle ? "icicle" : "flame", counter_name[g->by]);
    else sb_printf(sb, "%s graph: %s", o->icicle ? "Icicle" : "Flame", counter_name[g->by]);
    sb_printf(sb, "</text>\n<text id=\"%ssubtitle\" class=\"subtitle\" x=\"%d\" y=\"42\" text-anchor=\"middle\">", id,
              width / 2);
    xml_puts(sb, g->source);
    int64_t total = w->total->v[g->by];
    if (g->base) sb_printf(sb, ": widths from b (%s), red: grew from a, blue: shrank",
                           fmt_human(g->by, total, h, sizeof h));
    else sb_printf(sb, ": %s %s", fmt_human(g->by, total, h, sizeof h), counter_name[g->by]);
    sb_puts(sb, w->prefix ? "; click to zoom</text>\n" : "; click to zoom, Ctrl-F to search</text>\n");
    sb_printf(sb, "<text id=\"%sreset\" class=\"btn hide\" x=\"%d\" y=\"24\">Reset zoom</text>\n", id, PAD);
    sb_printf(sb, "<text id=\"%ssearch\" class=\"btn\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n", id,
              width - PAD);
    sb_printf(sb, "<text id=\"%sdetails\" x=\"%d\" y=\"%d\"></text>\n", id, PAD, height - 12);
    sb_printf(sb, "<text id=\"%smatched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n", id, width - PAD,
              height - 12);
    if (total <= 0)
        sb_printf(sb, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">nothing to draw: no %s in the selected samples</text>\n",
                  width / 2, TOP + TEXT_DY, counter_name[g->by]);
    sb_printf(sb, "<g id=\"%sframes\" class=\"frames\">\n", id);
    fwrite(sb->s, 1, sb->len, w->f);
}

static void write_svg(struct writer *w)
{
    const struct layout *lay = w->lay;
    int rows = lay->n ? (int)lay->maxdepth + 1 : 1;
    write_header(w, TOP + rows * ROW + BOTTOM);
    for (size_t i = 0; i < lay->n; i++) write_frame(w, &lay->f[i]);
    if (w->prefix) fputs("</g>\n</svg>\n", w->f);
    else fprintf(w->f, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n(function () {\n%s"
                       "flameGraph(document.documentElement);\n})();\n]]></script>\n</svg>\n", flame_script);
}

size_t flame_write_svg(const struct flame_graph *g, const struct flame_opts *o, const char *prefix, FILE *f)
{
    struct layout lay = { 0 };
    const counters *total = &g->sub[0];
    double plot_width = o->width - 2 * PAD;
    double scale = total->v[g->by] > 0 ? plot_width / (double)total->v[g->by] : 0;
    if (scale > 0) layout(g, scale, o->min_width, &lay);
    size_t nl = g->t->labels.n;
    struct writer w = { .g = g, .o = o, .lay = &lay, .f = f, .scale = scale, .total = total,
                        .base_total = g->base ? &g->base[0] : NULL, .prefix = prefix };
    w.esc = xcalloc(nl, sizeof *w.esc);
    w.esc_len = xmalloc(nl * sizeof *w.esc_len);
    w.chars = xmalloc(nl * sizeof *w.chars);
    write_svg(&w);
    free(w.esc);
    free(w.esc_len);
    free(w.chars);
    arena_free(&w.text);
    sb_free(&w.sb);
    sb_free(&w.tmp);
    free(lay.f);
    free(lay.msum);
    free(lay.mcount);
    return lay.n;
}

int flame_write(const struct flame_graph *g, const struct flame_opts *o)
{
    struct outfile out;
    int rc = output_open(&out, o->out, OUTPUT_FILE);
    if (rc) return rc;
    output_what(&out, (int64_t)flame_write_svg(g, o, NULL, out.f), "frames");
    return output_close(&out, 0);
}

uint32_t *flame_node_modules(const struct query *q, const struct dtree *t)
{
    const struct profile *p = q->p;
    uint32_t *module = none_array(t->n);
    for (size_t s = 0; s < p->nstacks; s++) {
        const struct stack *st = &p->stacks[s];
        uint32_t node = q->stack_node[s], up = st->parent == NONE ? 0 : q->stack_node[st->parent];
        if (node == NONE || node == up || module[node] != NONE) continue;
        module[node] = p->frames[st->frame].module;
    }
    return module;
}
