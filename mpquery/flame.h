/* The flame graph writer (flame.c) that `mpquery flame`, `mpquery diff
 * --flame` and `mpquery report` share: their common options, and the
 * picture of a display tree as one self-contained interactive SVG, or as
 * an element of an HTML page. */
#ifndef MPQUERY_FLAME_H
#define MPQUERY_FLAME_H

#include "mpquery.h"
#include "profile.h"
#include "listing.h"
#include "view.h"

/* The options both commands take, as given (char *: the option tables'
 * .str), then parsed by flame_check_options into width and min_width.
 * Icicle (the root at the top) is the default: a deep profile opens on
 * its root and the program's own frames, in any viewer, script or not;
 * --no-icicle draws the classic flame (the root at the bottom). */
enum { FLAME_ICICLE_DEFAULT, FLAME_ICICLE, FLAME_UPWARD };
struct flame_opts {
    char *out, *title, *width_arg, *min_width_arg;
    int orientation;            /* FLAME_*: as given */
    int icicle;                 /* the root at the top (set by flame_check_options) */
    int width;                  /* the picture's width, px (default 1200) */
    double min_width;           /* narrower frames are merged (default 0.1 px) */
};
#define OPTIONS_FLAME(f) \
    { .name = "output", .letter = 'o', .arg = "FILE", .str = &(f)->out, \
      .help = "write the SVG to FILE (*.svg; stdout when it is not a\nterminal)" }, \
    { .name = "icicle", .flag = &(f)->orientation, .value = FLAME_ICICLE, \
      .help = "an icicle graph: the root at the top, callees below\n(default)" }, \
    { .name = "no-icicle", .flag = &(f)->orientation, .value = FLAME_UPWARD, \
      .help = "the classic flame graph: the root at the bottom,\ncallees on their callers" }, \
    { .name = "title", .arg = "TEXT", .str = &(f)->title, .help = "the picture's title" }, \
    { .name = "width", .arg = "PX", .str = &(f)->width_arg, .help = "the picture's width in pixels (default 1200)" }, \
    { .name = "min-width", .arg = "PX", .str = &(f)->min_width_arg, \
      .help = "frames narrower than PX pixels are merged into one\n" \
              "'[N narrow frames]' frame per parent, left out when\n" \
              "that is still narrower (default 0.1)" }
/* Parses the values (usage errors reported): 0 or 2. */
int flame_check_options(const char *cmd, struct flame_opts *f);
/* Where the SVG goes: -o names an .svg file (or has no extension), or
 * else stdout is not a terminal; 0, or 2 (reported). */
int flame_check_output(const char *cmd, const struct flame_opts *f);

enum { COLORS_MODULE, COLORS_HASH };
/* What to draw: the nodes of t whose subtree value (sub[node].v[by]) is
 * positive, as wide as that value. With base (diff: profile A's subtree
 * sums, sub being B's), frames are coloured by the change from base to sub
 * and their tooltips compare the two; else coloured by module or by name
 * hash, with tooltips of every counter (those of counters). */
struct flame_graph {
    struct dtree *t;
    const counters *sub, *base;
    int by, colors;
    counter_set counters;
    const struct profile *p;            /* for node_module's modules (flame) */
    const uint32_t *node_module;        /* per node: module index, NONE: none */
    const char *source;                 /* the subtitle's profile(s) */
};
/* Writes the SVG to o->out or stdout ("wrote o->out (N frames, SIZE)");
 * 0, or 1 when the file cannot be written (reported). */
int flame_write(const struct flame_graph *g, const struct flame_opts *o);
/* Writes the SVG to f (o->out unused): with prefix NULL a document of its
 * own, as flame_write; else an <svg> element for an HTML page, without
 * XML prolog, namespace, style or script, its ids starting with prefix.
 * The page has flame_style once and flame_script once (which defines
 * flameGraph(svg), the function that makes one graph interactive and
 * returns its number of frames) and calls flameGraph on each graph.
 * Returns the number of frames drawn. */
size_t flame_write_svg(const struct flame_graph *g, const struct flame_opts *o, const char *prefix, FILE *f);
extern const char flame_style[], flame_script[];
/* Per display node of t, the module of the frame that made it (the first
 * stack whose node differs from its parent's), NONE: the colours by
 * module. */
uint32_t *flame_node_modules(const struct query *q, const struct dtree *t);
#endif
