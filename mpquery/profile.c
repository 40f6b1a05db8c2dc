/* The only SQL reader of mpquery. profile_load reads a profile database
 * into arrays with ONE sequential pass per table (no per-row queries), then
 * translates every database id into a dense array index and checks each
 * reference, so the rest of mpquery never sees an id it cannot index. The
 * tables and their columns are the format's (prof/format.h). The database
 * is opened by profile_open.c (checked, read-only) and never written here;
 * the reads of symbolize, which opens it read-write and writes through
 * profile_write.c, and of record are at the end. Every sqlite return is
 * checked: a truncated or corrupted file is an error message, never a
 * crash. (The sql command runs the user's own statement, read-only.) */
#include "mpquery.h"
#include "profile.h"
#include "ledger.h"
#include "profile_link.h"
#include "symdb.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- tables */
/* How one column (FC_<table>_<column>, prof/format.h) lands in a row
 * struct. *_NULL: -1 when the column is NULL. A column that a later format
 * version added is read in older files as its DEFAULT, never selected where
 * it is not. */
enum { COL_I64, COL_I32, COL_F64, COL_TEXT, COL_I64_NULL, COL_F64_NULL };
struct col { int column; int type; size_t offset; };
#define COL(type, row, field, table, column) { FC_##table##_##column, COL_##type, offsetof(row, field) }

/* One full-table read: SELECT the columns FROM table [ORDER BY order], each
 * row into a struct of `size` bytes; or, with convert, read into a raw row
 * first and converted into a struct of `stored` bytes. */
