/* mpquery live's frames (live.h): the header, memory over time as a
 * sparkline, top's rows with their change since the previous frame, the
 * process tree, the help line. */
#include "mpquery.h"
#include "profile.h"
#include "listing.h"
#include "live.h"
#include "load.h"
#include "output.h"
#include "procs.h"
#include "select.h"
#include "timeline.h"
#include "view.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- drawing */

static void put(struct live *v, const char *s) { sb_puts(&v->screen, s); }

/* One line of the frame: cut to the width, cleared to its end. */
static void line(struct live *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(struct live *v, const char *fmt, ...)
{
    if (v->nlines + 1 >= v->height && !v->footer) return;     /* the screen is full: no scrolling */
    v->nlines++;
    struct strbuf sb = { 0 };
    va_list ap;
    va_start(ap, fmt);
    char buf[4096];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    text_clean_sb(&sb, buf, strlen(buf));
    size_t n = 0, chars = 0;
    while (n < sb.len && chars < v->width) {
        size_t k = utf8_seq_len(sb.s + n, sb.len - n);
        n += k ? k : 1, chars++;
    }
    sb_add(&v->screen, sb.s, n);
    put(v, "\033[K\r\n");
    sb_free(&sb);
}

/* The processes' memlive over time, as a line of block characters: the
 * tree's points, or one process's (its ticks too). */
static void sparkline(struct live *v, const struct profile *p, const struct selection *sel)
{
    struct timeline tl = { 0 };     /* per stack (no stack_node): timeline.h */
    timeline_build(&tl, p, sel, 0);
    const struct point *pts = tl.nprocs == 1 ? tl.pts + tl.first[0] : tl.pts + tl.tree_first;
    size_t n = tl.nprocs == 1 ? tl.count[0] : tl.ntree;
    char peak_s[32];
    int64_t peak = 0;
    for (size_t i = 0; i < n; i++) if (pts[i].v[T_MEMLIVE] > peak) peak = pts[i].v[T_MEMLIVE];
    fmt_human(MEMLIVE, peak, peak_s, sizeof peak_s);
    char label[96];
    snprintf(label, sizeof label, "memlive, peak %s over %.1f s: ", peak_s, n ? pts[n - 1].t - pts[0].t : 0.0);
    size_t room = v->width > strlen(label) + 1 ? v->width - strlen(label) - 1 : 1;
    static const char *const blocks[] = { "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
                                          "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88" };
    struct strbuf sb = { 0 };
    sb_puts(&sb, label);
    if (n) {
        /* a column a point when they fit, else one per slice of time with its
         * largest value (a slice without a point repeats the last); the
         * last column is the latest point */
        double t0 = pts[0].t, span = pts[n - 1].t - t0;
        size_t cols = n < room ? n : room, k = 0;
        int64_t last = 0;
        for (size_t col = 0; col < cols; col++) {
            double end = t0 + span * (double)(col + 1) / (double)cols;
            int64_t m = -1;
            for (; k < n && (cols == n ? m < 0 : col + 1 == cols || pts[k].t <= end); k++)
                if (pts[k].v[T_MEMLIVE] > m) m = pts[k].v[T_MEMLIVE];
            if (m < 0) m = last;        /* no point in this slice: the value goes on */
            if (col + 1 == cols) m = pts[n - 1].v[T_MEMLIVE];     /* the right edge: now */
            last = m;
            sb_puts(&sb, blocks[peak > 0 ? (int)((m * 7 + peak / 2) / peak) : 0]);
        }
    }
    line(v, "%s", sb.s);
    sb_free(&sb);
    timeline_free(&tl);
}

/* The processes of the selection as a tree (children under their parent,
 * by start), each with its live bytes at the snapshot shown. */
static void process_line(struct live *v, const struct profile *p, const struct selection *sel, uint32_t i, int depth)
{
    const struct process *pr = &p->procs[i];
    uint32_t snap = sel->proc_snapshot[i];
    const struct total *t = snap != NONE ? snapshot_total(p, snap) : NULL;
    char live[32] = "-";
    if (t) fmt_human(MEMLIVE, t->c.v[MEMLIVE], live, sizeof live);
    const char *ended = *pr->ended ? pr->ended : p->version >= 2 ? live_process_ended(v, pr) : NULL;
    line(v, "%*s%s (pid %lld) %s live%s%s", 2 + 2 * depth, "", procs_name(pr), (long long)pr->pid, live,
         ended ? ", ended: " : "", ended ? ended : "");
}

static void process_tree(struct live *v, const struct profile *p, const struct selection *sel, size_t room)
{
    uint32_t *order = xmalloc((p->nprocs + 1) * sizeof *order), *depth = xcalloc(p->nprocs + 1, sizeof *depth);
    size_t n = 0;
    for (uint32_t i = 0; i < p->nprocs; i++) if (sel->run_on[p->procs[i].run]) order[n++] = i;
    qsort_r(order, n, sizeof *order, procs_by_start, (void *)p);
    /* depth-first: each process after its parent (the latest started one with its pid before it) */
    uint32_t *out = xmalloc((n + 1) * sizeof *out);
    uint8_t *placed = xcalloc(p->nprocs + 1, 1);
    size_t m = 0;
    for (size_t r = 0; r < n; r++) {
        uint32_t root = order[r];
        int has_parent = 0;
        for (size_t j = 0; j < r; j++)
            if (p->procs[order[j]].pid == p->procs[root].ppid && p->procs[order[j]].run == p->procs[root].run) has_parent = 1;
        if (has_parent || placed[root]) continue;
        size_t top = m;
        out[m++] = root, placed[root] = 1;
        for (size_t k = top; k < m; k++) {         /* children right after their parent */
            for (size_t j = n; j-- > 0;) {
                uint32_t c = order[j];
                if (placed[c] || p->procs[c].ppid != p->procs[out[k]].pid || p->procs[c].run != p->procs[out[k]].run) continue;
                memmove(out + k + 2, out + k + 1, (m - k - 1) * sizeof *out);
                out[k + 1] = c, placed[c] = 1, depth[c] = depth[out[k]] + 1, m++;
            }
        }
    }
    for (size_t r = 0; r < n; r++) if (!placed[order[r]]) out[m++] = order[r];
    size_t shown = m + 1 <= room ? m : room > 2 ? room - 2 : 0;     /* with the title, and "... more" */
    line(v, "processes: %zu", m);
    v->nwatch = 0;
    for (size_t k = 0; k < shown; k++) process_line(v, p, sel, out[k], (int)depth[out[k]]);
    if (shown < m) line(v, "  ... %zu more", m - shown);
    free(out), free(placed), free(order), free(depth);
}

/* The previous frame's value of a row, by its whole path (*found 0: none). */
static int64_t previous(const struct live *v, const char *key, int *found)
{
    for (size_t i = 0; i < v->nprev; i++)
        if (!strcmp(v->prev_key[i], key)) return *found = 1, v->prev_val[i];
    return *found = 0, 0;
}

static void remember(struct live *v, const char *key, int64_t val)
{
    v->cur_key = xrealloc(v->cur_key, (v->ncur + 1) * sizeof *v->cur_key);
    v->cur_val = xrealloc(v->cur_val, (v->ncur + 1) * sizeof *v->cur_val);
    v->cur_key[v->ncur] = xstrdup(key);
    v->cur_val[v->ncur++] = val;
}

/* The rows become the previous frame's. */
void live_rows_done(struct live *v)
{
    for (size_t i = 0; i < v->nprev; i++) free(v->prev_key[i]);
    free(v->prev_key), free(v->prev_val);
    v->prev_key = v->cur_key, v->prev_val = v->cur_val, v->nprev = v->ncur;
    v->cur_key = NULL, v->cur_val = NULL, v->ncur = 0;
    v->prev_by = v->c->out.by;
}

/* A row's counters k[0..n): the by counter with its share of total and
 * its change (text) after it. */
static void counter_cells(struct table *tab, const int *k, int n, int by, const counters *x, const counters *total,
                          const char *change)
{
    for (int i = 0; i < n; i++) {
        table_counter(tab, k[i], x->v[k[i]], 1);
        if (k[i] != by) continue;
        if (total->v[by]) table_num(tab, 100.0 * (double)x->v[by] / (double)total->v[by], 1);
        else table_null(tab);
        table_str(tab, change);
    }
}

/* top's columns (text): ncalls, then the --by counter and its share (by
 * ncalls: those two), the change after them, stack, where. The counters
 * into k (*nk of them); returns the columns' number. */
static size_t columns(int by, int *k, int *nk, const char **cols)
{
    size_t ncols = 0;
    *nk = 0;
    if (by != NCALLS) k[(*nk)++] = NCALLS;
    k[(*nk)++] = by;
    for (int i = 0; i < *nk; i++) {
        cols[ncols++] = counter_name[k[i]];
        if (k[i] == by) cols[ncols++] = "%", cols[ncols++] = "change";
    }
    cols[ncols++] = "stack", cols[ncols++] = "where";
    return ncols;
}

/* A row's change since the previous frame into d: "+1.2 MiB", "-3", "new"
 * (a row that was not there), "" (unchanged, or no previous frame of this
 * counter); the value remembered for the next frame. */
static void change(struct live *v, const char *key, int by, int64_t val, char *d, size_t size)
{
    int found;
    int64_t was = previous(v, key, &found);
    char h[32];
    remember(v, key, val);
    *d = 0;
    if (v->prev_by != by || !v->nprev) return;
    if (!found) snprintf(d, size, "new");
    else if (val != was) snprintf(d, size, "%c%s", val > was ? '+' : '-', fmt_human(by, val > was ? val - was : was - val, h, sizeof h));
}

/* The table as text, a line of the frame each. */
static void table_lines(struct live *v, const struct table *tab)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    table_print(tab, FMT_TEXT, f);
    fclose(f);
    for (char *s = text, *e; s && *s; s = e + 1) {
        if (!(e = strchr(s, '\n'))) e = s + strlen(s);
        line(v, "%.*s", (int)(e - s), s);
        if (!*e) break;
    }
    free(text);
}

