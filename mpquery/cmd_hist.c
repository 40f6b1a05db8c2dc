/* mpquery hist DB: the size histogram (the seed MallocProfiler's memtot /
 * memlive histograms) of the selected processes at their selected
 * snapshots, summed: per log2 class lo <= size < hi, the allocations, their
 * bytes, and the blocks and bytes live; with --stack, those of one stack
 * (its threads summed). A text bar chart, csv or json. The recorder writes
 * the hist table at every snapshot (format version 2), the stack_hist
 * table's changed rows at every snapshot but the peak's (version 3): the
 * loader reads both (PROFILE_HISTS), from files or a --server store. */
#include "mpquery.h"
#include "profile.h"
#include "format.h"
#include "hists.h"
#include "load.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery hist DB... [options]\n"
"       mpquery hist --server URL [--where SQL] [options]\n"
"\n"
"The size histogram of the selected processes at their selected snapshots,\n"
"in log2 classes lo <= size < hi: allocations (ncalls), their bytes\n"
"(memtot), the blocks and bytes live (nlive, memlive). The size is the\n"
"requested one, or the allocator's in the cheap modes (mpquery info says\n"
"which: live bytes). The bars show the --by counter. With --stack ID, the\n"
"same for one stack (the stack column of top, fold's ids: mpquery show ID).\n"
"With --server URL, the runs of a ClickHouse store (mpquery push) instead\n"
"of files.\n"
"\n";

static const char more[] =
"\n"
"Text: sizes in units (1.21 MiB; --bytes: bytes), a bar of the --by counter\n"
"per class. csv and json: raw numbers, lo and hi in bytes.\n"
"\n"
"examples:\n"
"  mpquery hist app.db\n"
"  mpquery hist app.db --by memlive --snapshot label:after-load\n"
"  mpquery hist app.db --format json\n"
"  mpquery hist app.db --stack 1234 --by ncalls\n";

static char *stack_arg;

static const struct opt opts[] = {
    OPTIONS_SELECT(HELP_RUN "; --pid, --snapshot as in top (the\n"
                   "histogram is per process: --thread (a tid or a name\n"
                   "pattern) only with --stack)"),
    { .name = "stack", .arg = "ID", .str = &stack_arg,
      .help = "the histogram of this stack's blocks (not at the peak: the\n"
              "recorder keeps no per-stack histogram there)" },
    OPTION_BY("the bars' counter: ncalls, memtot (default), nlive or memlive"),
    OPTION_FORMAT("text (default), csv or json ({\"rows\": [{\"lo\", \"hi\", ...}]})"),
    { OPTG_VIEW, .name = "lines", .id = OPT_LINES, .advanced = 1,
      .help = "accepted as by every listing command (hist shows no frames)" },
    OPTIONS_READABLE,
    OPTIONS_SERVER_STORE,
    OPTIONS_SINCE_EITHER("the histogram"),
    { 0 },
};

#define NCLASS 65           /* size 0, then [2^(k-1), 2^k) */
static const char *const hist_cols[NH] = { "ncalls", "memtot", "nlive", "memlive" };

static unsigned class_of(int64_t lo) { return lo > 0 ? 64u - (unsigned)__builtin_clzll((uint64_t)lo) : 0; }
static uint64_t class_lo(unsigned k) { return k ? (uint64_t)1 << (k - 1) : 0; }
static uint64_t class_hi(unsigned k) { return k ? (k < 64 ? (uint64_t)1 << k : UINT64_MAX) : 1; }

/* 0, or the error that a histogram row has values no recorder writes (as
 * profile.c checks the samples): out of 0 to COUNTER_MAX, more blocks or
 * bytes live than allocated. */
static int check_row(const struct profile *p, int64_t stack, int64_t snapshot, int64_t thread, int64_t lo,
                     const int64_t *v)
{
    char why[160] = "";
    for (int c = 0; c < NH && !*why; c++)
        if (v[c] < 0 || v[c] > COUNTER_MAX)
            snprintf(why, sizeof why, "%s %lld is out of range (0 to 2^62)", hist_cols[c], (long long)v[c]);
    if (!*why && v[H_NLIVE] > v[H_NCALLS])
        snprintf(why, sizeof why, "nlive %lld > ncalls %lld", (long long)v[H_NLIVE], (long long)v[H_NCALLS]);
    if (!*why && v[H_MEMLIVE] > v[H_MEMTOT])
        snprintf(why, sizeof why, "memlive %lld > memtot %lld", (long long)v[H_MEMLIVE], (long long)v[H_MEMTOT]);
    if (!*why) return 0;
    if (stack)
        return error(EXIT_BAD_INPUT, "%s: corrupt profile (table stack_hist, row stack %lld thread %lld lo %lld, at "
                     "snapshot %lld: %s)", p->path, (long long)stack, (long long)thread, (long long)lo,
                     (long long)snapshot, why);
    return error(EXIT_BAD_INPUT, "%s: corrupt profile (table hist, row snapshot %lld lo %lld: %s)", p->path,
                 (long long)snapshot, (long long)lo, why);
}

