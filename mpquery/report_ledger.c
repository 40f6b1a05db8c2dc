/* The report's resident memory section: per process with a ledger (table
 * ledger, format version 5; at most LEDGER_PROCS, the largest RSS first),
 * the ledger at the selected snapshot (or the latest with one before it)
 * as a stacked bar with its table, and its lines over the process's
 * snapshots as stacked areas under the RSS line. Inline SVG, no
 * namespace (report_page.c's rules); nothing at all without a ledger. */
#include "ledger.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>

#define LEDGER_PROCS 6
#define NPARTS (LEDGER_NLINES - 1)      /* the lines but rss, in ledger_lines' order */
static const char *const colors[NPARTS] = {
    "#2b6cb0", "#63b3ed", "#bee3f8", "#dd6b20", "#f6ad55", "#805ad5", "#38a169", "#a0aec0", "#e53e3e",
};

/* One snapshot's ledger: the parts' resident bytes and sizes, and rss
 * and its size (the process's virtual size: every VMA's). */
struct ledger_at { uint32_t snapshot; int64_t bytes[NPARTS], size[NPARTS], rss, rss_size; };

static int part_of(const char *line)
{
    for (int i = 0; i < NPARTS; i++) if (!strcmp(ledger_lines[i], line)) return i;
    return -1;
}

/* The process's ledgers, by snapshot seq (malloc'd; how many). */
static size_t ledgers_of(const struct profile *p, uint32_t proc, struct ledger_at **out)
{
    const struct process *pr = &p->procs[proc];
    struct ledger_at *l = xcalloc(pr->nsnapshots + 1, sizeof *l);
    size_t n = 0;
    for (uint32_t s = pr->first_snapshot; s < pr->first_snapshot + pr->nsnapshots; s++) {
        struct ledger_at a = { .snapshot = s };
        int any = 0;
        for (size_t i = 0; i < p->nledger; i++) {
            const struct ledger_row *r = &p->ledger[i];
            if (r->snapshot != s) continue;
            any = 1;
            int k = part_of(r->line);
            if (k >= 0) a.bytes[k] = r->bytes, a.size[k] = r->size;
            else if (!strcmp(r->line, "rss")) a.rss = r->bytes, a.rss_size = r->size;
        }
        if (any) l[n++] = a;
    }
    *out = l;
    return n;
}

int report_has_ledger(const struct report *r)
{
    for (size_t i = 0; i < r->p->nledger; i++)
        if (r->p->ledger[i].snapshot != NONE) return 1;
    return 0;
}

/* The ledger shown for process proc: at its selected snapshot, else the
 * latest before it, else its latest. */
static const struct ledger_at *shown(const struct report *r, uint32_t proc, const struct ledger_at *l, size_t n)
{
    uint32_t sel = r->q->sel.proc_snapshot[proc];
    int64_t seq = sel == NONE ? INT64_MAX : r->p->snapshots[sel].seq;
    const struct ledger_at *best = &l[n - 1];
    for (size_t i = 0; i < n; i++)
        if (r->p->snapshots[l[i].snapshot].seq <= seq) best = &l[i];
    return best;
}

static void bar(struct page *pg, const struct ledger_at *a)
{
    const int W = 800, H = 26;
    char h[64];
    int64_t total = 0;
    for (int k = 0; k < NPARTS; k++) total += a->bytes[k] > 0 ? a->bytes[k] : 0;
    fprintf(pg->f, "<svg class=\"ledger-bar\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", W, H, W, H);
    double x = 0;
    for (int k = 0; k < NPARTS && total > 0; k++) {
        if (a->bytes[k] <= 0) continue;
        double w = (double)W * (double)a->bytes[k] / (double)total;
        fprintf(pg->f, "<rect data-line=\"%s\" x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>",
                ledger_lines[k], x, w, H, colors[k]);
        page_text(pg, ledger_lines[k]);
        fprintf(pg->f, ": %s</title></rect>\n", fmt_human(MEMLIVE, a->bytes[k], h, sizeof h));
        x += w;
    }
    fputs("</svg>\n", pg->f);
}

static void table(struct page *pg, const struct ledger_at *a)
{
    page_table_start(pg);
    page_th(pg, "line", 0, 0, NULL);
    page_th(pg, "resident", 1, 1, "bytes in RAM");
    page_th(pg, "share of rss", 0, 0, NULL);
    page_th(pg, "size", 1, 0, "virtual: the bytes mapped, or the allocator's");
    page_table_body(pg);
    for (int k = 0; k <= NPARTS; k++) {
        int64_t v = k < NPARTS ? a->bytes[k] : a->rss;
        fputs("<tr><td>", pg->f);
        if (k < NPARTS) fprintf(pg->f, "<span class=\"swatch\" style=\"background:%s\"></span>", colors[k]);
        page_text(pg, k < NPARTS ? ledger_lines[k] : "rss");
        fputs("</td>", pg->f);
        page_td(pg, MEMLIVE, v, 1);
        page_share(pg, v, a->rss);
        page_td(pg, MEMLIVE, k < NPARTS ? a->size[k] : a->rss_size, 0);
        fputs("</tr>\n", pg->f);
    }
    page_table_end(pg);
}

/* The lines over the snapshots: stacked areas (negative parts as 0),
 * the rss as a black line; x is the snapshot's time. */
