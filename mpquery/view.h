/* The display tree (view.c): the paths of frame labels after the rules,
 * as a trie onto which commands map the selected stacks, Python stacks
 * shown Python first (view_python.c); frame names for people (names.c);
 * and the display's options (--lines, --no-inline, --module, --native,
 * --filter, --exclude), which parse_options parses into struct view_opts
 * (view_option). */
#ifndef MPQUERY_VIEW_H
#define MPQUERY_VIEW_H

#include "mpquery.h"
#include "profile.h"
#include "options.h"

struct ruleset;
struct selection;

/* ---------------------------------------------------------------- names.c */
/* A function's name for people (text output), after every rule: template
 * argument lists nested more than depth levels deep become <…> (depth < 0:
 * none), and with no_signatures the parameter list goes (with the
 * qualifiers after it). A name that is not C++ comes back unchanged. */
void shorten_name(const char *s, size_t n, int depth, int no_signatures, struct strbuf *out);

/* ---------------------------------------------------------------- view.c */
/* The display tree: paths of frame labels after rules, as a trie. Node 0
 * is the empty path; a node's parent index is always smaller than its own,
 * so reverse index order visits children before parents. Two profiles
 * viewed into one tree (diff) get equal nodes for equal paths. */
struct dtree {
    uint32_t *parent, *label; size_t n, cap;
    struct idmap child;         /* (parent << 32 | label) → node */
    struct strtab labels;       /* label id → text */
    uint32_t children_ready;    /* child_start / child_list built: 1, 2 sorted by label */
    uint32_t *child_start, *child_list;
    /* with filters (view_build), per node: LEFT_BUILTIN when a frame of its
     * path is marked (drop, prune, root) by the built-in suppressions, else
     * LEFT_FILTERS when the others leave it out: --filter given and no
     * frame on the path matches one, or a frame matches an --exclude or is
     * marked by a --suppressions rule; else 0. Names tested as shown.
     * NULL without filters. */
    uint8_t *left_out;
    uint8_t *tag_label; size_t tag_cap;     /* per label: 1 when a [tag] frame's (view_build) */
    /* per label (view_build), what one-line stack labels need (listing.c):
     * LABEL_* bits, and for LABEL_NONAME the module's base name, an id of
     * t->modules (runs of such frames of one module collapse) */
    uint8_t *label_kind; uint32_t *label_module; size_t kind_cap;
    struct strtab modules;
};
/* LABEL_HIDE: a rules file's hide matched the name; LABEL_NONAME: a frame
 * without a function name (module+0xOFFSET); LABEL_OWN: the program's own
 * code, a frame of the main executable (a process's exe) or of a module
 * outside the system's directories (/lib, /lib32, /lib64, /usr/lib,
 * /usr/lib32, /usr/lib64, /usr/libexec: the C and C++ runtimes, ld.so,
 * distribution libraries); special modules ([tag], [unknown]) are not.
 * A label made by frames of several kinds has all their bits. */
enum { LABEL_HIDE = 1, LABEL_NONAME = 2, LABEL_OWN = 4 };
enum { LEFT_FILTERS = 1, LEFT_BUILTIN = 2 };
struct view_opts {
    const struct ruleset *rules;
    int no_inline, lines, module;
    int native;                             /* --native: every frame of a Python stack (view_python.c) */
    int collapse, no_signatures;            /* function names shortened after the rules (names.c):
                                               the rules' collapse-templates, no parameter lists */
    const char *filter[64]; size_t nfilter;     /* --filter / --exclude */
    const char *exclude[64]; size_t nexclude;
    const struct ruleset *suppress;         /* leaks --suppressions, or NULL */
    const struct ruleset *builtin;          /* leaks' built-in suppressions, or NULL */
};
void dtree_init(struct dtree *t);
void dtree_free(struct dtree *t);
/* Maps every stack of p to a display node (out: per stack index) and,
 * with filters, sets t->left_out. Returns 0, or 2 with err set (bad
 * --filter or --exclude regex). */
int view_build(const struct profile *p, const struct view_opts *o,
               struct dtree *t, uint32_t *stack_node, char *err, size_t errlen);
/* t->left_out (a new array) of the filters of o (--filter, --exclude, the
 * suppressions) over the nodes of t as view_build sets it: the paths
 * depend on the rules and display options alone, so a tree built without
 * filters serves every filter (mpquery serve's listings, listing_cache.c).
 * 0, or 2 with err set (a bad regex). */
int view_left_out(struct dtree *t, const struct view_opts *o, char *err, size_t errlen);
/* Adds per-stack counters into per-node counters (node_c sized t->n). */
void view_accumulate(const struct profile *p, const struct selection *s,
                     const uint32_t *stack_node, counters *node_c);
/* Per-node subtree sums (sub sized t->n). */
void dtree_subtotals(const struct dtree *t, const counters *own, counters *sub);
/* The same for counter k alone (fold's pruning: 8 bytes a node, not 112). */
void dtree_subtotal_of(const struct dtree *t, const counters *own, int k, int64_t *sub);
/* The tree of tag scopes: the leading [tag] frames of the paths of t, named
 * without the "[tag] " prefix, built into scopes (dtree_init'ed by the
 * caller). Per node of t, scope_of is the scope node of its innermost tag
 * (0: the path has no tag). */
