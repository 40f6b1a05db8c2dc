/* SQL for the flush: prepared statements, steps, batched INSERTs, and the
 * first error of a snapshot kept for its one-line report. */
#define _GNU_SOURCE
#include "flush.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The new room is zero from calloc, not from a memset: a large block of
 * the profiler's heap is a mapping of its own, whose pages stay out of the
 * RSS until a row is written there (clang's per-slot and per-node arrays,
 * doubled ahead of their 85,000 slots and 750,000 nodes, held 5 MB of
 * zeros). */
int grow_array(void *pp, size_t *n, size_t need, size_t elem)
{
    if (need <= *n) return 0;
    size_t cap = *n ? *n : 256;
    while (cap < need) cap *= 2;
    void *p = calloc(cap, elem);
    if (!p) return -1;
    if (*n) memcpy(p, *(void **)pp, *n * elem);
    free(*(void **)pp);
    *(void **)pp = p;
    *n = cap;
    return 0;
}

/* A row's values reduced to 64 bits, to tell whether they changed since
 * the previous snapshot without keeping them (flush_rows.c: 8 bytes a
 * slot, not 72): all zeros (never written) give 0, anything else an odd
 * number, two different rows the same one with a chance of 2^-63. */
uint64_t words_digest(const uint64_t *w, size_t n)
{
    uint64_t h = 0, any = 0;
    for (size_t i = 0; i < n; i++) {
        any |= w[i];
        h = (h ^ w[i]) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    return any ? h | 1 : 0;
}

/* Keeps the first failure's text (SQLite's message buffer changes later). */
int fail(struct writer *w, const char *what)
{
    if (!w->error) {
        snprintf(w->error_text, sizeof w->error_text, "%s", what);
        w->error = w->error_text;
    }
    return -1;
}

sqlite3_stmt *prepare(struct writer *w, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK) fail(w, sqlite3_errmsg(w->db));
    return st;
}

/* A step and its reset, the bindings kept (the next row binds every one
 * that must not be NULL). */
static int step_reset(struct writer *w, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : fail(w, sqlite3_errmsg(w->db));
}

int step_done(struct writer *w, sqlite3_stmt *st)
{
    int rc = step_reset(w, st);
    sqlite3_clear_bindings(st);
    return rc;
}

sqlite3_stmt *prepare_insert(struct writer *w, const char *verb, enum format_table t, int rows)
{
    char sql[FORMAT_INSERT_SIZE(BATCH_ROWS)];
    if (format_insert_sql(verb, t, rows, sql, sizeof sql) < 0) return fail(w, "statement too long"), NULL;
    return prepare(w, sql);
}

void batch_init(struct batch *b, enum format_table t, int next_id)
{
    b->table = t;
    b->ncols = format_tables[t].ncols;
    b->n = 0;
    b->next_id = next_id;
    b->many = b->one = NULL;
}

/* Writes the rows collected so far: a full batch with its statement, a
 * partial one (the end of a snapshot) row by row. An explicit INTEGER
 * PRIMARY KEY costs SQLite a search of the table per row (whether the id
 * is taken): a third of the stack tree's insert; a NULL one is the
 * largest + 1, found at the cursor's end. */
int batch_flush(struct writer *w, struct batch *b)
{
    int per = b->n == BATCH_ROWS ? BATCH_ROWS : 1, rc = 0;
    sqlite3_stmt **stp = per == 1 ? &b->one : &b->many;
    if (b->n && !*stp && !(*stp = prepare_insert(w, "INSERT", b->table, per))) return b->n = 0, -1;
    sqlite3_stmt *st = *stp;
    for (int r = 0; r < b->n && !rc; r += per) {
        for (int i = 0; i < per * b->ncols; i++)
            if (!b->next_id || i % b->ncols) sqlite3_bind_int64(st, i + 1, b->v[r * b->ncols + i]);
        rc = step_reset(w, st);     /* a batch binds every column but the id, never bound */
        if (!rc && b->next_id && sqlite3_last_insert_rowid(w->db) != b->v[(r + per - 1) * b->ncols])
            rc = fail(w, "the database's ids are not the ones this process expected");
    }
    b->n = 0;
    return rc;
}

int batch_add(struct writer *w, struct batch *b, const int64_t *row)
{
    memcpy(&b->v[b->n * b->ncols], row, (size_t)b->ncols * sizeof *row);
    return ++b->n == BATCH_ROWS ? batch_flush(w, b) : 0;
}

int sql_exec(struct writer *w, const char *sql)
{
    return sqlite3_exec(w->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(w, sqlite3_errmsg(w->db));
}

int64_t query_int(struct writer *w, const char *sql, int64_t deflt)
{
    sqlite3_stmt *st = prepare(w, sql);
    int64_t v = deflt;
    if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

void batch_finalize(struct batch *b)
{
    sqlite3_finalize(b->many);
    sqlite3_finalize(b->one);
}
