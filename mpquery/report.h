/* The HTML page of `mpquery report` (report_page.c): its skeleton with
 * the style and script inline, and the pieces its sections are made of:
 * escaped text, number cells in human units with the exact value as their
 * tooltip, share bars, stack paths, tabs. Everything is written to
 * page.f; text is escaped here, so no name can break the page. */
#ifndef MPQUERY_REPORT_H
#define MPQUERY_REPORT_H

#include "mpquery.h"
#include "profile.h"
#include "listing.h"
#include "view.h"

/* report's options. */
struct report_args {
    char *out, *title, *min_width_arg;
    double min_width;           /* flame graphs' --min-width */
    int rc;                     /* what writing the page returned */
};

/* One counter's view of the profile: a tab of the flame graphs and of the
 * tables. own and sub: per display node, its own and its subtree's
 * counters; q: the query whose selection they sum (the stack ids shown). */
struct view {
    const char *tab, *what;     /* the tab's name (a counter, or "peak"), what it shows */
    int by;
    int at_peak;                /* the selection at each process's peak, not the selected one */
    const counters *own, *sub;
    const struct query *q;
};

struct page {
    FILE *f;
    struct strbuf sb, note;     /* escaping; a card's note */
};

/* The document up to the header's title; page_nav ends the header (its
 * links: with ledger, to the resident memory's section too). */
void page_start(struct page *pg, const char *title);
void page_nav(struct page *pg, int ledger);
/* The script (flame.c's and the page's), the end of the document. */
void page_end(struct page *pg);
/* Escaped text: all of s, or at most max characters of s[0..n). */
void page_text(struct page *pg, const char *s);
void page_textn(struct page *pg, const char *s, size_t n, size_t max);
/* <section id=ID><h2>TITLE</h2>, ended by the caller. */
void page_section(struct page *pg, const char *id, const char *title);
/* A summary card: its label, a counter's value in human units (counter
 * NONE: no value) with the exact one as tooltip, and a note (or NULL). */
void page_card(struct page *pg, const char *label, uint32_t counter, int64_t v, const char *note);
/* The same, noted "EXACT UNIT". */
void page_card_counter(struct page *pg, const char *label, int counter, int64_t v, const char *unit);
/* The tab buttons of a group, one a view (functions: two, self and
 * inclusive, a view not at the peak); hidden without JavaScript. */
void page_tabs(struct page *pg, const char *group, const struct view *v, size_t n, int functions);
/* <div class="pane"> of a tab, ended by the caller with </div>. */
void page_pane_start(struct page *pg, const char *group, const char *tab);
/* A number cell: human units, the exact value as tooltip; hl: the column
 * the table is sorted by. */
void page_td(struct page *pg, int counter, int64_t v, int hl);
/* A bar and the percentage of v in total. */
void page_share(struct page *pg, int64_t v, int64_t total);
/* A stack's cell: "ID", or "ID+N" when N more were merged into its row. */
void page_stack_id(struct page *pg, int64_t id, uint32_t nmerged);
/* A path's cell: leaf first, at most depth frames (0: all); its tooltip
 * the whole path, a frame a line. */
void page_where(struct page *pg, const struct dtree *t, uint32_t node, size_t depth);
/* A function's cell, its whole name as tooltip. */
void page_function(struct page *pg, const char *name, size_t n);
/* A table: page_table_start, its header cells (numeric: right-aligned;
 * hl: the column the table is sorted by; tip: the header's tooltip, or
 * NULL), page_table_body, its rows, page_table_end. */
void page_table_start(struct page *pg);
void page_th(struct page *pg, const char *name, int numeric, int hl, const char *tip);
void page_table_body(struct page *pg);
void page_table_end(struct page *pg);

/* What the page shows, gathered once from the listing (cmd_report.c). */
struct report {
    const struct common *c;
    const struct report_args *a;
    struct listing *l;
    const struct profile *p;
    const struct query *q;
    struct page pg;
    struct view views[NSTACK_COUNTERS + 1];
    size_t nviews;
    counters *sub;                      /* per node: subtree sums of the selection (flame) */
    struct selection peak_sel;          /* each process's peak, when a view of it */
    struct query peak_q;
    counters *peak_own, *peak_sub;
    uint32_t *procs; size_t nprocs;     /* the selected processes, by start */
    uint32_t *proc_total, *thread_total;/* their totals rows at the selection, NONE */
};

/* The page's sections, in its order: report_summary.c writes the header
 * (the selection, then page_nav), the summary cards, memory over time and
 * the flame graphs; report_tables.c the stacks, functions, leaks, and
 * processes and threads. */
void report_write_head(struct report *r, const char *title);
void report_write_summary(struct report *r);
void report_write_timeline(struct report *r);
/* Resident memory (report_ledger.c): the ledger of each process that has
 * one, as a stacked bar and over its snapshots; nothing without. */
int report_has_ledger(const struct report *r);
void report_write_ledger(struct report *r);
void report_write_flames(struct report *r);
void report_write_stacks(struct report *r);
void report_write_functions(struct report *r);
void report_write_leaks(struct report *r);
void report_write_threads(struct report *r);

#endif
