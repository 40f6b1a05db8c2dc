/* The tables of the report page: the largest stacks (mpquery top's rows)
 * and functions per view, the leaks (mpquery leaks' rows), and the totals
 * per process and per thread at the selected snapshot. Numbers through
 * page_td (human units, exact tooltip); names through page_text. */
#include "procs.h"
#include "report.h"
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- table headers */
static void stack_header(struct page *pg, counter_set shown, int by)
{
    page_table_start(pg);
    page_th(pg, "stack", 1, 0, "the database id of the largest stack of the row (mpquery show DB ID)");
    for (int k = 0; k < NSTACK_COUNTERS; k++)
        if (counter_shown(shown, k)) page_th(pg, counter_name[k], 1, k == by, NULL);
    page_th(pg, "share", 0, 0, NULL);
    page_th(pg, "where (leaf first)", 0, 0, NULL);
    page_table_body(pg);
}

/* Two rows: a counter over its self and inclusive columns. */
static void function_header(struct page *pg, const struct view *views, size_t n, int by, int inclusive)
{
    fputs("<div class=\"scroll\"><table><thead><tr>", pg->f);
    for (size_t k = 0; k < n; k++)
        if (!views[k].at_peak) fprintf(pg->f, "<th class=\"n\" colspan=\"2\">%s</th>", counter_name[views[k].by]);
    fputs("<th></th></tr>\n<tr>", pg->f);
    for (size_t k = 0; k < n; k++) {
        if (views[k].at_peak) continue;
        page_th(pg, "self", 1, views[k].by == by && !inclusive, NULL);
        page_th(pg, "inclusive", 1, views[k].by == by && inclusive, NULL);
    }
    page_th(pg, "function", 0, 0, NULL);
    page_table_body(pg);
}

static void leak_header(struct page *pg)
{
    static const char *const cols[] = { "stack", "blocks", "bytes", "share", "where (leaf first)" };
    page_table_start(pg);
    for (int k = 0; k < 5; k++) page_th(pg, cols[k], k < 3, k == 2, NULL);
    page_table_body(pg);
}

/* pid ... ended, the totals, and (processes) the peak, or (threads) the share. */
static void totals_header(struct page *pg, const char *const *cols, size_t n, const char *last)
{
    page_table_start(pg);
    for (size_t k = 0; k < n; k++) page_th(pg, cols[k], k < 2 || !strcmp(cols[k], "threads"), 0, NULL);
    for (int k = 0; k < NCOUNTERS; k++) page_th(pg, counter_name[k], 1, 0, NULL);
    page_th(pg, last, !strcmp(last, "peak"), 0, NULL);
    page_table_body(pg);
}

/* ---------------------------------------------------------------- tables */

static void stack_table(struct report *r, const struct view *v)
{
    const struct dtree *t = &r->l->t;
    const struct profile *p = r->p;
    uint32_t *rep = xmalloc(t->n * sizeof *rep), *nmerged = xmalloc(t->n * sizeof *nmerged);
    uint32_t *items = xmalloc(t->n * sizeof *items);
    node_stacks(v->q, t, v->by, rep, nmerged);
    size_t n = 0, nstacks = 0;
    for (uint32_t i = 1; i < t->n; i++)
        if (v->own[i].v[v->by] != 0 && rep[i] != NONE) items[n++] = i, nstacks += nmerged[i];
    struct order_ctx ctx = { v->own, p, rep, t, v->by };
    size_t total_rows = n;
    n = select_top(items, n, (size_t)r->c->out.limit, order_stack, &ctx);
    struct page *pg = &r->pg;
    page_pane_start(pg, "stacks", v->tab);
    fprintf(pg->f, "<h3>The largest stacks by %s (%s): %zu rows of %zu (%zu stacks)</h3>\n", counter_name[v->by],
            v->what, n, total_rows, nstacks);
    stack_header(pg, shown_counters(p), v->by);
    for (size_t i = 0; i < n; i++) {
        uint32_t node = items[i];
        fputs("<tr>", pg->f);
        page_stack_id(pg, p->stacks[rep[node]].id, nmerged[node]);
        for (int k = 0; k < NSTACK_COUNTERS; k++)
            if (counter_shown(shown_counters(p), k)) page_td(pg, k, v->own[node].v[k], k == v->by);
        page_share(pg, v->own[node].v[v->by], v->sub[0].v[v->by]);
        page_where(pg, t, node, (size_t)r->c->out.depth);
        fputs("</tr>\n", pg->f);
    }
    page_table_end(pg);
    fputs("</div>\n", pg->f);
    free(items);
    free(rep);
    free(nmerged);
}