/* top's rows (cmd_top.c's stack_rows, text): the --by counter, its share,
 * its change since the previous frame, ncalls, stack, where. */
static void top_rows(struct live *v, const struct listing *l, size_t room)
{
    const struct common *c = l->c;
    const struct query *q = &l->q[0];
    const struct dtree *t = &l->t;
    const counters *own = l->own[0];
    int by = c->out.by;
    uint32_t *rep = xmalloc(t->n * sizeof *rep), *nmerged = xmalloc(t->n * sizeof *nmerged);
    node_stacks(q, t, by, rep, nmerged);
    uint32_t *items = xmalloc(t->n * sizeof *items);
    size_t n = 0, nstacks = 0;
    counters total = { { 0 } };
    for (uint32_t i = 1; i < t->n; i++) {
        counters_add(&total, &own[i]);
        if (own[i].v[by] != 0 && rep[i] != NONE) items[n++] = i, nstacks += nmerged[i];
    }
    size_t nrows = n;
    struct order_ctx ctx = { own, q->p, rep, t, by };
    n = select_top(items, n, room > 2 ? room - 2 : 1, order_stack, &ctx);
    int k[2], nk;
    const char *cols[8];
    size_t ncols = columns(by, k, &nk, cols);
    struct table tab;
    table_init(&tab, ncols, cols);
    tab.width = v->width;
    uint32_t *rows = xmalloc((n + 1) * sizeof *rows);
    char name[96];
    snprintf(name, sizeof name, "(total: %zu stacks in %zu rows)", nstacks, nrows);
    rows[0] = NONE;
    counter_cells(&tab, k, nk, by, &total, &total, "");
    table_str(&tab, "");
    table_str(&tab, name);
    struct strbuf key = { 0 };
    for (size_t i = 0; i < n; i++) {
        uint32_t node = items[i];
        int64_t val = own[node].v[by];
        rows[i + 1] = node;
        dtree_short_path(t, node, 0, " < ", &key);
        char d[40];
        change(v, key.s, by, val, d, sizeof d);
        counter_cells(&tab, k, nk, by, &own[node], &total, d);
        table_stack(&tab, FMT_TEXT, q->p->stacks[rep[node]].id, nmerged[node]);
        table_str(&tab, "");
    }
    sb_free(&key);
    table_where_column(&tab, ncols - 1, t, rows, 0);
    table_lines(v, &tab);
    table_free(&tab);
    free(rows), free(items), free(rep), free(nmerged);
}

