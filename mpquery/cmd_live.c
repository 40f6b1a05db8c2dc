/* mpquery live: a full-screen view of a profile that a recorder is still
 * writing, redrawn when the file changes (looked at every --interval
 * seconds) or a key is pressed: memory over time (timeline.c's points),
 * the largest stacks by a counter (top's rows: listing.c, the same rules
 * and units) with their change since the previous frame, and the process
 * tree. Plain ANSI: the alternate screen, raw mode by termios, restored at
 * exit and on SIGINT, SIGTERM and SIGHUP; SIGWINCH redraws.
 *
 * The writer is never made to wait on us for more than a copy of the file:
 * the recorder keeps SQLite's rollback journal (no -wal/-shm files, any
 * file system, a copied .db always complete), so a reader holding its
 * shared lock would hold the recorder's COMMIT back for as long as it
 * reads. live takes the lock only to copy the file (profile_copy_committed:
 * milliseconds for megabytes; the recorder's busy timeout is 300 s) and
 * reads the copy at leisure. */
#include "optdefs.h"
#include "mpquery.h"
#include "commands.h"
#include "listing.h"
#include "load.h"
#include "options.h"
#include "output.h"
#include "procs.h"
#include "rules.h"
#include "select.h"
#include "tempfile.h"
#include "timeline.h"
#include "view.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <sqlite3.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery live DB [options]\n"
"\n"
"A full-screen view of a profile being written (MP_INTERVAL snapshots):\n"
"memory over time, the largest stacks by a counter with their change since\n"
"the previous frame, and the process tree; redrawn when the file changes.\n"
"Keys: c / C next / previous counter, s / S an earlier / later snapshot\n"
"(arrows too; the latest is followed again past the last), / a filter\n"
"regex (as --filter; empty: none), q quit.\n"
"\n";

static const char more[] =
"\n"
"The file is read from a copy taken under SQLite's shared lock, held only\n"
"for the copy: the recorder (rollback journal) is never kept waiting\n"
"longer. A file that does not exist yet is waited for. The rows are those\n"
"of 'mpquery top DB --by COUNTER --snapshot S' for the snapshot the header\n"
"shows, with a column of their change since the previous frame.\n"
"stdout must be a terminal, but with --once: one frame to stdout, COLUMNS\n"
"wide and LINES high (80 x 24 off a terminal).\n"
"\n"
"example:\n"
"  mpquery live app.db --by memlive\n"
"  mpquery record --live -- ./server --port 8080\n";

/* What a frame shows and what the previous one did (for the changes). */
struct live {
    struct common *c;
    const char *path;           /* the file the recorder writes */
    const char *copy;           /* its last committed state, read */
    const char *next;           /* the copy being made */
    struct stat seen;           /* the file when it was last copied */
    int have_copy;
    char filter[256];           /* the / filter ("" none) */
    int follow;                 /* show the latest snapshot */
    int fixed_snapshot;         /* --snapshot peak, id:N, label:TEXT: as given, s and S do nothing */
    int64_t seq, max_seq;       /* the snapshot shown (seq), the latest's */
    size_t width, height;
    struct strbuf screen;       /* the frame being made */
    char status[4600];          /* the last problem, or a note */
    /* the previous frame's rows: path → value of prev_by */
    char **prev_key; int64_t *prev_val; size_t nprev; int prev_by;
    char **cur_key; int64_t *cur_val; size_t ncur;
    char *typing;               /* '/' typed so far, or NULL */
    int done;                   /* the program live watches has ended (record --live) */
    int load_rc;                /* the last frame's listing: 0, or its exit code */
    size_t nlines;              /* lines of the frame so far */
    struct strbuf good;         /* the last frame read without a problem, but its help line */
    size_t good_lines;
    int footer;                 /* the help line is being drawn: the last line */
    counter_set counters;       /* those c cycles through: the profile's, but the mappings' */
    const char *done_note;
};

/* ---------------------------------------------------------------- the file */

/* 1 when the file changed since its last copy (a recorder committed). */
static int file_changed(struct live *v)
{
    struct stat st;
    if (stat(v->path, &st) != 0) return 0;
    if (v->have_copy && st.st_ino == v->seen.st_ino && st.st_size == v->seen.st_size &&
        st.st_mtim.tv_sec == v->seen.st_mtim.tv_sec && st.st_mtim.tv_nsec == v->seen.st_mtim.tv_nsec)
        return 0;
    return 1;
}