void report_write_stacks(struct report *r)
{
    struct page *pg = &r->pg;
    page_section(pg, "stacks", "Stacks");
    page_tabs(pg, "stacks", r->views, r->nviews, 0);
    for (size_t i = 0; i < r->nviews; i++) stack_table(r, &r->views[i]);
    fputs("<p class=\"note\">A row is a path after rules (stacks whose paths became equal merged: "
          "'+N'); counters summed over threads and processes. The where column is leaf first; its tooltip has "
          "the whole path.</p>\n</section>\n", pg->f);
}

/* The functions by one view's counter, self or inclusive, with those of
 * every view's counter. */
static void function_table(struct report *r, const struct view *v, const counters *self, const counters *incl,
                           int inclusive)
{
    const struct dtree *t = &r->l->t;
    size_t nl = t->labels.n;
    const counters *key = inclusive ? incl : self;
    uint32_t *items = xmalloc((nl + 1) * sizeof *items);
    size_t n = 0;
    for (uint32_t i = 0; i < nl; i++)
        if (key[i].v[v->by] != 0) items[n++] = i;
    struct order_ctx ctx = { key, NULL, NULL, t, v->by };
    size_t total_rows = n;
    n = select_top(items, n, (size_t)r->c->out.limit, order_function, &ctx);
    struct page *pg = &r->pg;
    char tab[64];
    snprintf(tab, sizeof tab, "%s-%s", v->tab, inclusive ? "inclusive" : "self");
    page_pane_start(pg, "functions", tab);
    fprintf(pg->f, "<h3>The largest functions by %s %s (%s): %zu of %zu</h3>\n", inclusive ? "inclusive" : "self",
            counter_name[v->by], v->what, n, total_rows);
    function_header(pg, r->views, r->nviews, v->by, inclusive);
    for (size_t i = 0; i < n; i++) {
        fputs("<tr>", pg->f);
        for (size_t k = 0; k < r->nviews; k++) {
            int by = r->views[k].by;
            if (r->views[k].at_peak) continue;
            page_td(pg, by, self[items[i]].v[by], by == v->by && !inclusive);
            page_td(pg, by, incl[items[i]].v[by], by == v->by && inclusive);
        }
        page_function(pg, t->labels.str[items[i]], t->labels.len[items[i]]);
        fputs("</tr>\n", pg->f);
    }
    page_table_end(pg);
    fputs("</div>\n", pg->f);
    free(items);
}

void report_write_functions(struct report *r)
{
    struct dtree *t = &r->l->t;
    size_t nl = t->labels.n;
    counters *self = xcalloc(nl + 1, sizeof *self), *incl = xcalloc(nl + 1, sizeof *incl);
    dtree_functions(t, r->l->own[0], self, incl);
    struct page *pg = &r->pg;
    page_section(pg, "functions", "Functions");
    page_tabs(pg, "functions", r->views, r->nviews, 1);
    for (size_t i = 0; i < r->nviews; i++) {
        if (r->views[i].at_peak) continue;
        function_table(r, &r->views[i], self, incl, 0);
        function_table(r, &r->views[i], self, incl, 1);
    }
    fputs("<p class=\"note\">self: the function is the leaf after rules; inclusive: it is anywhere on the "
          "path (a recursive path counted once).</p>\n</section>\n", pg->f);
    free(self);
    free(incl);
}

/* ---------------------------------------------------------------- leaks */

/* As mpquery leaks: only the stacks with blocks or bytes still live count
 * (select_opts.live_only), per node summed, shown by the largest. */