/* A row into its class, checked first; 0 or the exit code. */
static int add_row(const struct profile *p, int64_t stack, int64_t snapshot, int64_t thread, int64_t lo,
                   const int64_t *v, int64_t (*h)[NH])
{
    int rc = check_row(p, stack, snapshot, thread, lo, v);
    unsigned k = class_of(lo);
    for (int c = 0; c < NH && !rc; c++) h[k][c] = sat_add(h[k][c], v[c]);
    return rc;
}

/* The process's classes at snapshot snap: its hist rows. */
static int process_classes(const struct profile *p, uint32_t snap, int64_t (*h)[NH])
{
    int rc = 0;
    for (size_t i = 0; i < p->nhists && !rc; i++)
        if (p->hists[i].snapshot == snap)
            rc = add_row(p, 0, p->snapshots[snap].id, 0, p->hists[i].lo, p->hists[i].v, h);
    return rc;
}

/* The rows of one stack: its stack_hist rows and its sample rows, as
 * indexes, each list in the order of the file. */
struct stack_rows { uint32_t stack, *hist, *sample; size_t nhist, nsample; };

static void stack_rows_of(const struct profile *p, uint32_t stack, struct stack_rows *r)
{
    size_t cap = 0;
    *r = (struct stack_rows){ .stack = stack };
    for (size_t i = 0; i < p->nstack_hists; i++)
        if (p->stack_hists[i].stack == stack && p->stack_hists[i].snapshot != NONE && p->stack_hists[i].thread != NONE) {
            r->hist = array_grow(r->hist, r->nhist, &cap, sizeof *r->hist);
            r->hist[r->nhist++] = (uint32_t)i;
        }
    cap = 0;
    for (size_t i = 0; i < p->nsamples; i++)
        if (p->samples[i].stack == stack) {
            r->sample = array_grow(r->sample, r->nsample, &cap, sizeof *r->sample);
            r->sample[r->nsample++] = (uint32_t)i;
        }
}

/* Whether snapshot index s is in the chain up to snapshot id at (not a peak, id <= at). */
static int in_chain(const struct profile *p, uint32_t s, int64_t at)
{
    return !p->snapshots[s].peak && p->snapshots[s].id <= at;
}

/* Per thread and class, the newest stack_hist row at or before the
 * snapshot (id at) of the process's threads. */
static int stack_hist_classes(const struct profile *p, const struct selection *sel, const struct stack_rows *r,
                              uint32_t proc, int64_t at, int64_t (*h)[NH])
{
    int rc = 0;
    for (size_t i = 0; i < r->nhist && !rc; i++) {
        const struct stack_hist_row *x = &p->stack_hists[r->hist[i]];
        if (p->threads[x->thread].process != proc || !in_chain(p, x->snapshot, at)) continue;
        int newest = 1;
        for (size_t j = 0; j < r->nhist && newest; j++) {
            const struct stack_hist_row *y = &p->stack_hists[r->hist[j]];
            newest = y->thread != x->thread || y->lo != x->lo || !in_chain(p, y->snapshot, at) ||
                     p->snapshots[y->snapshot].id <= p->snapshots[x->snapshot].id;
        }
        if (newest && sel->thread_ok[x->thread])
            rc = add_row(p, p->stacks[r->stack].id, at, p->threads[x->thread].id, x->lo, x->v, h);
    }
    return rc;
}

/* A thread of the process without stack_hist rows at or before the
 * snapshot allocated in one class, that of its mean size: its newest
 * sample row's values. */
static int one_class(const struct profile *p, const struct stack_rows *r, uint32_t thread, int64_t at,
                     int64_t (*h)[NH])
{
    for (size_t i = 0; i < r->nhist; i++)
        if (p->stack_hists[r->hist[i]].thread == thread && p->snapshots[p->stack_hists[r->hist[i]].snapshot].id <= at)
            return 0;
    const struct sample *newest = NULL;
    for (size_t i = 0; i < r->nsample; i++) {
        const struct sample *sa = &p->samples[r->sample[i]];
        if (sa->thread == thread && in_chain(p, sa->snapshot, at) &&
            (!newest || p->snapshots[sa->snapshot].id > p->snapshots[newest->snapshot].id))
            newest = sa;
    }
    if (!newest || newest->c.v[NCALLS] <= 0) return 0;
    const int64_t *c = newest->c.v;
    const int64_t v[NH] = { [H_NCALLS] = c[NCALLS], [H_MEMTOT] = c[MEMTOT], [H_NLIVE] = c[NCALLS] - c[NFREE],
                            [H_MEMLIVE] = c[MEMLIVE] };
    return add_row(p, p->stacks[r->stack].id, at, p->threads[thread].id, c[MEMTOT] / c[NCALLS], v, h);
}

