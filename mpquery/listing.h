/* The skeleton of top, fold, diff and leaks (listing.c): the rules
 * loaded, each profile queried into ONE display tree (diff matches paths
 * through it), per profile its counters summed per display node, the
 * paths the filters leave out taken out of them; and the pieces of output
 * these commands and the report share (orders, the lines on what was left
 * out or truncated, the stack column). */
#ifndef MPQUERY_LISTING_H
#define MPQUERY_LISTING_H

#include "mpquery.h"
#include "profile.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "select.h"
#include "view.h"

/* A profile loaded, selected and mapped onto a display tree. */
struct query { struct profile *p; struct selection sel; uint32_t *stack_node; };
/* What the filters (--filter, --exclude, suppressions) or the built-in
 * suppressions left out of one profile: the paths with a value and their
 * counters summed. */
struct left_out { int64_t stacks; counters c; };
/* The selected stacks cut at MP_DEPTH (their root is the [truncated]
 * frame) and their calls; depth: the largest MP_DEPTH of the selected
 * processes that recorded any. */
struct truncated { int64_t stacks, calls, depth; };
/* What top, fold, diff and leaks share. */
struct listing {
    const struct common *c;
    struct dtree t;
    struct query q[2];
    counters *own[2];           /* per node of t, per profile; 0 where left out */
    size_t n;                   /* profiles */
    size_t nfilters;            /* --filter, --exclude and suppression rules */
    struct left_out left[2];    /* per profile: by the filters */
    struct left_out suppressed[2];  /* per profile: by the built-in suppressions (leaks) */
    struct truncated trunc[2];  /* per profile */
    struct listing_memo *memo;  /* what listing_functions computed once */
    int tree_kept;              /* t and q[0].stack_node are another's (listing_build's from) */
};
/* Self and inclusive figures per label of l->t over own (dtree_functions):
 * over l->own[0], computed once per listing and kept (*kept = 1: not the
 * caller's to free; mpquery serve and report hand one listing to many
 * views); over another own, new arrays (*kept = 0: the caller frees). */
void listing_functions(struct listing *l, const counters *own, counters **self, counters **incl, int *kept);
/* The orders of listings for select_top (top, leaks, the report): nodes
 * of t with their counters c (per node), rep (per node: the stack shown,
 * node_stacks) and the counter sorted by. Larger values first; ties by the
 * lower stack id (order_stack), by name (order_function: t's labels);
 * order_leak: more bytes live, then more blocks, then the stack id. */
struct order_ctx { const counters *c; const struct profile *p; const uint32_t *rep; const struct dtree *t; int by; };
int order_stack(uint32_t a, uint32_t b, void *ctx);
int order_function(uint32_t a, uint32_t b, void *ctx);
int order_leak(uint32_t a, uint32_t b, void *ctx);
/* --group's groups over the profiles of a listing (listing_group.c):
 * matched by name, in name order; per group, listing_group_own puts each
 * profile's counters per node of l->t into own[i] (sized l->t.n), zero
 * where the filters left a path out, or leaks' live_only dropped its
 * stack. */
struct listing_groups {
    size_t n; const char **name; struct arena text;
    struct thread_groups g[2];
    uint32_t *rows[2]; size_t *start[2];    /* per profile: its rows by group (group_rows) */
};
void listing_groups_make(const struct listing *l, struct listing_groups *lg);
void listing_group_own(const struct listing *l, const struct listing_groups *lg, size_t k, counters **own);
void listing_groups_free(struct listing_groups *lg);
/* Runs that for profiles[0..n) (n <= 2), then print; 0 or the exit code. */
int listing_run(struct common *c, const struct dbfiles *profiles, size_t n,
                void (*print)(struct listing *l, void *ctx), void *ctx);
/* listing_run's parts: the listing of profiles[0..n) built into l (0,
 * or the exit code, reported, nothing kept), its rules into lr; freed.
 * With from (one profile), its display tree and stack nodes are from's,
 * not built (the same profile, rules and display options; from's tree
 * has no left_out), the filters' left_out made for l alone (view_left_out):
 * l->tree_kept, listing_free leaves the tree and frees that left_out. */
struct listing_rules { struct ruleset *rules, *suppress, *builtin; };
struct listing_tree { struct dtree t; uint32_t *stack_node; };
int listing_build(struct common *c, const struct dbfiles *profiles, size_t n, struct listing *l,
                  struct listing_rules *lr, const struct listing_tree *from);
void listing_free(struct listing *l, struct listing_rules *lr);
/* listing_cache.c: when listing_cache_on (mpquery serve and report, whose
 * views run in their process), listing_run of one profile (no diff, no
 * --server) keeps the listings it builds, the rules and display tree with
 * them, and hands each to the next command that asks for the same one:
 * the same files, selection, rules, filters and display options (the
 * listings of other selections share its display tree). Their messages
 * (stderr) while it was built are said again to each. */