struct loader;
struct table_spec {
    enum format_table table;
    const char *order;
    const struct col *cols; size_t ncols;
    size_t size, stored;
    void (*convert)(struct loader *l, const void *raw, void *stored);
};
#define SPEC(table, order, cols, row) \
    { FT_##table, order, cols, sizeof cols / sizeof *cols, sizeof(row), sizeof(row), NULL }
#define SPEC_CONVERT(table, cols, raw, stored, convert) \
    { FT_##table, NULL, cols, sizeof cols / sizeof *cols, sizeof(raw), sizeof(stored), convert }
#define RAW_MAX 160                 /* the largest raw row of a converted table */

static const struct col run_cols[] = {
    COL(I64, struct run, id, run, id), COL(TEXT, struct run, token, run, token),
    COL(F64, struct run, start_time, run, start_time),
};
static const struct col process_cols[] = {
    COL(I64, struct process, id, process, id), COL(F64, struct process, start_time, process, start_time),
    COL(F64_NULL, struct process, end_time, process, end_time), COL(I64, struct process, pid, process, pid),
    COL(I64, struct process, ppid, process, ppid), COL(TEXT, struct process, exe, process, exe),
    COL(TEXT, struct process, cmdline, process, cmdline), COL(TEXT, struct process, host, process, host),
    COL(TEXT, struct process, settings, process, settings), COL(I64, struct process, run_id, process, run),
    COL(TEXT, struct process, ended, process, ended),
};
static const struct col thread_cols[] = {
    COL(I64, struct raw_thread, t.id, thread, id), COL(I64, struct raw_thread, process, thread, process),
    COL(I64, struct raw_thread, t.seq, thread, seq), COL(I64, struct raw_thread, t.tid, thread, tid),
    COL(TEXT, struct raw_thread, t.name, thread, name),
};
static const struct col module_cols[] = {
    COL(I64, struct module, id, module, id), COL(TEXT, struct module, path, module, path),
    COL(TEXT, struct module, build_id, module, build_id),
};
static const struct col function_cols[] = {
    COL(I64, struct raw_name, id, function, id), COL(TEXT, struct raw_name, name, function, name),
};
static const struct col file_cols[] = {
    COL(I64, struct raw_name, id, file, id), COL(TEXT, struct raw_name, name, file, path),
};
static const struct col frame_cols[] = {
    COL(I64, struct raw_frame, id, frame, id), COL(I64, struct raw_frame, module, frame, module),
    COL(I64, struct raw_frame, offset, frame, offset), COL(I32, struct raw_frame, inline_depth, frame, inline_depth),
    COL(I64_NULL, struct raw_frame, function, frame, function), COL(I64_NULL, struct raw_frame, file, frame, file),
    COL(I32, struct raw_frame, line, frame, line),
};
static const struct col snapshot_cols[] = {
    COL(I64, struct raw_snapshot, s.id, snapshot, id), COL(I64, struct raw_snapshot, process, snapshot, process),
    COL(I64, struct raw_snapshot, s.seq, snapshot, seq), COL(F64, struct raw_snapshot, s.time, snapshot, time),
    COL(TEXT, struct raw_snapshot, s.reason, snapshot, reason), COL(TEXT, struct raw_snapshot, s.label, snapshot, label),
    COL(I64, struct raw_snapshot, s.profiler_memory, snapshot, profiler_memory),
};
/* The counters every table of counters has, in the order of the format. */
#define COUNTER_COLS(row, c, table) \
    COL(I64, row, c.v[NCALLS], table, ncalls), COL(I64, row, c.v[MEMTOT], table, memtot), \
    COL(I64, row, c.v[NFREE], table, nfree), COL(I64, row, c.v[MEMLIVE], table, memlive), \
    COL(I64, row, c.v[MAXLIVE], table, maxlive)
static const struct col total_cols[] = {
    COL(I64, struct raw_total, snapshot, totals, snapshot), COL(I64, struct raw_total, thread, totals, thread),
    COUNTER_COLS(struct raw_total, t.c, totals),
    COL(I64, struct raw_total, t.ncalls_nostack, totals, ncalls_nostack),
    COL(I64, struct raw_total, t.memtot_nostack, totals, memtot_nostack),
    COL(I64, struct raw_total, t.nfree_unknown, totals, nfree_unknown),
};
static const struct col sample_cols[] = {
    COL(I64, struct raw_sample, snapshot, sample, snapshot), COL(I64, struct raw_sample, stack, sample, stack),
    COL(I64, struct raw_sample, thread, sample, thread), COUNTER_COLS(struct raw_sample, c, sample),
    COL(I64, struct raw_sample, c.v[NTEMP], sample, ntemp), COL(I64, struct raw_sample, c.v[TIME], sample, time),
    COL(I64, struct raw_sample, c.v[NMAP], sample, nmap), COL(I64, struct raw_sample, c.v[MAPPED], sample, mapped),
    COL(I64, struct raw_sample, c.v[MAXMAPPED], sample, maxmapped), COL(I64, struct raw_sample, c.v[RSS], sample, rss),
    COL(I64, struct raw_sample, c.v[MEMCOLD], sample, memcold),
    COL(I64, struct raw_sample, c.v[COLDAGE], sample, coldage),
};
#define HIST_COLS(row, table) \
    COL(I64, row, lo, table, lo), COL(I64, row, v[H_NCALLS], table, ncalls), \
    COL(I64, row, v[H_MEMTOT], table, memtot), COL(I64, row, v[H_NLIVE], table, nlive), \
    COL(I64, row, v[H_MEMLIVE], table, memlive)
static const struct col hist_cols[] = {
    COL(I64, struct raw_hist, snapshot, hist, snapshot), HIST_COLS(struct raw_hist, hist),
};
static const struct col stack_hist_cols[] = {
    COL(I64, struct raw_stack_hist, snapshot, stack_hist, snapshot),
    COL(I64, struct raw_stack_hist, stack, stack_hist, stack),
    COL(I64, struct raw_stack_hist, thread, stack_hist, thread), HIST_COLS(struct raw_stack_hist, stack_hist),
};
static const struct col tick_cols[] = {
    COL(I64, struct raw_tick, process, tick, process), COL(F64, struct raw_tick, t.time, tick, time),
    COL(I64, struct raw_tick, t.ncalls, tick, ncalls), COL(I64, struct raw_tick, t.memtot, tick, memtot),
    COL(I64, struct raw_tick, t.memlive, tick, memlive), COL(I64, struct raw_tick, t.rss, tick, rss),
    COL(I64, struct raw_tick, t.mapped, tick, mapped),
};

/* The ledger (PROFILE_LEDGER): the rows whose snapshot the profile does
 * not have are left out. */
static const struct col ledger_cols[] = {
    COL(I64, struct raw_ledger, snapshot, ledger, snapshot), COL(TEXT, struct raw_ledger, line, ledger, line),
    COL(I64, struct raw_ledger, bytes, ledger, bytes), COL(I64, struct raw_ledger, size, ledger, size),
};
const char *const ledger_lines[LEDGER_NLINES] = {
    "heap live", "heap overhead", "heap free", "mmap anonymous", "mmap file",
    "thread stacks", "modules", "profiler", "unexplained", "rss",
};

static const struct table_spec
    ledgers = { FT_ledger, NULL, ledger_cols, sizeof ledger_cols / sizeof *ledger_cols, sizeof(struct raw_ledger),
                sizeof(struct ledger_row), convert_ledger },
    runs = SPEC(run, "id", run_cols, struct run),
    processes = SPEC(process, "id", process_cols, struct process),
    threads = SPEC(thread, "id", thread_cols, struct raw_thread),
    modules = SPEC(module, "id", module_cols, struct module),
    functions = SPEC(function, "id", function_cols, struct raw_name),
    files = SPEC(file, "id", file_cols, struct raw_name),
    frames = SPEC(frame, "id", frame_cols, struct raw_frame),
    snapshots = SPEC(snapshot, "process, seq", snapshot_cols, struct raw_snapshot),
    totals = SPEC(totals, NULL, total_cols, struct raw_total),
    ticks = SPEC(tick, "process, time", tick_cols, struct raw_tick),
    samples = SPEC_CONVERT(sample, sample_cols, struct raw_sample, struct sample, convert_sample),
    hists = SPEC_CONVERT(hist, hist_cols, struct raw_hist, struct hist_row, convert_hist),
    stack_hists = SPEC_CONVERT(stack_hist, stack_hist_cols, struct raw_stack_hist, struct stack_hist_row,
                               convert_stack_hist);
_Static_assert(sizeof(struct raw_sample) <= RAW_MAX && sizeof(struct raw_stack_hist) <= RAW_MAX,
               "RAW_MAX holds a raw row");

/* ---------------------------------------------------------------- reading */
static const char *text_col(struct loader *l, sqlite3_stmt *st, int col)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    size_t n = (size_t)sqlite3_column_bytes(st, col);
    if (!s) return "";
    if (n > NAME_MAX_BYTES) {
        char *d = arena_strndup(&l->p->text, s, NAME_MAX_BYTES + 3);
        memcpy(d + NAME_MAX_BYTES, "...", 3);
        return d;
    }
    return arena_strndup(&l->p->text, s, n);
}

static int is_null(sqlite3_stmt *st, int col) { return sqlite3_column_type(st, col) == SQLITE_NULL; }

static void read_row(struct loader *l, sqlite3_stmt *st, const struct table_spec *t, char *row)
{
    for (int i = 0; i < (int)t->ncols; i++) {
        void *dst = row + t->cols[i].offset;
        switch (t->cols[i].type) {
        case COL_I64: *(int64_t *)dst = sqlite3_column_int64(st, i); break;
        case COL_I32: *(int32_t *)dst = (int32_t)sqlite3_column_int64(st, i); break;
        case COL_F64: *(double *)dst = sqlite3_column_double(st, i); break;
        case COL_TEXT: *(const char **)dst = text_col(l, st, i); break;
        case COL_I64_NULL: *(int64_t *)dst = is_null(st, i) ? -1 : sqlite3_column_int64(st, i); break;
        case COL_F64_NULL: *(double *)dst = is_null(st, i) ? -1 : sqlite3_column_double(st, i); break;
        }
    }
}

/* The array sized from count(*) first (cheap), so that large tables are
 * not copied while growing; 0 when unknown. */
static size_t presize(struct loader *l, const struct table_spec *t, void **arr, size_t size)
{
    struct strbuf sql = { 0 };
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    sb_printf(&sql, "SELECT count(*) FROM %s", format_tables[t->table].name);
    if (sqlite3_prepare_v2(l->db, sql.s, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        sqlite3_int64 rows = sqlite3_column_int64(st, 0);
        if (rows > 0 && (uint64_t)rows < SIZE_MAX / size / 2) {
            cap = (size_t)rows;
            *arr = xrealloc(*arr, cap * size);
        }
    }
    sqlite3_finalize(st);
    sb_free(&sql);
    return cap;
}

/* Rows into *arr; a converted table stops storing after a dangling
 * reference (the load fails). */
static int step_rows(struct loader *l, sqlite3_stmt *st, const struct table_spec *t, void **arr,
                     size_t *n, size_t cap)
{
    int rc;
    _Alignas(max_align_t) char raw[RAW_MAX];
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!t->convert) {
            read_row(l, st, t, array_push(arr, n, &cap, t->size));
        } else if (!l->bad_ref) {
            read_row(l, st, t, raw);
            t->convert(l, raw, array_push(arr, n, &cap, t->stored));
        }
    }
    return rc;
}