/* Sums the classes of each selected process at its selected snapshot: the
 * process's (the hist table), or with a stack, that stack's (stack_hist:
 * per thread and class, the newest row at or before the snapshot, peak
 * snapshots having none; a thread without rows allocated from the stack in
 * one class, that of its mean size, and its sample row has the values),
 * of the selected threads (--thread). */
static int classes_at(const struct profile *p, const struct selection *sel, const struct stack_rows *r,
                      int64_t stack, uint32_t proc, uint32_t snap, int64_t (*h)[NH])
{
    const struct snapshot *sn = &p->snapshots[snap];
    if (!stack) return process_classes(p, snap, h);
    if (sn->peak)
        return error(EXIT_BAD_INPUT, "%s: --stack: no per-stack histogram at the peak (snapshot %lld of process "
                     "%lld); select another snapshot", p->path, (long long)sn->seq, (long long)p->procs[proc].pid);
    int rc = stack_hist_classes(p, sel, r, proc, sn->id, h);
    for (uint32_t t = 0; t < p->nthreads && !rc; t++)
        if (p->threads[t].process == proc && sel->thread_ok[t]) rc = one_class(p, r, t, sn->id, h);
    return rc;
}

/* A time window (--since, --until): each process's classes at the
 * window's end less those at its start (select.c's snapshots), as top
 * reads every counter: the calls and bytes allocated in it exactly, the
 * live blocks and bytes their growth. */
static int read_classes(const struct profile *p, const struct selection *sel, int64_t stack, int64_t (*h)[NH])
{
    int since = format_tables[stack ? FT_stack_hist : FT_hist].col[0].since;
    if (p->version < since)
        return error(EXIT_BAD_INPUT, "%s: no %s in this profile (format version %d: recorded before them)", p->path,
                     stack ? "per-stack histograms" : "size histogram", p->version);
    struct stack_rows r = { 0 };
    if (stack) stack_rows_of(p, profile_stack_index(p, stack), &r);
    int rc = 0;
    for (size_t i = 0; i < p->nprocs && !rc; i++) {
        if (sel->proc_snapshot[i] == NONE) continue;
        rc = classes_at(p, sel, &r, stack, (uint32_t)i, sel->proc_snapshot[i], h);
        if (rc || !sel->proc_since || sel->proc_since[i] == NONE) continue;
        int64_t before[NCLASS][NH];
        memset(before, 0, sizeof before);
        rc = classes_at(p, sel, &r, stack, (uint32_t)i, sel->proc_since[i], before);
        for (unsigned k = 0; k < NCLASS; k++)
            for (int c = 0; c < NH; c++) h[k][c] -= before[k][c];
    }
    free(r.hist);
    free(r.sample);
    return rc;
}

/* "[16, 32)", "[1K, 2K)": the class's bounds, in binary units. */
static void size_human(uint64_t v, char *buf, size_t size)
{
    static const char *const units[] = { "", "K", "M", "G", "T", "P", "E" };
    int u = 0;
    while (u < 6 && v >= 1024 && v % 1024 == 0) v /= 1024, u++;
    snprintf(buf, size, "%llu%s", (unsigned long long)v, units[u]);
}

static void class_label(unsigned k, char *buf, size_t size)
{
    char lo[24], hi[24];
    size_human(class_lo(k), lo, sizeof lo);
    if (k < 64) size_human(class_hi(k), hi, sizeof hi);
    else snprintf(hi, sizeof hi, "16E");
    snprintf(buf, size, "[%s, %s)", lo, hi);
}

/* Text: a row a class, its counters (sizes in units unless --bytes), the
 * bar of the --by counter last: BAR_MAX '#' for the largest, or on a
 * terminal what its width leaves (at least BAR_MIN). */