/* The copy brought up to date; 0, or -1 with v->status set. */
static int refresh_copy(struct live *v)
{
    struct stat st;
    if (stat(v->path, &st) != 0) {
        snprintf(v->status, sizeof v->status, "waiting for %s: no snapshot written yet (%s)", v->path,
                 strerror(errno));
        return -1;
    }
    char err[4400];
    struct sqlite3 *db = NULL;
    /* the new copy checked as a profile here (a message names the file), and
     * put in place of the last good one only then */
    int rc = profile_copy_committed(v->path, v->next, err, sizeof err);
    if (!rc) rc = profile_open_db(v->next, &db, 0, err, sizeof err);
    sqlite3_close(db);
    if (!rc && rename(v->next, v->copy) != 0)
        rc = -1, snprintf(err, sizeof err, "cannot rename %s (%s)", v->next, strerror(errno));
    if (rc) {
        snprintf(v->status, sizeof v->status, "%s: %s", v->path, err);
        return -1;
    }
    v->seen = st;
    v->have_copy = 1;
    return 0;
}

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
    struct timeline tl;
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
    line(v, "%*s%s (pid %lld) %s live%s%s", 2 + 2 * depth, "", procs_name(pr), (long long)pr->pid, live,
         *pr->ended ? ", ended: " : "", pr->ended);
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
static void rows_done(struct live *v)
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

/* A frame into v->screen: the copy's listing, or what keeps it from being
 * one; errors of the readers go to stderr (a file, on the screen). */
static void frame(struct live *v, FILE *errs)
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
            rows_done(v);
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

/* ---------------------------------------------------------------- the terminal */

static struct termios saved_tty;
static int tty_raw, sig_pipe[2] = { -1, -1 };

static void restore_terminal(void)
{
    if (!tty_raw) return;
    static const char leave[] = "\033[?25h\033[?1049l";
    ssize_t w = write(STDOUT_FILENO, leave, sizeof leave - 1);
    (void)w;
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
    tty_raw = 0;
}

static void on_signal(int sig)
{
    int e = errno;
    char b = (char)sig;
    ssize_t w = write(sig_pipe[1], &b, 1);
    (void)w;
    errno = e;
}

static int enter_terminal(void)
{
    if (tcgetattr(STDIN_FILENO, &saved_tty) != 0) return -1;
    struct termios raw = saved_tty;
    raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    raw.c_cc[VMIN] = 1, raw.c_cc[VTIME] = 0;
    if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) != 0) return -1;
    tty_raw = 1;
    atexit(restore_terminal);
    static const char enter[] = "\033[?1049h\033[?25l\033[2J";
    ssize_t w = write(STDOUT_FILENO, enter, sizeof enter - 1);
    (void)w;
    if (pipe(sig_pipe) != 0) return -1;
    fcntl(sig_pipe[0], F_SETFL, O_NONBLOCK), fcntl(sig_pipe[1], F_SETFL, O_NONBLOCK);
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH };
    for (size_t i = 0; i < 4; i++) sigaction(sigs[i], &sa, NULL);
    return 0;
}

/* The terminal's size now (it changes: SIGWINCH); off a terminal (--once)
 * COLUMNS and LINES, else 80 x 24. */
static size_t dimension(const char *name, size_t from_tty, size_t deflt)
{
    if (from_tty) return from_tty;
    const char *e = getenv(name);
    long n = e ? atol(e) : 0;
    return n > 0 && n < 10000 ? (size_t)n : deflt;
}

static void screen_size(struct live *v)
{
    struct winsize ws = { 0 };
    if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0) ws.ws_col = ws.ws_row = 0;
    v->width = dimension("COLUMNS", ws.ws_col, 80);
    v->height = dimension("LINES", ws.ws_row, 24);
}

/* The next counter of the heap's that the profile has (dir +1 or -1). */
static void next_counter(struct live *v, int dir)
{
    int k[NSTACK_COUNTERS];
    int n = counter_list(v->counters ? v->counters : COUNTER_BIT(TIME) - 1, k), at = 0;
    for (int i = 0; i < n; i++) if (k[i] == v->c->out.by) at = i;
    v->c->out.by = k[(at + dir + n) % n];
}