/* Reads a whole table into *arr, an array of t->stored-byte rows. */
static int load_table(struct loader *l, const struct table_spec *t, void *arr, size_t *n)
{
    size_t cap = presize(l, t, arr, t->stored);
    struct strbuf sql = { 0 };
    sb_puts(&sql, "SELECT ");
    const struct format_table_def *d = &format_tables[t->table];
    for (size_t i = 0; i < t->ncols; i++) {
        const struct format_column *c = &d->col[t->cols[i].column];
        sb_printf(&sql, "%s%s", i ? ", " : "", l->p->version < c->since ? c->deflt : c->name);
    }
    sb_printf(&sql, " FROM %s", d->name);
    /* a peak snapshot's rows are not in the chain of the others: only a
     * selection of one needs them (PROFILE_PEAK_ROWS) */
    if (t == &samples && !(l->flags & PROFILE_PEAK_ROWS)) sb_puts(&sql, " WHERE snapshot IN (SELECT id FROM snapshot WHERE reason != 'peak')");
    if (t->order) sb_printf(&sql, " ORDER BY %s", t->order);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(l->db, sql.s, -1, &st, NULL);
    if (rc == SQLITE_OK) rc = step_rows(l, st, t, arr, n, cap);
    if (rc != SQLITE_DONE)
        profile_fail(l->err, l->errlen, "not a mallocprof profile (%s)", sqlite3_errmsg(l->db));
    sqlite3_finalize(st);
    sb_free(&sql);
    return rc == SQLITE_DONE ? 0 : EXIT_BAD_INPUT;
}