enum { BAR_MAX = 40, BAR_MIN = 10 };
static void print_text(int64_t (*h)[NH], int by, int human, size_t width)
{
    static const int counter[NH] = { [H_NCALLS] = NCALLS, [H_MEMTOT] = MEMTOT, [H_NLIVE] = NLIVE,
                                     [H_MEMLIVE] = MEMLIVE };
    const char *cols[] = { "size", "ncalls", "memtot", "nlive", "memlive", hist_cols[by] };
    int64_t max = 0;
    for (unsigned k = 0; k < NCLASS; k++) if (h[k][by] > max) max = h[k][by];
    struct table tab;
    table_init(&tab, 6, cols);
    char label[64];
    unsigned row_class[NCLASS];         /* per row, its size class */
    for (unsigned k = 0; k < NCLASS; k++) {
        if (!h[k][H_NCALLS] && !h[k][H_NLIVE]) continue;
        row_class[tab.nrows] = k;
        class_label(k, label, sizeof label);
        table_str(&tab, label);
        for (int c = 0; c < NH; c++) table_counter(&tab, counter[c], h[k][c], human);
        table_str(&tab, "");            /* the bar, once the room is known */
    }
    size_t room = BAR_MAX, used = table_columns_before(&tab, 5);
    if (width) room = width > used + BAR_MAX ? BAR_MAX : width > used + BAR_MIN ? width - used : BAR_MIN;
    for (size_t r = 0; r < tab.nrows; r++) {
        unsigned k = row_class[r];
        size_t n = max > 0 && h[k][by] > 0 ? (size_t)ceil((double)h[k][by] * (double)room / (double)max) : 0;
        struct cell *x = &tab.cells[r * tab.ncols + 5];
        free(x->s);
        x->s = xmalloc(n + 1);
        memset(x->s, '#', n);
        x->s[n] = 0;
    }
    table_print(&tab, FMT_TEXT, stdout);
    table_free(&tab);
}

static void fill_table(int64_t (*h)[NH], struct table *tab)
{
    static const char *const cols[] = { "lo", "hi", "ncalls", "memtot", "nlive", "memlive" };
    table_init(tab, 6, cols);
    for (unsigned k = 0; k < NCLASS; k++) {
        if (!h[k][H_NCALLS] && !h[k][H_NLIVE]) continue;
        table_int(tab, (int64_t)class_lo(k));
        if (class_hi(k) > INT64_MAX) table_null(tab);
        else table_int(tab, (int64_t)class_hi(k));
        for (int c = 0; c < NH; c++) table_int(tab, h[k][c]);
    }
}

int cmd_hist(int argc, char **argv)
{
    struct common c;
    const struct cmd_opts d = { .cmd = "hist", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing DB", .readable = 1, .since_runs = 1 };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    c.sel.window_quiet = c.out.format == FMT_CSV || c.out.format == FMT_JSON || mpquery_quiet;
    int64_t stack = 0;
    if (stack_arg && (parse_int64(stack_arg, &stack) || stack < 1))
        return usage_error("hist", "--stack %s: a stack id (a number >= 1, as top shows)", stack_arg);
    if (stack_arg && c.server.url)
        return usage_error("hist", "--stack: the histogram of one stack is read from files, not with --server");
    if ((c.sel.has_tid || c.sel.thread_re) && !stack_arg)
        return usage_error("hist", "the histogram is per process: --thread applies only with --stack");
    int by = c.out.by == NCALLS ? H_NCALLS : c.out.by == NLIVE ? H_NLIVE : c.out.by == MEMLIVE ? H_MEMLIVE
           : c.out.by == MEMTOT || c.out.by < 0 ? H_MEMTOT : -1;
    if (by < 0) return usage_error("hist", "--by %s: the histogram has ncalls, memtot, nlive and memlive",
                                   counter_name[c.out.by]);
    struct profile *p;
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    if ((rc = load_selected(&c, &files, -1, PROFILE_HISTS, &p))) return rc;
    struct selection sel;
    int64_t h[NCLASS][NH];
    memset(h, 0, sizeof h);
    if (!(rc = select_or_report(&c, p, &sel)) && stack_arg && profile_stack_index(p, stack) == NONE)
        rc = error(EXIT_BAD_INPUT, "%s: no stack %lld", p->path, (long long)stack);
    if (!rc && !(rc = read_classes(p, &sel, stack, h))) {
        if (c.out.format == FMT_TEXT) {
            print_text(h, by, c.out.human, c.out.width);
        } else {
            struct table tab;
            fill_table(h, &tab);
            if (c.out.format == FMT_CSV) table_print(&tab, FMT_CSV, stdout);
            else {
                struct json w;
                json_init(&w, stdout);
                json_open(&w, '{');
                json_rows_last(&w, "rows", &tab);
            }
            table_free(&tab);
        }
    }
    selection_free(&sel);
    profile_free(p);
    return rc;
}
