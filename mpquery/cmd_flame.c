/* mpquery flame DB: an interactive icicle graph (or, --no-icicle, flame
 * graph) of the selected stacks as one SVG, to a file or a pipe, drawn by flame.c from the display tree that
 * fold walks: the same paths after rules, filters and selection, a frame
 * as wide as its subtree's --by counter. Frames are coloured by module
 * (a node's module is that of the frame that made the node: the first
 * stack whose display node differs from its parent's) or by name hash. */
#include "flame.h"
#include "commands.h"
#include "listing.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "tempfile.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery flame DB... [options]\n"
"       mpquery flame --server URL [--where SQL] [options]\n"
"\n"
"An interactive flame graph as one SVG file (its JavaScript and CSS inline,\n"
"nothing loaded from the network): a frame per function of the paths after\n"
"rules, as wide as the --by counter of the stacks through it, callees under\n"
"their callers, the root at the top (--no-icicle: callees on their callers,\n"
"the root at the bottom). It goes to -o FILE.svg, or to stdout when that is\n"
"not a terminal.\n"
"\n";

static const char more[] =
"\n"
"--since and --until: only the allocations made in that window (the\n"
"counters at its until snapshot less those at its since one; see mpquery\n"
"top --help-all, Time windows).\n"
"A stack whose --by counter fell in the window (memlive: more freed than\n"
"allocated) has no width: mpquery diff --flame shows decreases.\n"
"In a browser: click a frame to zoom into it (an ancestor or 'Reset zoom' to\n"
"go back); 'Search', Ctrl-F or F3 highlights the frames whose name matches a\n"
"JavaScript regular expression and shows the share of the total they cover.\n"
"A frame's tooltip has every counter and its share of the total drawn; the\n"
"line under the graph repeats the hovered frame's. Colours: a hue per module\n"
"file (default), or per function name with --colors hash. What --filter and\n"
"--exclude leave out is said on stderr, as fold says it.\n"
"\n"
"example:\n"
"  mpquery flame app.db --by memlive -o app.svg\n";

struct flame_args { struct flame_opts f; char *colors; int colors_id, rc; };

static void print(struct listing *l, void *arg)
{
    struct flame_args *a = arg;
    struct dtree *t = &l->t;
    counters *sub = xmalloc(t->n * sizeof *sub);
    dtree_subtotals(t, l->own[0], sub);
    uint32_t *module = flame_node_modules(&l->q[0], t);
    const struct flame_graph g = {
        .t = t, .sub = sub, .by = l->c->out.by, .counters = shown_counters(l->q[0].p),
        .colors = a->colors_id, .p = l->q[0].p, .node_module = module, .source = l->q[0].p->path,
    };
    listing_ignored_line(l, stderr);
    a->rc = flame_write(&g, &a->f);         /* "wrote ..." the last line */
    free(module);
    free(sub);
}

int cmd_flame(int argc, char **argv)
{
    struct common c;
    struct flame_args a = { 0 };
    const struct opt opts[] = {
        OPTION_BY("frame widths: a counter (default memtot):\n" COUNTER_HELP),
        OPTIONS_FLAME(&a.f),
        { .name = "colors", .arg = "SCHEME", .str = &a.colors,
          .help = "module (default: a hue per module file) or hash (per\nfunction name)" },
        OPTIONS_FILTER,
        OPTION_LINES("frames as 'function (file:line)'"),
        OPTION_NATIVE("Python stacks with every native frame (default: Python\nfirst, as mpquery top --help-all says)"),
        OPTION_NO_INLINE("hide inlined frames (inline_depth > 0)"),
        OPTION_MODULE("append ' [module]' to named frames"),
        OPTIONS_SELECT("select samples as in mpquery top --help"),
        OPTIONS_WINDOW,
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable)"),
        OPTION_QUIET("no line saying what it wrote"),
        OPTIONS_SERVER_STORE,
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "flame", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing DB" };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    if ((rc = counter_width_check(c.cmd, c.out.by))) return rc;
    if ((rc = flame_check_options(c.cmd, &a.f)) || (rc = flame_check_output(c.cmd, &a.f))) return rc;
    if (!a.colors || !strcmp(a.colors, "module")) a.colors_id = COLORS_MODULE;
    else if (!strcmp(a.colors, "hash")) a.colors_id = COLORS_HASH;
    else return usage_error(c.cmd, "bad value '%s' for --colors (expected module or hash)", a.colors);
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    if ((rc = check_output(&c, a.f.out, &files, 1))) return rc;
    rc = listing_run(&c, &files, 1, print, &a);
    return rc ? rc : a.rc;
}
