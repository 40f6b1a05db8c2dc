/* The reads of symbolize (which opens its database read-write and writes
 * through profile_write.c: symdb.h) and of record (a run's counts): plain
 * row-by-row statements, apart from profile.c's one pass per table. Moved
 * from profile.c verbatim. */
#include "mpquery.h"
#include "profile.h"
#include "symdb.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Runs sql, calling row for each row; 0, or EXIT_FAILED with "SQL: why" in
 * err. */
static int each_row(sqlite3 *db, const char *sql, void (*row)(sqlite3_stmt *st, void *ctx), void *ctx,
                    char *err, size_t errlen)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK)
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st, ctx);
    if (rc != SQLITE_DONE) snprintf(err, errlen, "%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : EXIT_FAILED;
}

int64_t symdb_max_id(struct symdb *d, const char *table)
{
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT COALESCE(MAX(id), 0) FROM %s", table);
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else
        snprintf(d->err, sizeof d->err, "reading ids: %s", sqlite3_errmsg(d->db));
    sqlite3_finalize(st);
    return v;
}

struct name_rows { void (*fn)(void *ctx, int64_t id, const char *name); void *ctx; };

static void name_row(sqlite3_stmt *st, void *ctx)
{
    const struct name_rows *x = ctx;
    const char *name = (const char *)sqlite3_column_text(st, 1);
    if (name) x->fn(x->ctx, sqlite3_column_int64(st, 0), name);
}

int symdb_each_name(struct symdb *d, int files, void (*fn)(void *ctx, int64_t id, const char *name),
                    void *ctx)
{
    struct name_rows x = { fn, ctx };
    return each_row(d->db, files ? "SELECT id, path FROM file" : "SELECT id, name FROM function",
                    name_row, &x, d->err, sizeof d->err);
}

struct rows { void *arr; size_t n, cap; struct arena *text; };

static void frame_row(sqlite3_stmt *st, void *ctx)
{
    struct rows *r = ctx;
    struct frow *f = array_push(&r->arr, &r->n, &r->cap, sizeof *f);
    *f = (struct frow){ .id = sqlite3_column_int64(st, 0), .module = sqlite3_column_int64(st, 1),
                        .offset = sqlite3_column_int64(st, 2), .depth = sqlite3_column_int(st, 3),
                        .function = sqlite3_column_int64(st, 4), .file = sqlite3_column_int64(st, 5),
                        .line = sqlite3_column_int(st, 6) };
}

int symdb_frames(struct symdb *d, struct frow **out, size_t *n)
{
    struct rows r = { 0 };
    int rc = each_row(d->db, "SELECT id, module, offset, inline_depth, COALESCE(function, 0), "
                      "COALESCE(file, 0), line FROM frame ORDER BY module, offset, inline_depth",
                      frame_row, &r, d->err, sizeof d->err);
    *out = r.arr;
    *n = r.n;
    return rc;
}

static void stack_row(sqlite3_stmt *st, void *ctx)
{
    struct rows *r = ctx;
    struct stack_row *s = array_push(&r->arr, &r->n, &r->cap, sizeof *s);
    *s = (struct stack_row){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                             sqlite3_column_int64(st, 2) };
}

int symdb_stacks(struct symdb *d, struct stack_row **out, size_t *n)
{
    struct rows r = { 0 };
    int rc = each_row(d->db, "SELECT id, parent, frame FROM stack", stack_row, &r, d->err, sizeof d->err);
    *out = r.arr;
    *n = r.n;
    return rc;
}

static const char *column_text(sqlite3_stmt *st, int col, struct arena *text)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    return s ? arena_strndup(text, s, strlen(s)) : "";
}

static void module_row(sqlite3_stmt *st, void *ctx)
{
    struct rows *r = ctx;
    struct module_row *m = array_push(&r->arr, &r->n, &r->cap, sizeof *m);
    *m = (struct module_row){ sqlite3_column_int64(st, 0), column_text(st, 1, r->text),
                              column_text(st, 2, r->text) };
}

int symdb_modules(struct symdb *d, struct module_row **out, size_t *n, struct arena *text)
{
    struct rows r = { .text = text };
    int rc = each_row(d->db, "SELECT id, path, build_id FROM module WHERE path NOT LIKE '[%' ORDER BY id",
                      module_row, &r, d->err, sizeof d->err);
    *out = r.arr;
    *n = r.n;
    return rc;
}

static int64_t count_of(sqlite3 *db, const char *sql, const char *token)
{
    sqlite3_stmt *st = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, token, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

int profile_count_run(struct sqlite3 *db, const char *token, struct run_count *c, char *err, size_t errlen)
{
    c->images = count_of(db, "SELECT count(*) FROM process p JOIN run r ON r.id = p.run WHERE r.token = ?", token);
    /* an image continues its pid when the latest earlier image of the pid
     * ended by exec (as mpquery info's process tree groups them) */
    c->processes = count_of(db, "SELECT count(*) FROM (SELECT lag(p.ended) OVER (PARTITION BY p.pid ORDER BY"
                                " p.start_time, p.id) AS before FROM process p JOIN run r ON r.id = p.run"
                                " WHERE r.token = ?) WHERE before IS NULL OR before != 'exec'", token);
    c->snapshots = count_of(db, "SELECT count(*) FROM snapshot s JOIN process p ON p.id = s.process"
                                " JOIN run r ON r.id = p.run WHERE r.token = ?", token);
    c->peaks = count_of(db, "SELECT count(*) FROM snapshot s JOIN process p ON p.id = s.process"
                            " JOIN run r ON r.id = p.run WHERE r.token = ? AND s.reason = 'peak'", token);
    if (c->processes >= 0 && c->images >= 0 && c->snapshots >= 0 && c->peaks >= 0) return 0;
    snprintf(err, errlen, "not a mallocprof profile (%s)", sqlite3_errmsg(db));
    return EXIT_FAILED;
}