/* A key: 1 when the frame must be drawn again, -1 to quit. */
static int key(struct live *v, const char *buf, size_t n)
{
    if (v->typing) {
        size_t len = strlen(v->typing);
        for (size_t i = 0; i < n; i++) {
            char ch = buf[i];
            if (ch == '\r' || ch == '\n') {
                regex_t re;
                const char *refused = *v->typing ? rules_regex_refused(v->typing) : NULL;
                if (refused) {
                    snprintf(v->status, sizeof v->status, "%s '%s'", refused, v->typing);
                } else if (*v->typing && regcomp(&re, v->typing, REG_EXTENDED | REG_NOSUB) != 0) {
                    snprintf(v->status, sizeof v->status, "bad filter regex '%s'", v->typing);
                } else {
                    if (*v->typing) regfree(&re);
                    snprintf(v->filter, sizeof v->filter, "%s", v->typing);
                    v->status[0] = 0;
                }
                free(v->typing), v->typing = NULL;
                return 1;
            }
            if (ch == 27) { free(v->typing), v->typing = NULL; return 1; }
            if ((ch == 127 || ch == 8) && len) v->typing[--len] = 0;
            else if ((unsigned char)ch >= 32 && ch != 127 && len + 1 < sizeof v->filter) {
                v->typing = xrealloc(v->typing, len + 2);
                v->typing[len++] = ch, v->typing[len] = 0;
            }
        }
        return 1;
    }
    if (n >= 3 && buf[0] == 27 && buf[1] == '[') {         /* arrows: left/down earlier, right/up later */
        if (buf[2] == 'D' || buf[2] == 'B') return key(v, "s", 1);
        if (buf[2] == 'C' || buf[2] == 'A') return key(v, "S", 1);
        return 0;
    }
    switch (buf[0]) {
    case 'q': case 'Q': return -1;
    case 'c': next_counter(v, 1); return 1;
    case 'C': next_counter(v, -1); return 1;
    case 's':
        if (v->fixed_snapshot) return 0;
        if (v->seq > 1) v->follow = 0, v->seq--;
        return 1;
    case 'S':
        if (v->fixed_snapshot) return 0;
        if (!v->follow && v->seq + 1 >= v->max_seq) v->follow = 1;
        else if (!v->follow) v->seq++;
        return 1;
    case '/': v->typing = xstrdup(""); return 1;
    }
    return 0;
}

/* The signals caught since the last call: 128 + N for SIGINT, SIGTERM or
 * SIGHUP (N), 2 for SIGWINCH (redraw, the screen cleared first: the old
 * frame's lines may be longer), else 0. */
static int signals_read(void)
{
    char sigs[16];
    ssize_t n = read(sig_pipe[0], sigs, sizeof sigs);
    int r = 0;
    for (ssize_t i = 0; i < n; i++) {
        if (sigs[i] != SIGWINCH) return 128 + sigs[i];
        r = 2;
    }
    return r;
}

/* The keys typed, one at a time (an arrow is 3 bytes): -1 to quit (q, or
 * the end of stdin), 1 to draw again, else 0. */
static int keys_read(struct live *v)
{
    char buf[64];
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n <= 0) return -1;
    int k = 0;
    for (ssize_t i = 0; i < n && k >= 0;) {
        size_t len = buf[i] == 27 && i + 2 < n && buf[i + 1] == '[' ? 3 : 1;
        int r = key(v, buf + i, len);
        k = r < 0 ? r : k | r;
        i += (ssize_t)len;
    }
    return k;
}

/* The screen until q or a signal; the exit code. pid_done (record --live):
 * called each turn, 1 once the program has ended. */
static int run_screen(struct live *v, double interval, int (*pid_done)(void *ctx), void *ctx)
{
    const char *tmpdir = getenv("TMPDIR");
    struct strbuf prefix = { 0 };
    sb_printf(&prefix, "%s/mpquery-live-err-", tmpdir && *tmpdir ? tmpdir : "/tmp");
    const char *errpath;
    char err[512];
    if (temp_create(prefix.s, &errpath, err, sizeof err)) return error(EXIT_FAILED, "live: %s", err);
    sb_free(&prefix);
    if (enter_terminal() != 0) return error(EXIT_FAILED, "live: cannot set up the terminal: %s", strerror(errno));
    int saved_err = dup(STDERR_FILENO);
    FILE *errs = freopen(errpath, "w+", stderr);
    int redraw = 1, rc = 0;
    for (;;) {
        if (pid_done && !v->done && pid_done(ctx)) v->done = 1, redraw = 1;
        if (file_changed(v)) {          /* a commit, or a problem to say */
            if (refresh_copy(v) == 0) v->status[0] = 0;
            redraw = 1;
        }
        else if (!v->have_copy && !*v->status) refresh_copy(v), redraw = 1;
        if (redraw) {
            if (redraw == 2 && write(STDOUT_FILENO, "\033[2J", 4) < 0) break;
            screen_size(v);
            frame(v, errs);
            ssize_t w = write(STDOUT_FILENO, v->screen.s, v->screen.len);
            (void)w;
            redraw = 0;
        }
        struct pollfd fds[2] = { { STDIN_FILENO, POLLIN, 0 }, { sig_pipe[0], POLLIN, 0 } };
        if (poll(fds, 2, (int)(interval * 1000)) < 0 && errno != EINTR) break;
        if (fds[1].revents & POLLIN) {
            int r = signals_read();
            if (r > 2) { rc = r; break; }
            if (r) redraw = r;
        }
        if (fds[0].revents & (POLLIN | POLLHUP)) {
            int k = keys_read(v);
            if (k < 0) break;
            if (k) redraw = 1;
        }
    }
    restore_terminal();
    if (saved_err >= 0) dup2(saved_err, STDERR_FILENO), close(saved_err);
    (void)errs;
    return rc;
}

