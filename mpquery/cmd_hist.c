/* mpquery hist DB: the size histogram (the seed MallocProfiler's memtot /
 * memlive histograms) of the selected processes at their selected
 * snapshots, summed: per log2 class lo <= size < hi, the allocations, their
 * bytes, and the blocks and bytes live; with --stack, those of one stack
 * (its threads summed). A text bar chart, csv or json. The recorder writes
 * the hist table at every snapshot (format version 2), the stack_hist
 * table's changed rows at every snapshot but the peak's (version 3). */
#include "mpquery.h"
#include "commands.h"
#include "load.h"
#include "options.h"
#include "output.h"
#include "select.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery hist DB... [options]\n"
"\n"
"The size histogram of the selected processes at their selected snapshots,\n"
"in log2 classes lo <= size < hi: allocations (ncalls), their bytes\n"
"(memtot), the blocks and bytes live (nlive, memlive). The size is the\n"
"requested one, or the allocator's in the cheap modes (mpquery info says\n"
"which: live bytes). The bars show the --by counter. With --stack ID, the\n"
"same for one stack (the stack column of top, fold's ids: mpquery show ID).\n"
"\n";

static const char more[] =
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
    { 0 },
};

#define NCLASS 65           /* size 0, then [2^(k-1), 2^k) */
enum { H_NCALLS, H_MEMTOT, H_NLIVE, H_MEMLIVE, NH };
static const char *const hist_cols[NH] = { "ncalls", "memtot", "nlive", "memlive" };

static unsigned class_of(int64_t lo) { return lo > 0 ? 64u - (unsigned)__builtin_clzll((uint64_t)lo) : 0; }
static uint64_t class_lo(unsigned k) { return k ? (uint64_t)1 << (k - 1) : 0; }
static uint64_t class_hi(unsigned k) { return k ? (k < 64 ? (uint64_t)1 << k : UINT64_MAX) : 1; }

static void bind(sqlite3_stmt *st, const char *name, int64_t v)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i) sqlite3_bind_int64(st, i, v);
}

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

/* Sums the classes of each selected process at its selected snapshot: the
 * process's (the hist table), or with a stack, that stack's (stack_hist:
 * per thread and class, the newest row at or before the snapshot, peak
 * snapshots having none; a thread without rows allocated from the stack in
 * one class, that of its mean size, and its sample row has the values),
 * of the selected threads (--thread). The first column is a size in the
 * class, the last the thread's id. */
static int read_classes(const struct profile *p, const struct selection *sel, int64_t stack, int64_t (*h)[NH])
{
    static const char process_sql[] = "SELECT lo, ncalls, memtot, nlive, memlive, 0 FROM hist WHERE snapshot = :snapshot";
    static const char stack_sql[] =
        "SELECT sh.lo, sh.ncalls, sh.memtot, sh.nlive, sh.memlive, sh.thread FROM stack_hist sh"
        " JOIN thread th ON th.id = sh.thread"
        " WHERE sh.stack = :stack AND th.process = :process"
        " AND sh.snapshot = (SELECT MAX(s2.snapshot) FROM stack_hist s2 JOIN snapshot n2 ON n2.id = s2.snapshot"
        "   WHERE s2.stack = sh.stack AND s2.thread = sh.thread AND s2.lo = sh.lo"
        "   AND n2.reason != 'peak' AND s2.snapshot <= :snapshot)"
        " UNION ALL"
        " SELECT sa.memtot / sa.ncalls, sa.ncalls, sa.memtot, sa.ncalls - sa.nfree, sa.memlive, sa.thread FROM sample sa"
        " JOIN thread th ON th.id = sa.thread"
        " WHERE sa.stack = :stack AND th.process = :process AND sa.ncalls > 0"
        " AND sa.snapshot = (SELECT MAX(s2.snapshot) FROM sample s2 JOIN snapshot n2 ON n2.id = s2.snapshot"
        "   WHERE s2.stack = sa.stack AND s2.thread = sa.thread AND n2.reason != 'peak' AND s2.snapshot <= :snapshot)"
        " AND NOT EXISTS (SELECT 1 FROM stack_hist sh WHERE sh.stack = sa.stack AND sh.thread = sa.thread"
        "   AND sh.snapshot <= :snapshot)";
    struct idmap thread_of;             /* database thread id → index */
    idmap_init(&thread_of, p->nthreads);
    for (size_t t = 0; t < p->nthreads; t++) {
        int created;
        *idmap_put(&thread_of, (uint64_t)p->threads[t].id, &created) = (uint32_t)t;
    }
    sqlite3 *db;
    char err[1024];
    int rc = profile_open_db(p->db_path, &db, 0, err, sizeof err);
    if (rc) {
        idmap_free(&thread_of);
        return error(rc, "%s: %s", p->path, err);
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, stack ? stack_sql : process_sql, -1, &st, NULL) != SQLITE_OK) {
        idmap_free(&thread_of);
        sqlite3_close(db);
        return error(EXIT_BAD_INPUT, "%s: no %s in this profile (format version %d: recorded before them)", p->path,
                     stack ? "per-stack histograms" : "size histogram", p->version);
    }
    for (size_t i = 0; i < p->nprocs && !rc; i++) {
        if (sel->proc_snapshot[i] == NONE) continue;
        const struct snapshot *sn = &p->snapshots[sel->proc_snapshot[i]];
        if (stack && sn->peak) {
            rc = error(EXIT_BAD_INPUT, "%s: --stack: no per-stack histogram at the peak (snapshot %lld of process "
                       "%lld); select another snapshot", p->path, (long long)sn->seq, (long long)p->procs[i].pid);
            break;
        }
        bind(st, ":snapshot", sn->id), bind(st, ":stack", stack), bind(st, ":process", p->procs[i].id);
        int bad = 0;
        while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            uint32_t t = stack ? idmap_get(&thread_of, (uint64_t)sqlite3_column_int64(st, 5)) : NONE;
            if (stack && (t == NONE || !sel->thread_ok[t])) continue;
            int64_t lo = sqlite3_column_int64(st, 0), v[NH];
            for (int c = 0; c < NH; c++) v[c] = sqlite3_column_int64(st, 1 + c);
            if ((bad = check_row(p, stack, sn->id, sqlite3_column_int64(st, 5), lo, v))) break;
            unsigned k = class_of(lo);
            for (int c = 0; c < NH; c++) h[k][c] = sat_add(h[k][c], v[c]);
        }
        rc = bad ? bad : rc == SQLITE_DONE ? 0 : error(EXIT_FAILED, "%s: %s", p->path, sqlite3_errmsg(db));
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    idmap_free(&thread_of);
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