/* The snapshot the selection shows (the largest seq of a selected process's
 * selected snapshot) and the latest there is; its time. */
static double snapshot_shown(struct live *v, const struct profile *p, const struct selection *sel)
{
    double when = 0;
    int64_t seq = 0, max = 0;
    for (uint32_t i = 0; i < p->nprocs; i++) {
        if (!sel->run_on[p->procs[i].run]) continue;
        const struct process *pr = &p->procs[i];
        for (uint32_t k = 0; k < pr->nsnapshots; k++) {
            const struct snapshot *s = &p->snapshots[pr->first_snapshot + k];
            if (!s->peak && s->seq > max) max = s->seq;
        }
        uint32_t snap = sel->proc_snapshot[i];
        if (snap != NONE && p->snapshots[snap].seq >= seq) seq = p->snapshots[snap].seq, when = p->snapshots[snap].time;
    }
    v->seq = seq, v->max_seq = max;
    return when;
}

/* The frame, drawn by listing_run over the copy. */
static void draw(struct listing *l, void *arg)
{
    struct live *v = arg;
    const struct common *c = l->c;
    const struct profile *p = l->q[0].p;
    const struct selection *sel = &l->q[0].sel;
    double when = snapshot_shown(v, p, sel);
    v->counters = shown_counters(p) & ~MAPPING_COUNTERS;
    char date[64], h1[32], h2[32], h3[32];
    procs_fmt_date(when, date, sizeof date);
    counters total = { { 0 } };
    for (uint32_t i = 0; i < p->nprocs; i++) {
        uint32_t snap = sel->proc_snapshot[i];
        const struct total *t = snap != NONE ? snapshot_total(p, snap) : NULL;
        if (t) counters_add(&total, &t->c);
    }
    line(v, "mpquery live %s  snapshot %lld of %lld%s at %s", v->path, (long long)v->seq, (long long)v->max_seq,
         v->follow ? " (latest)" : "", date);
    line(v, "memlive %s  memtot %s  ncalls %s  by %s%s%s", fmt_human(MEMLIVE, total.v[MEMLIVE], h1, sizeof h1),
         fmt_human(MEMTOT, total.v[MEMTOT], h2, sizeof h2), fmt_human(NCALLS, total.v[NCALLS], h3, sizeof h3),
         counter_name[c->out.by], *v->filter ? "  filter " : "", v->filter);
    sparkline(v, p, sel);
    line(v, "%s", "");
    size_t nprocs = 0;
    for (uint32_t i = 0; i < p->nprocs; i++) nprocs += sel->run_on[p->procs[i].run];
    size_t fixed = 4 + 1 + 1;      /* header lines, the gap, the help line */
    size_t tree = nprocs + 1 < 6 ? nprocs + 1 : 6;
    size_t room = v->height > fixed + tree + 4 ? v->height - fixed - tree - 1 : 4;
    top_rows(v, l, room);
    line(v, "%s", "");
    process_tree(v, p, sel, tree);
}