void report_write_leaks(struct report *r)
{
    const struct profile *p = r->p;
    const struct dtree *t = &r->l->t;
    const counters *stack_c = r->q->sel.stack_c;
    counters *own = xcalloc(t->n, sizeof *own);
    uint32_t *rep = none_array(t->n), *nmerged = xcalloc(t->n, sizeof *nmerged), *items = xmalloc(t->n * sizeof *items);
    for (uint32_t k = 0; k < p->nrecorded; k++) {
        uint32_t s = p->recorded[k], node = r->q->stack_node[s];
        const counters *c = &stack_c[k];
        if (node == NONE || (c->v[NLIVE] <= 0 && c->v[MEMLIVE] <= 0)) continue;
        counters_add(&own[node], c);
        nmerged[node]++;
        const counters *best = rep[node] == NONE ? NULL : &stack_c[p->recorded_of[rep[node]]];
        if (!best || c->v[MEMLIVE] > best->v[MEMLIVE]
            || (c->v[MEMLIVE] == best->v[MEMLIVE] && p->stacks[s].id < p->stacks[rep[node]].id))
            rep[node] = s;
    }
    size_t n = 0;
    int64_t blocks = 0, bytes = 0;
    for (uint32_t i = 1; i < t->n; i++) {
        if ((own[i].v[NLIVE] <= 0 && own[i].v[MEMLIVE] <= 0) || rep[i] == NONE) continue;
        items[n++] = i;
        blocks = sat_add(blocks, own[i].v[NLIVE]);
        bytes = sat_add(bytes, own[i].v[MEMLIVE]);
    }
    struct order_ctx ctx = { own, p, rep, NULL, MEMLIVE };
    size_t shown = select_top(items, n, (size_t)r->c->out.limit, order_leak, &ctx);
    struct page *pg = &r->pg;
    char h[64];
    page_section(pg, "leaks", "Leaks");
    fprintf(pg->f, "<p class=\"leaks\" id=\"leak-summary\"><b title=\"%lld blocks\">%lld leaked blocks</b> "
                   "(<span title=\"%lld bytes\">%s</span>) in %zu stacks",
            (long long)blocks, (long long)blocks, (long long)bytes, fmt_human(MEMLIVE, bytes, h, sizeof h), n);
    fputs(r->c->sel.snap_kind == SNAP_LAST ? ": still allocated at exit" : ": still allocated at the snapshot",
          pg->f);
    fputs(n > shown ? "; the largest:</p>\n" : ".</p>\n", pg->f);
    if (shown) {
        leak_header(pg);
        for (size_t i = 0; i < shown; i++) {
            uint32_t node = items[i];
            fputs("<tr>", pg->f);
            page_stack_id(pg, p->stacks[rep[node]].id, nmerged[node]);
            page_td(pg, NLIVE, own[node].v[NLIVE], 0);
            page_td(pg, MEMLIVE, own[node].v[MEMLIVE], 1);
            page_share(pg, own[node].v[MEMLIVE], bytes);
            page_where(pg, t, node, (size_t)r->c->out.depth);
            fputs("</tr>\n", pg->f);
        }
        page_table_end(pg);
    }
    fputs("<p class=\"note\">As mpquery leaks --no-default-suppressions: mpquery leaks also leaves out "
          "the runtimes' one-time buffers (its built-in list) and known leaks with --suppressions.</p>\n"
          "</section>\n", pg->f);
    free(own);
    free(rep);
    free(nmerged);
    free(items);
}

/* ---------------------------------------------------------------- processes, threads */
static const struct total *total_row(const struct profile *p, uint32_t row)
{
    return row == NONE ? NULL : &p->totals[row];
}

/* ncalls, memtot, nfree, nlive, memlive, maxlive of a totals row ('-'
 * without one). */
static void totals_cells(struct page *pg, const struct total *t)
{
    for (int k = 0; k < NCOUNTERS; k++) {
        if (!t) fputs("<td class=\"n\">-</td>", pg->f);
        else page_td(pg, k, k == NLIVE ? t->c.v[NCALLS] - t->c.v[NFREE] : t->c.v[k], 0);
    }
}

/* How a process ended, in short words: "exit(3)", "returned from main",
 * "killed by SIGSEGV"...; a value this version does not know, as it is. */
static void ended_cell(struct page *pg, const struct profile *p, const char *ended)
{
    if (!strncmp(ended, "exit ", 5)) fprintf(pg->f, "exit(%d)", atoi(ended + 5));
    else if (!strncmp(ended, "_exit ", 6)) fprintf(pg->f, "_exit(%d)", atoi(ended + 6));
    else if (!strncmp(ended, "return ", 7)) fprintf(pg->f, "returned from main with status %d", atoi(ended + 7));
    else if (!strncmp(ended, "signal ", 7)) { fputs("killed by ", pg->f); page_text(pg, ended + 7); }
    else if (!strcmp(ended, "exit")) fputs("returned from main", pg->f);
    else if (!strcmp(ended, "exec")) fputs("exec'd another program", pg->f);
    else if (!*ended) fputs(p->version < 2 ? "-" : "no final snapshot", pg->f);
    else page_text(pg, ended);
}