/* The stack tree one row a node: table stack before version 6, then the
 * view of that name over the runs (stack_run), whose rows come in id order
 * as they are stored (an ORDER BY would sort them all again). */
static int load_stacks(struct loader *l)
{
    const char *sql = l->p->version < format_tables[FT_stack_run].col[0].since
                          ? "SELECT id, parent, frame FROM stack ORDER BY id" : "SELECT id, parent, frame FROM stack";
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc = sqlite3_prepare_v2(l->db, sql, -1, &st, NULL);
    int64_t last = 0;
    while (st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct raw_stack *r = array_push((void **)&l->rstacks, &l->nstacks, &cap, sizeof *r);
        *r = (struct raw_stack){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2) };
        if (r->id <= last) break;       /* runs that overlap: one id twice */
        last = r->id;
    }
    if (rc == SQLITE_ROW)
        profile_fail(l->err, l->errlen, "corrupt profile (table stack_run: node %lld is in two runs)",
                     (long long)l->rstacks[l->nstacks - 1].id);
    else if (rc != SQLITE_DONE)
        profile_fail(l->err, l->errlen, "not a mallocprof profile (%s)", sqlite3_errmsg(l->db));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : EXIT_BAD_INPUT;
}

/* The dictionaries, before the samples are resolved against them. */
static int load_dictionaries(struct loader *l)
{
    struct profile *p = l->p;
    int rc = load_table(l, &runs, &p->runs, &p->nruns);
    if (!rc) rc = load_table(l, &processes, &p->procs, &p->nprocs);
    if (!rc) rc = load_table(l, &threads, &l->rthreads, &l->nthreads);
    if (!rc) rc = load_table(l, &modules, &p->modules, &p->nmodules);
    if (!rc) rc = load_table(l, &functions, &l->rfunctions, &l->nfunctions);
    if (!rc) rc = load_table(l, &files, &l->rfiles, &l->nfiles);
    if (!rc) rc = load_table(l, &frames, &l->rframes, &l->nframes);
    if (!rc) rc = load_stacks(l);
    if (!rc) rc = load_table(l, &snapshots, &l->rsnapshots, &l->nsnapshots);
    if (!rc) rc = load_table(l, &totals, &l->rtotals, &l->ntotals);
    return rc;
}