static void print_text(int64_t (*h)[NH], int by)
{
    int64_t max = 0;
    for (unsigned k = 0; k < NCLASS; k++) if (h[k][by] > max) max = h[k][by];
    printf("%-12s %12s %14s %12s %14s  %s\n", "size", "ncalls", "memtot", "nlive", "memlive", hist_cols[by]);
    for (unsigned k = 0; k < NCLASS; k++) {
        if (!h[k][H_NCALLS] && !h[k][H_NLIVE]) continue;
        char label[64];
        class_label(k, label, sizeof label);
        int bar = max > 0 ? (int)ceil((double)h[k][by] * 40 / (double)max) : 0;
        printf("%-12s %12lld %14lld %12lld %14lld  ", label, (long long)h[k][H_NCALLS], (long long)h[k][H_MEMTOT],
               (long long)h[k][H_NLIVE], (long long)h[k][H_MEMLIVE]);
        for (int i = 0; i < bar; i++) fputs("#", stdout);
        putchar('\n');
    }
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
                                .missing = "missing DB" };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    int64_t stack = 0;
    if (stack_arg && (parse_int64(stack_arg, &stack) || stack < 1))
        return usage_error("hist", "--stack %s: a stack id (a number >= 1, as top shows)", stack_arg);
    if ((c.sel.has_tid || c.sel.thread_re) && !stack_arg)
        return usage_error("hist", "the histogram is per process: --thread applies only with --stack");
    int by = c.out.by == NCALLS ? H_NCALLS : c.out.by == NLIVE ? H_NLIVE : c.out.by == MEMLIVE ? H_MEMLIVE
           : c.out.by == MEMTOT || c.out.by < 0 ? H_MEMTOT : -1;
    if (by < 0) return usage_error("hist", "--by %s: the histogram has ncalls, memtot, nlive and memlive",
                                   counter_name[c.out.by]);
    struct profile *p;
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    if ((rc = load_profiles(&files, 0, &p))) return rc;       /* hist and stack_hist rows, not samples */
    struct selection sel;
    int64_t h[NCLASS][NH];
    memset(h, 0, sizeof h);
    if (!(rc = select_or_report(&c, p, &sel)) && stack_arg && profile_stack_index(p, stack) == NONE)
        rc = error(EXIT_BAD_INPUT, "%s: no stack %lld", p->path, (long long)stack);
    if (!rc && !(rc = read_classes(p, &sel, stack, h))) {
        if (c.out.format == FMT_TEXT) {
            print_text(h, by);
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
