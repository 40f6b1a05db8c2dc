/* The output of mpquery merge: a new database of the current format
 * (schema/profile.sql, compiled in), its rows inserted BATCH_ROWS at a time
 * by statements made from the format's tables (prof/format.h), in ONE
 * transaction; runs numbered by start time, then the processes and frames
 * that waited for them, at the end (finish). merge.c maps the inputs. */
#include "merge_impl.h"
#include "ledger.h"         /* PROFILE_LEDGER: the ledger is copied too */

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char schema_sql[] =
#include "schema.h"
;

int merge_fail(struct merge *m, int code, const char *fmt, ...)
{
    if (m->rc) return m->rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err, m->errlen, fmt, ap);
    va_end(ap);
    return m->rc = code;
}

int merge_out_fail(struct merge *m)
{
    return merge_fail(m, EXIT_FAILED, "%s: cannot write (%s)", m->out_path, sqlite3_errmsg(m->out));
}

static void bind_row(sqlite3_stmt *st, int first, const struct val *v, int n)
{
    for (int i = 0; i < n; i++) {
        int k = first + i + 1;
        switch (v[i].type) {
        case V_INT: sqlite3_bind_int64(st, k, v[i].i); break;
        case V_REAL: sqlite3_bind_double(st, k, v[i].d); break;
        case V_TEXT: sqlite3_bind_text(st, k, v[i].s, -1, SQLITE_STATIC); break;
        default: sqlite3_bind_null(st, k);
        }
    }
}

static void step(struct merge *m, sqlite3_stmt *st)
{
    if (!m->rc && sqlite3_step(st) != SQLITE_DONE) merge_out_fail(m);
    sqlite3_reset(st);
}

/* The rows of a table collected so far: a full batch with its statement,
 * fewer one by one. */
static void batch_flush(struct merge *m, int table)
{
    struct batch *b = &m->ins[table];
    int ncols = format_tables[table].ncols;
    if (b->n == BATCH_ROWS) {
        bind_row(b->many, 0, b->v, BATCH_ROWS * ncols);
        step(m, b->many);
    } else {
        for (int r = 0; r < b->n; r++) {
            bind_row(b->one, 0, &b->v[r * ncols], ncols);
            step(m, b->one);
        }
    }
    b->n = 0;
}

/* The pending run into the stack_run rows (its text copied: rows wait
 * for their batch). */
static void write_run(struct merge *m)
{
    size_t len;
    const char *frames = stack_run_take(&m->run, &len);
    if (frames)
        PUT(m, stack_run, [C(stack_run, id)] = I(m->run.first), [C(stack_run, parent)] = I(m->run.parent),
            [C(stack_run, frames)] = S(arena_strndup(&m->text, frames, len)));
}

void merge_stack_node(struct merge *m, int64_t id, int64_t parent, int64_t frame)
{
    if (!stack_run_extends(&m->run, id, parent)) write_run(m);
    if (stack_run_push(&m->run, id, parent, frame)) merge_fail(m, EXIT_FAILED, "out of memory");
}

void merge_flush_all(struct merge *m)
{
    write_run(m);
    for (int t = 0; t < FT_N; t++) batch_flush(m, t);
}

void merge_put(struct merge *m, int table, const struct val *v)
{
    struct batch *b = &m->ins[table];
    size_t n = (size_t)format_tables[table].ncols;
    memcpy(&b->v[b->n++ * n], v, n * sizeof *v);
    if (b->n == BATCH_ROWS) batch_flush(m, table);
}

/* ---------------------------------------------------------------- the output */
static int exec_out(struct merge *m, const char *sql)
{
    if (!m->rc && sqlite3_exec(m->out, sql, NULL, NULL, NULL) != SQLITE_OK) merge_out_fail(m);
    return m->rc;
}

/* INSERT INTO table (every column) VALUES (?, ...), ... for `rows` rows. */
static sqlite3_stmt *prepare_insert(struct merge *m, int table, int rows)
{
    char sql[FORMAT_INSERT_SIZE(BATCH_ROWS)];
    sqlite3_stmt *st = NULL;
    if (format_insert_sql("INSERT", table, rows, sql, sizeof sql) < 0) merge_fail(m, EXIT_FAILED, "statement too long");
    else if (!m->rc && sqlite3_prepare_v2(m->out, sql, -1, &st, NULL) != SQLITE_OK) merge_out_fail(m);
    return st;
}

/* The schema compiled in, written as the recorder writes it. (Rows arrive
 * mostly in the order of their keys: keeping the indexes as they come is
 * faster than building them at the end.) */
