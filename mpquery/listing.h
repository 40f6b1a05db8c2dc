/* The skeleton of top, fold, diff and leaks (listing.c): the rules
 * loaded, each profile queried into ONE display tree (diff matches paths
 * through it), per profile its counters summed per display node, the
 * paths the filters leave out taken out of them; and the pieces of output
 * these commands and the report share (orders, the lines on what was left
 * out or truncated, the stack column). */
#ifndef MPQUERY_LISTING_H
#define MPQUERY_LISTING_H

#include "mpquery.h"
#include "load.h"
#include "options.h"
#include "output.h"
#include "select.h"
#include "view.h"

/* A profile loaded, selected and mapped onto a display tree. */
struct query { struct profile *p; struct selection sel; uint32_t *stack_node; };
/* What the filters (--filter, --exclude, suppressions) left out of one
 * profile: the paths with a value and their counters summed. */
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
    struct left_out left[2];    /* per profile */
    struct truncated trunc[2];  /* per profile */
};
/* The orders of listings for select_top (top, leaks, the report): nodes
 * of t with their counters c (per node), rep (per node: the stack shown,
 * node_stacks) and the counter sorted by. Larger values first; ties by the
 * lower stack id (order_stack), by name (order_function: t's labels);
 * order_leak: more bytes live, then more blocks, then the stack id. */
struct order_ctx { const counters *c; const struct profile *p; const uint32_t *rep; const struct dtree *t; int by; };
int order_stack(uint32_t a, uint32_t b, void *ctx);
int order_function(uint32_t a, uint32_t b, void *ctx);
int order_leak(uint32_t a, uint32_t b, void *ctx);
/* Runs that for profiles[0..n) (n <= 2), then print; 0 or the exit code. */
int listing_run(struct common *c, const struct dbfiles *profiles, size_t n,
                void (*print)(struct listing *l, void *ctx), void *ctx);
/* Prints a table of top or diff (through the pager with c->pager): with
 * filters, JSON is an object {"ignored": ..., "rows": [table]}, and text
 * (stdout) or csv (stderr) ends with the line of listing_ignored_line when
 * they left anything out. */
void listing_print(const struct listing *l, const struct table *tab);
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

#endif