/* ---------------------------------------------------------------- entry */

static void live_free(struct live *v)
{
    rows_done(v);
    rows_done(v);       /* the current rows became the previous: freed now */
    sb_free(&v->screen);
    sb_free(&v->good);
    free(v->typing);
}

static int live_view(struct common *c, const char *path, double interval, int once, int (*pid_done)(void *ctx), void *ctx,
              const char *done_note)
{
    struct live v = { .c = c, .path = path, .follow = 1, .prev_by = -1, .done_note = done_note };
    char err[512];
    const char *tmpdir = getenv("TMPDIR");
    struct strbuf prefix = { 0 };
    sb_printf(&prefix, "%s/mpquery-live-", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int rc = temp_create(prefix.s, &v.copy, err, sizeof err);
    if (!rc) rc = temp_create(prefix.s, &v.next, err, sizeof err);
    sb_free(&prefix);
    if (rc) return error(rc, "live: %s", err);
    c->out.human = 1, c->view.collapse = 1, c->view.no_signatures = 1;
    if (c->view.nfilter) snprintf(v.filter, sizeof v.filter, "%s", c->view.filter[0]);
    if (c->sel.snap_kind == SNAP_SEQ) v.follow = 0, v.seq = c->sel.snap_value;
    else if (c->sel.snap_kind != SNAP_LAST) v.follow = 0, v.fixed_snapshot = 1;
    if (once) {
        screen_size(&v);
        struct stat st;
        if (stat(path, &st) != 0) return error(EXIT_BAD_INPUT, "%s: %s (no snapshot written yet)", path, strerror(errno));
        if (refresh_copy(&v) != 0) return error(EXIT_BAD_INPUT, "%s", v.status);
        frame(&v, NULL);
        if (v.load_rc) return live_free(&v), v.load_rc;       /* said on stderr */
        /* the frame without the cursor's moves and the clearing of lines */
        struct strbuf out = { 0 };
        for (const char *s = v.screen.s + 3; *s;) {
            if (!strncmp(s, "\033[K", 3)) { s += 3; continue; }
            if (*s != '\r') sb_putc(&out, *s);
            s++;
        }
        sb_putc(&out, '\n');
        fwrite(out.s, 1, out.len, stdout);
        sb_free(&out);
        live_free(&v);
        return 0;
    }
    if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))
        return error(EXIT_BAD_INPUT, "live: stdout and stdin must be a terminal (--once prints one frame)");
    rc = run_screen(&v, interval, pid_done, ctx);
    live_free(&v);
    return rc;
}

static int live_main(int argc, char **argv, int (*pid_done)(void *ctx), void *ctx, const char *done_note)
{
    struct common c;
    char *interval_s = NULL;
    int once = 0;
    const struct opt opts[] = {
        OPTION_BY("sort by this counter (default memlive; the key c cycles):\n" COUNTER_HELP),
        { .name = "interval", .arg = "S", .str = &interval_s,
          .help = "seconds between looks at the file (default 1)" },
        { .name = "once", .flag = &once, .value = 1,
          .help = "print one frame to stdout and exit (scripts, tests)" },
        OPTIONS_FILTER,
        OPTIONS_SELECT_EACH,
        OPTIONS_RULES("apply a rules file after filters/default.rules (repeatable;\n"
                      "a bare NAME also finds filters/NAME.rules)"),
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "live", .usage = usage, .more = more, .opts = opts,
                                .operands = 1, .missing = "missing DB" };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    if (!c.out.by_given) c.out.by = MEMLIVE;
    double interval = 1;
    if (interval_s) {
        if (mp_parse_duration(interval_s, &interval) || !(interval >= 0.05) || interval > 3600)
            return bad_value("live", "--interval", interval_s, "seconds, 0.05 to 3600, or 500ms, 1m");
    }
    return live_view(&c, argv[optind], interval, once, pid_done, ctx, done_note);
}

int cmd_live(int argc, char **argv)
{
    return live_main(argc, argv, NULL, NULL, NULL);
}

int live_record(const char *path, int (*pid_done)(void *ctx), void *ctx, const char *done_note)
{
    char *argv[] = { "live", (char *)path, NULL };
    optind = 0;
    return live_main(2, argv, pid_done, ctx, done_note);
}