static void over_time(struct page *pg, const struct profile *p, const struct ledger_at *l, size_t n)
{
    const int W = 800, H = 220, L = 60, B = 20;
    char h[64];
    double t0 = p->snapshots[l[0].snapshot].time, t1 = p->snapshots[l[n - 1].snapshot].time;
    int64_t top = 1;
    for (size_t i = 0; i < n; i++) {
        int64_t sum = 0;
        for (int k = 0; k < NPARTS; k++) sum += l[i].bytes[k] > 0 ? l[i].bytes[k] : 0;
        if (sum > top) top = sum;
        if (l[i].rss > top) top = l[i].rss;
    }
#define X(i) (L + (t1 > t0 ? (p->snapshots[l[i].snapshot].time - t0) / (t1 - t0) : (double)(i) / (double)(n - 1)) * (W - L - 10))
#define Y(v) (H - B - (double)(v) / (double)top * (H - B - 10))
    fprintf(pg->f, "<svg class=\"ledger-time\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", W, H, W, H);
    int64_t *below = xcalloc(n, sizeof *below);
    for (int k = 0; k < NPARTS; k++) {
        fprintf(pg->f, "<polygon data-line=\"%s\" fill=\"%s\" points=\"", ledger_lines[k], colors[k]);
        for (size_t i = 0; i < n; i++)
            fprintf(pg->f, "%.1f,%.1f ", X(i), Y(below[i] + (l[i].bytes[k] > 0 ? l[i].bytes[k] : 0)));
        for (size_t i = n; i-- > 0;) fprintf(pg->f, "%.1f,%.1f ", X(i), Y(below[i]));
        fputs("\"><title>", pg->f);
        page_text(pg, ledger_lines[k]);
        fputs("</title></polygon>\n", pg->f);
        for (size_t i = 0; i < n; i++) below[i] += l[i].bytes[k] > 0 ? l[i].bytes[k] : 0;
    }
    free(below);
    fputs("<polyline data-line=\"rss\" fill=\"none\" stroke=\"#000\" stroke-width=\"1.5\" points=\"", pg->f);
    for (size_t i = 0; i < n; i++) fprintf(pg->f, "%.1f,%.1f ", X(i), Y(l[i].rss));
    fputs("\"><title>rss</title></polyline>\n", pg->f);
    fprintf(pg->f, "<text x=\"%d\" y=\"14\" text-anchor=\"end\" font-size=\"11\">%s</text>\n", L - 4,
            fmt_human(MEMLIVE, top, h, sizeof h));
    fprintf(pg->f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\">0</text>\n", L - 4, H - B);
    fprintf(pg->f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">0 s</text>\n", L, H - 4);
    fprintf(pg->f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\">%.1f s</text>\n", W - 10, H - 4, t1 - t0);
    fputs("</svg>\n", pg->f);
#undef X
#undef Y
}

static int64_t latest_rss(const struct ledger_at *l, size_t n) { return n ? l[n - 1].rss : 0; }

void report_write_ledger(struct report *r)
{
    if (!report_has_ledger(r)) return;
    struct page *pg = &r->pg;
    const struct profile *p = r->p;
    page_section(pg, "rss", "Resident memory");
    /* the processes with a ledger, the largest RSS first */
    struct { uint32_t proc; struct ledger_at *l; size_t n; } shownp[LEDGER_PROCS];
    size_t nshown = 0, nwith = 0;
    for (size_t i = 0; i < r->nprocs; i++) {
        struct ledger_at *l;
        size_t n = ledgers_of(p, r->procs[i], &l);
        if (!n) { free(l); continue; }
        nwith++;
        size_t at = nshown < LEDGER_PROCS ? nshown++ : LEDGER_PROCS;
        if (at == LEDGER_PROCS && latest_rss(l, n) <= latest_rss(shownp[LEDGER_PROCS - 1].l, shownp[LEDGER_PROCS - 1].n)) {
            free(l);
            continue;
        }
        if (at == LEDGER_PROCS) free(shownp[--at].l);
        while (at > 0 && latest_rss(shownp[at - 1].l, shownp[at - 1].n) < latest_rss(l, n)) shownp[at] = shownp[at - 1], at--;
        shownp[at].proc = r->procs[i], shownp[at].l = l, shownp[at].n = n;
    }
    for (size_t i = 0; i < nshown; i++) {
        const struct process *pr = &p->procs[shownp[i].proc];
        const struct ledger_at *a = shown(r, shownp[i].proc, shownp[i].l, shownp[i].n);
        fprintf(pg->f, "<h3>pid %lld ", (long long)pr->pid);
        page_text(pg, pr->exe);
        fprintf(pg->f, ", snapshot %lld (", (long long)p->snapshots[a->snapshot].seq);
        page_text(pg, p->snapshots[a->snapshot].reason);
        fputs(")</h3>\n<div class=\"plot\">\n", pg->f);
        bar(pg, a);
        fputs("</div>\n", pg->f);
        table(pg, a);
        if (shownp[i].n > 1) {
            fputs("<div class=\"plot\">\n", pg->f);
            over_time(pg, p, shownp[i].l, shownp[i].n);
            fputs("</div>\n", pg->f);
        }
        free(shownp[i].l);
    }
    fputs("<p class=\"note\">Where each process's resident memory went (mpquery rss): the ledger the recorder writes "
          "at every snapshot, from /proc/self/smaps, mallinfo2 and its own figures; its lines add up to the RSS, "
          "'unexplained' taking the rest. Above, at the selected snapshot; below, over the process's snapshots "
          "(stacked, the RSS as the black line). A line's size is its virtual or allocator bytes, the rss row's "
          "the process's virtual size. The profiler's resident bytes can exceed its size: its size counts "
          "the memory it maps for itself (MP_MAX_MEMORY's) and its malloc'd bytes, while its resident bytes "
          "also cover its threads' stacks and the files its libraries map while it works (libdw's debug "
          "info, SQLite's).", pg->f);
    if (nwith > nshown) fprintf(pg->f, " %zu processes of %zu shown: the largest.", nshown, nwith);
    fputs("</p>\n</section>\n", pg->f);
}