/* The largest table, samples, is read last, converted row by row. */
static int load_all(struct loader *l)
{
    struct profile *p = l->p;
    int rc;
    if ((rc = load_dictionaries(l)) || (rc = link_dictionaries(l))) return rc;
    if ((rc = load_table(l, &samples, &p->samples, &p->nsamples))) return rc;
    if (l->bad_ref) return EXIT_BAD_INPUT;
    link_recorded(p);
    if ((rc = link_totals(l))) return rc;
    /* the points of memory over time, in the versions that have them */
    if (p->version >= format_tables[FT_tick].col[0].since &&
        ((rc = load_table(l, &ticks, &l->rticks, &l->nticks)) || (rc = link_ticks(l))))
        return rc;
    /* the ledger and the mappings' rows, in the versions that have them */
    if ((l->flags & PROFILE_LEDGER) && p->version >= format_tables[FT_ledger].col[0].since &&
        ((rc = load_table(l, &ledgers, &p->ledger, &p->nledger))))
        return rc;
    if (!(l->flags & PROFILE_HISTS)) return rc;
    /* the histograms of the versions that have them */
    if (p->version >= format_tables[FT_hist].col[0].since && (rc = load_table(l, &hists, &p->hists, &p->nhists)))
        return rc;
    if (p->version >= format_tables[FT_stack_hist].col[0].since)
        rc = load_table(l, &stack_hists, &p->stack_hists, &p->nstack_hists);
    return rc ? rc : l->bad_ref ? EXIT_BAD_INPUT : 0;
}

uint32_t profile_stack_index(const struct profile *p, int64_t id)
{
    /* stacks are loaded ORDER BY id: direct when dense, else binary search */
    if (id >= 1 && (uint64_t)id <= p->nstacks && p->stacks[id - 1].id == id) return (uint32_t)(id - 1);
    size_t lo = 0, hi = p->nstacks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->stacks[mid].id < id) lo = mid + 1; else hi = mid;
    }
    return lo < p->nstacks && p->stacks[lo].id == id ? (uint32_t)lo : NONE;
}

int profile_load_more(const char *path, int flags, struct profile **out,
                      int (*more)(void *ctx, struct sqlite3 *db, struct profile *p), void *ctx,
                      char *err, size_t errlen)
{
    sqlite3 *db;
    int version;
    *out = NULL;
    int rc = profile_open_version(path, &db, 0, &version, err, errlen);
    if (rc) return rc;
    struct profile *p = xcalloc(1, sizeof *p);
    p->path = p->db_path = path;
    p->version = version;
    /* one read transaction: a recorder flushing meanwhile cannot make the
     * tables disagree with each other */
    struct loader l = { .db = db, .p = p, .err = err, .errlen = errlen, .flags = flags };
    char *msg = NULL;
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK) {
        rc = profile_fail(err, errlen, "not a mallocprof profile (%s)", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
    } else {
        rc = load_all(&l);
        if (!rc && more) rc = more(ctx, db, p);
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    }
    loader_free(&l);
    if (sqlite3_close(db) != SQLITE_OK && !rc)
        rc = profile_fail(err, errlen, "cannot close (%s)", sqlite3_errmsg(db));
    if (rc) { profile_free(p); return rc; }
    *out = p;
    return 0;
}

int profile_load(const char *path, struct profile **out, int flags, char *err, size_t errlen)
{
    return profile_load_more(path, flags, out, NULL, NULL, err, errlen);
}

void profile_free(struct profile *p)
{
    if (!p || p->shared) return;
    arena_free(&p->text);
    for (size_t i = 0; i < p->nsources; i++) {
        free(p->sources[i].runs);
        free(p->sources[i].nprocs);
    }
    free(p->sources);
    free(p->latest_runs);
    free(p->runs); free(p->procs); free(p->threads); free(p->modules);
    free(p->functions); free(p->files); free(p->frames); free(p->stacks);
    free(p->stack_order); free(p->snapshots); free(p->samples); free(p->recorded); free(p->recorded_of); free(p->totals); free(p->snapshot_total);
    free(p->hists); free(p->stack_hists); free(p->ticks); free(p->ledger);
    free(p);
}