static void process_rows(struct report *r)
{
    const struct profile *p = r->p;
    struct page *pg = &r->pg;
    static const char *const cols[] = { "pid", "ppid", "command", "threads", "duration", "ended" };
    totals_header(pg, cols, 6, "peak");
    for (size_t k = 0; k < r->nprocs; k++) {
        uint32_t i = r->procs[k];
        const struct process *pr = &p->procs[i];
        size_t nth = 0;
        for (size_t t = 0; t < p->nthreads; t++) nth += p->threads[t].process == i && r->q->sel.thread_ok[t];
        fprintf(pg->f, "<tr><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"name\" title=\"",
                (long long)pr->pid, (long long)pr->ppid);
        page_text(pg, *pr->cmdline ? pr->cmdline : pr->exe);
        fputs("\">", pg->f);
        page_text(pg, procs_name(pr));
        fprintf(pg->f, "</td><td class=\"n\">%zu</td>", nth);
        if (pr->end_time < 0) fputs("<td class=\"n\">-</td>", pg->f);
        else fprintf(pg->f, "<td class=\"n\">%.3f s</td>", pr->end_time - pr->start_time);
        fputs("<td>", pg->f);
        ended_cell(pg, p, pr->ended);
        fputs("</td>", pg->f);
        totals_cells(pg, total_row(p, r->proc_total[i]));
        uint32_t j = timeline_peak_snapshot(p, i);
        if (j == NONE) {
            fputs("<td class=\"n\">-</td>", pg->f);
        } else {
            char h[64];
            int64_t v = snapshot_total(p, j)->c.v[MEMLIVE];
            fprintf(pg->f, "<td class=\"n\" title=\"%lld bytes live at +%.3f s (snapshot %lld)\">%s</td>", (long long)v,
                    p->snapshots[j].time - pr->start_time, (long long)p->snapshots[j].seq,
                    fmt_human(MEMLIVE, v, h, sizeof h));
        }
        fputs("</tr>\n", pg->f);
    }
    page_table_end(pg);
}

static void thread_rows(struct report *r)
{
    const struct profile *p = r->p;
    struct page *pg = &r->pg;
    int64_t memtot = 0;
    for (size_t t = 0; t < p->nthreads; t++)
        if (r->q->sel.thread_ok[t] && r->thread_total[t] != NONE)
            memtot = sat_add(memtot, p->totals[r->thread_total[t]].c.v[MEMTOT]);
    static const char *const cols[] = { "pid", "tid", "name" };
    totals_header(pg, cols, 3, "share of memtot");
    for (size_t k = 0; k < r->nprocs; k++)
        for (size_t t = 0; t < p->nthreads; t++) {
            const struct thread *th = &p->threads[t];
            if (th->process != r->procs[k] || !r->q->sel.thread_ok[t]) continue;
            const struct total *row = total_row(p, r->thread_total[t]);
            fprintf(pg->f, "<tr><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"name\">",
                    (long long)p->procs[th->process].pid, (long long)th->tid);
            page_text(pg, *r->q->sel.thread_name[t] ? r->q->sel.thread_name[t] : "thread");
            fputs("</td>", pg->f);
            totals_cells(pg, row);
            page_share(pg, row ? row->c.v[MEMTOT] : 0, memtot);
            fputs("</tr>\n", pg->f);
        }
    page_table_end(pg);
}

void report_write_threads(struct report *r)
{
    struct page *pg = &r->pg;
    page_section(pg, "threads", "Processes and threads");
    fputs("<h3>Processes</h3>\n", pg->f);
    process_rows(r);
    fputs("<h3>Threads</h3>\n", pg->f);
    thread_rows(r);
    fputs("<p class=\"note\">Exact totals (with the allocations recorded without a stack) at the selected "
          "snapshot; thread names after the rules' thread lines. peak: the live bytes at the process's peak "
          "snapshot.</p>\n</section>\n", pg->f);
}