int merge_open_output(struct merge *m)
{
    if (sqlite3_open_v2(m->out_path, &m->out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        return merge_out_fail(m);
    exec_out(m, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -65536");
    exec_out(m, schema_sql);
    exec_out(m, "BEGIN");
    m->ins = xcalloc(FT_N, sizeof *m->ins);
    for (int t = 0; t < FT_N && !m->rc; t++) {
        m->ins[t].many = prepare_insert(m, t, BATCH_ROWS);
        m->ins[t].one = prepare_insert(m, t, 1);
    }
    return m->rc;
}

static int cmp_run(const void *a, const void *b, void *ctx)
{
    const struct out_run *runs = ctx, *x = &runs[*(const uint32_t *)a], *y = &runs[*(const uint32_t *)b];
    if (x->start_time != y->start_time) return x->start_time < y->start_time ? -1 : 1;
    return strcmp(x->token, y->token);
}

/* Runs numbered by start time, then what waited for them: processes,
 * frames; the files' run ids. */
int merge_finish(struct merge *m, struct merge_stats *st)
{
    size_t nruns = m->tokens.n;
    uint32_t *order = xmalloc(nruns * sizeof *order);
    for (uint32_t i = 0; i < nruns; i++) order[i] = i;
    qsort_r(order, nruns, sizeof *order, cmp_run, m->runs);
    for (size_t k = 0; k < nruns; k++) {
        struct out_run *r = &m->runs[order[k]];
        r->id = (int64_t)k + 1;
        PUT(m, run, [C(run, id)] = I(r->id), [C(run, token)] = S(r->token), [C(run, start_time)] = R(r->start_time));
        st->runs_shared += r->ninputs > 1;
    }
    free(order);
    for (size_t i = 0; i < m->nprocs; i++) {
        const struct process *pr = &m->procs[i].pr;
        PUT(m, process, [C(process, id)] = I(pr->id), [C(process, run)] = I(m->runs[m->procs[i].run].id),
            [C(process, pid)] = I(pr->pid), [C(process, ppid)] = I(pr->ppid), [C(process, exe)] = S(pr->exe),
            [C(process, cmdline)] = S(pr->cmdline), [C(process, host)] = S(pr->host),
            [C(process, start_time)] = R(pr->start_time),
            [C(process, end_time)] = pr->end_time < 0 ? NUL : R(pr->end_time),
            [C(process, settings)] = S(pr->settings), [C(process, ended)] = S(pr->ended));
    }
    for (size_t i = 0; i < m->frame_keys.n; i++) {
        const struct out_frame *f = &m->frames[i];
        PUT(m, frame, [C(frame, id)] = I((int64_t)i + 1), [C(frame, module)] = I(f->module),
            [C(frame, offset)] = I(f->offset), [C(frame, inline_depth)] = I(f->inline_depth),
            [C(frame, function)] = f->function ? I(f->function) : NUL, [C(frame, file)] = f->file ? I(f->file) : NUL,
            [C(frame, line)] = I(f->line));
    }
    merge_flush_all(m);
    exec_out(m, "COMMIT");
    for (size_t i = 0; i < m->ninputs; i++) {
        struct db_file *f = &m->files[i];
        for (size_t r = 0; r < f->nruns; r++) f->runs[r] = m->runs[f->runs[r]].id;
        if (f->latest >= 0) f->latest = m->runs[f->latest].id;
    }
    st->runs = (int64_t)nruns;
    st->processes = (int64_t)m->nprocs;
    st->stacks = m->nstacks;
    st->samples = m->nsamples;
    return m->rc;
}

void merge_free(struct merge *m)
{
    for (int t = 0; m->ins && t < FT_N; t++) {
        sqlite3_finalize(m->ins[t].many);
        sqlite3_finalize(m->ins[t].one);
    }
    free(m->ins);
    stack_run_free(&m->run);
    if (m->out && sqlite3_close(m->out) != SQLITE_OK) merge_out_fail(m);
    strtab_free(&m->proc_keys); strtab_free(&m->tokens); strtab_free(&m->modules);
    strtab_free(&m->functions); strtab_free(&m->paths); strtab_free(&m->frame_keys);
    idmap_free(&m->tag_frames); idmap_free(&m->stacks); idmap_free(&m->stack_dups);
    free(m->kept); free(m->runs); free(m->procs); free(m->frames); free(m->stack_input);
    arena_free(&m->text);
}

void merge_stats_free(struct merge_stats *st)
{
    for (size_t i = 0; i < st->nfiles; i++) {
        free(st->files[i].runs);
        free(st->files[i].nprocs);
    }
    free(st->files);
    st->files = NULL;
    st->nfiles = 0;
}