void dtree_tag_scopes(const struct dtree *t, struct dtree *scopes, uint32_t *scope_of);
/* Self (leaf) and inclusive (stack counted once per function) per label. */
void dtree_functions(struct dtree *t, const counters *own, counters *self, counters *incl);
/* child_start, child_list (sorted: each node's by label), unless built so. */
void dtree_children(struct dtree *t, int sorted);
/* Leaf-first labels of a node joined by sep, at most depth frames
 * (0 = all), " < ..." style ellipsis when cut. */
void dtree_short_path(const struct dtree *t, uint32_t node, size_t depth,
                      const char *sep, struct strbuf *out);
/* Leaf-first labels of a node as a JSON array of strings. */
void dtree_frames_json(const struct dtree *t, uint32_t node, struct strbuf *out);
/* Root-first path for folded output, names escaped for the format. */
void dtree_fold_path(const struct dtree *t, uint32_t node, struct strbuf *out);
/* Depth-first over the tree in path order (siblings sorted by label),
 * calling emit with each node's escaped root-first path; subtrees whose
 * keep[] is zero are skipped. */
void fold_walk(struct dtree *t, const int64_t *keep,
               void (*emit)(uint32_t node, const char *path, size_t len, void *ctx), void *ctx);
/* Escapes a frame label for folded stacks: ';' → ':', control chars → ' '. */
void fold_escape(const char *s, size_t n, struct strbuf *out);
/* names.c: the one name of a frame before rules, in every view: the
 * demangled function ("[tag] NAME", "mmap NAME"), or MODULE+0xOFFSET
 * (the module's file name) without one, or the special module's own
 * label; never an address for a frame without one. */
void frame_base_name(const struct profile *p, uint32_t frame, struct strbuf *out);
/* f's offset is an address (not a tag's, mapping's or Python frame's hash) */
int frame_has_address(const struct profile *p, const struct frame *f);
/* f is a Python frame (MP_PYTHON): its module is its .py file */
int frame_is_python(const struct profile *p, const struct frame *f);
/* view_python.c: per stack of p, the rule flags that show it Python
 * first, added to its frame's: RULE_ROOT on the outermost Python frame of
 * its path, RULE_DROP on a frame of the interpreter's modules below it;
 * NULL (nothing to add) when p has no Python frame. */
uint8_t *view_python_flags(const struct profile *p);

/* ---------------------------------------------------------------- options */
/* The display's options, each entry tagged OPTG_VIEW: parse_view parses it
 * (options.h), --help lists it under Display (--filter, --exclude: Selection). */
#define OPTG_VIEW .parse = parse_view, .place = PLACE_DISPLAY
enum { OPT_NO_INLINE = 3 << 8, OPT_LINES, OPT_MODULE, OPT_FILTER, OPT_EXCLUDE, OPT_NATIVE };
#define OPTION_LINES(h)     { OPTG_VIEW, .name = "lines", .id = OPT_LINES, .help = (h) }
#define OPTION_NO_INLINE(h) { OPTG_VIEW, .name = "no-inline", .id = OPT_NO_INLINE, .advanced = 1, .help = (h) }
#define OPTION_MODULE(h)    { OPTG_VIEW, .name = "module", .id = OPT_MODULE, .advanced = 1, .help = (h) }
#define OPTION_NATIVE(h)    { OPTG_VIEW, .name = "native", .id = OPT_NATIVE, .help = (h) }
#define OPTIONS_DISPLAY(h)  OPTION_LINES(NULL), OPTION_NATIVE(NULL), OPTION_NO_INLINE(NULL), OPTION_MODULE(h)
#define OPTIONS_FILTER \
    { .parse = parse_view, .place = PLACE_SELECT, .name = "filter", .id = OPT_FILTER, .arg = "RE", \
      .help = "keep only stacks with a frame matching RE (POSIX ERE, on\n" \
              "the names after rules; repeatable: any of them)" }, \
    { .parse = parse_view, .place = PLACE_SELECT, .name = "exclude", .id = OPT_EXCLUDE, .arg = "RE", \
      .help = "drop stacks with a frame matching RE (repeatable)" }
/* --functions, --self, --inclusive (top, diff): functions instead of
 * stacks (*functions = 1), with self or inclusive values (*inclusive) */
#define OPTIONS_FUNCTIONS(functions, inclusive, h_functions, h_self, h_inclusive) \
    { .name = "functions", .flag = (functions), .value = 1, .help = (h_functions) }, \
    { .name = "self", .flag = (inclusive), .value = 0, .help = (h_self) }, \
    { .name = "inclusive", .flag = (inclusive), .value = 1, .help = (h_inclusive) }
/* One of the options above into o; 0, or 2 (reported) past 64 patterns. */
int view_option(struct view_opts *o, const char *cmd, int id, const char *arg);
opt_parser parse_view;              /* the entries': view_option into c->view */

#endif