/* The snapshot option of the frame: the latest, or seq. */
static void set_snapshot(struct live *v)
{
    if (v->fixed_snapshot) return;
    if (v->follow) v->c->sel.snap_kind = SNAP_LAST;
    else v->c->sel.snap_kind = SNAP_SEQ, v->c->sel.snap_value = v->seq;
}

/* live.h */
void live_frame(struct live *v, FILE *errs)
{
    v->screen.len = 0, v->nlines = 0, v->footer = 0;
    put(v, "\033[H");
    size_t start = v->screen.len;
    if (v->have_copy) {
        set_snapshot(v);
        v->c->view.nfilter = 0;
        if (*v->filter) v->c->view.filter[v->c->view.nfilter++] = v->filter;
        char *copy = (char *)v->copy;
        struct dbfiles files = { &copy, 1 };
        long at = errs ? ftell(errs) : 0;
        int rc = listing_run(v->c, &files, 1, draw, v);
        if (rc && errs) {
            char msg[512] = "";
            fflush(errs);
            if (fseek(errs, at, SEEK_SET) == 0 && fgets(msg, sizeof msg, errs)) msg[strcspn(msg, "\n")] = 0;
            fseek(errs, 0, SEEK_END);
            snprintf(v->status, sizeof v->status, "%s", *msg ? msg : "cannot read the profile");
        }
        v->load_rc = rc;
        if (rc) {               /* the last good frame stays, the problem on the help line */
            v->screen.len = start, v->nlines = v->good_lines;
            sb_add(&v->screen, v->good.s ? v->good.s : "", v->good.len);
        } else {
            live_rows_done(v);
            v->good.len = 0, v->good_lines = v->nlines;
            sb_add(&v->good, v->screen.s + start, v->screen.len - start);
        }
    }
    if (!v->have_copy) line(v, "mpquery live %s", v->path), line(v, "%s", v->status);
    while (v->nlines + 1 < v->height) line(v, "%s", "");
    v->footer = 1;
    if (v->typing) {
        line(v, "filter (POSIX ERE, Enter to apply, Esc to cancel): %s_", v->typing);
    } else {
        char help[4800];
        int said = !v->have_copy;      /* the status is the body then */
        snprintf(help, sizeof help, "c counter  s/S snapshot  / filter  q quit%s%s%s%s", v->done ? "  | " : "",
                 v->done ? v->done_note : "", *v->status && !said ? "  | " : "", said ? "" : v->status);
        line(v, "%s", help);
    }
    if (v->screen.len >= 2) v->screen.len -= 2;     /* no line break after the last: no scroll */
    v->screen.s[v->screen.len] = 0;
}