extern int listing_cache_on;
int listing_cached(struct common *c, const struct dbfiles *profiles, void (*print)(struct listing *l, void *ctx),
                   void *ctx);
/* The display tree kept for c's rules and display options over the one
 * profile of profiles (no left_out: without filters), or NULL: what rss,
 * which maps stacks without a listing, reads instead of building it. */
const struct listing_tree *listing_tree_kept(const struct common *c, const struct dbfiles *profiles);
/* The same, built from p (the profile of profiles) and kept when none is
 * yet, for the listings that follow; NULL when the cache is off. */
const struct listing_tree *listing_tree_get(const struct common *c, const struct dbfiles *profiles,
                                            const struct profile *p);
/* Forgets every listing kept (the profile they were built from changed). */
void listing_cache_clear(void);
/* Prints a table of top or diff (through the pager with c->pager): with
 * filters, JSON is an object {"ignored": ..., "rows": [table]}, and text
 * (stdout) or csv (stderr) ends with the line of listing_ignored_line when
 * they left anything out. */
void listing_print(const struct listing *l, const struct table *tab);
/* listing_print's text with --callers: rows[r] and stacks[r] the node
 * and stack of row r of tab, NONE for a row without (table_print_callers). */
void listing_print_callers(const struct listing *l, const struct table *tab, const uint32_t *rows,
                           const uint32_t *stacks);
/* --callers is text of stacks: 0, or 2 (reported) with another format or
 * with --functions. */
int listing_callers_check(const struct common *c, int functions);
/* The frames a text label may show (where_fit.depth): --depth off a
 * terminal or when given, else any (the terminal's width decides). */
size_t listing_depth(const struct common *c);
/* "ignored M stacks (N calls, B bytes) with F filters" (diff: "... in a,
 * ... in b with F filters"), or nothing when nothing was left out; then
 * the truncated stacks' line (truncated_line). */
void listing_ignored_line(const struct listing *l, FILE *f);
/* The stacks of selection s deeper than MP_DEPTH (leaks: its live_only
 * selection, the leaking ones). */
void count_truncated(const struct profile *p, const struct selection *s, struct truncated *out);
/* "N stacks (C calls) were deeper than MP_DEPTH=D: inclusive figures of
 * outer functions are low; record with MP_DEPTH=4D" (side: " in a"...),
 * or nothing when none was. */
void truncated_line(const struct truncated *t, const char *side, FILE *f);
/* Per display node: rep, the stack shown for it (the largest by `by`, ties
 * the lowest id; NONE: none with a value), and nmerged, the stacks with a
 * value merged into it. Both arrays sized t->n, filled here. */
void node_stacks(const struct query *q, const struct dtree *t, int by, uint32_t *rep, uint32_t *nmerged);
/* A row's stack: text "ID" or "ID+N" (N more merged); csv and json the
 * two cells stack and stacks. */
void table_stack(struct table *tab, int format, int64_t id, uint32_t nmerged);


/* ---------------------------------------------------------------- where.c */
/* The room a one-line stack label has: width columns (code points; 0: any)
 * and at most depth frames shown (0: any). */
struct where_fit { size_t width, depth; };
/* The one-line labels ("where") of display nodes nodes[0..n) of t, for
 * text (top, leaks, diff): per row a malloc'd string into labels[] ("" for
 * a node NONE). Each shows its path leaf first, " < " between frames: the
 * leaf (the first frame not hidden), the first frame of the program's own
 * code (view.h: LABEL_OWN) when it fits, then callers in order while they
 * fit; frames a rules file hides left out, a run of N >= 2 frames without
 * a name of one module after its first as "[module ×N]", other frames
 * skipped as "…". Labels of different nodes never come out equal: rows
 * whose labels are equal get the first frame where their paths differ
 * shown, until they differ or the paths are whole (then past fit). */
void where_labels(const struct dtree *t, const uint32_t *nodes, size_t n, const struct where_fit *fit,
                  char **labels);
/* Text's "where" column, column col of tab (its cells filled with
 * anything, e.g. ""): per row r, the label of node rows[r] (NONE: the cell
 * is kept, e.g. top's totals row), all rows' made by where_labels with the
 * room tab->width leaves after the columns before col (tab->width 0: not
 * a terminal, no limit) and at most depth frames (0: any). */
void table_where_column(struct table *tab, size_t col, const struct dtree *t, const uint32_t *rows, size_t depth);
/* --callers: tab as text to f, each row r with rows[r] != NONE followed
 * by its whole path one frame a line, leaf first, indented by 4 spaces,
 * "LABEL (file:line)" where stacks[r] (a stack of q mapped to rows[r])
 * knows the frame's file (else a named frame's " [module]"), cut to
 * tab->width. */
void table_print_callers(const struct table *tab, const struct query *q, const struct dtree *t,
                         const struct view_opts *o, const uint32_t *rows, const uint32_t *stacks, FILE *f);

#endif
