/* Every write mpquery makes to a profile: symbolize's, inside the one
 * transaction symbolize opens (BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on
 * any error or --dry-run), so a file is rewritten all or nothing. New names,
 * frames updated in place or added, and the stack table replaced when
 * inline chains change length (sample rows moved by one UPDATE through a
 * temporary old → new map; the tree in the file's own form: runs from
 * format 6 on, a row a node before). What symbolize reads is in profile.c. */
#include "mpquery.h"
#include "symdb.h"
#include "stack_run.h"

#include <sqlite3.h>
#include <stdio.h>

static int fail(struct symdb *d, const char *what)
{
    snprintf(d->err, sizeof d->err, "%s: %s", what, sqlite3_errmsg(d->db));
    return EXIT_FAILED;
}

int symdb_exec(struct symdb *d, const char *sql)
{
    return sqlite3_exec(d->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(d, sql);
}

int symdb_insert_name(struct symdb *d, int is_file, int64_t id, const char *name)
{
    const char *sql = is_file ? "INSERT INTO file(id, path) VALUES(?, ?)"
                              : "INSERT INTO function(id, name) VALUES(?, ?)";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK) return fail(d, sql);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail(d, sql);
}

static int prepare_frame_statements(struct symdb *d)
{
    if (d->frame_update) return 0;
    if (sqlite3_prepare_v2(d->db, "UPDATE frame SET function = ?1, file = ?2, line = ?3 WHERE id = ?4",
                           -1, &d->frame_update, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(d->db, "INSERT INTO frame(function, file, line, id, module, offset, inline_depth) "
                           "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &d->frame_insert, NULL) != SQLITE_OK)
        return fail(d, "preparing frame statements");
    return 0;
}

int symdb_write_frame(struct symdb *d, const struct frow *f, int insert)
{
    int rc = prepare_frame_statements(d);
    if (rc) return rc;
    sqlite3_stmt *st = insert ? d->frame_insert : d->frame_update;
    sqlite3_reset(st);
    if (f->function) sqlite3_bind_int64(st, 1, f->function); else sqlite3_bind_null(st, 1);
    if (f->file) sqlite3_bind_int64(st, 2, f->file); else sqlite3_bind_null(st, 2);
    sqlite3_bind_int(st, 3, f->line);
    sqlite3_bind_int64(st, 4, f->id);
    if (insert) {
        sqlite3_bind_int64(st, 5, f->module);
        sqlite3_bind_int64(st, 6, f->offset);
        sqlite3_bind_int(st, 7, f->depth);
    }
    return sqlite3_step(st) == SQLITE_DONE ? 0 : fail(d, "writing frames");
}

static int write_map(struct symdb *d, sqlite3_stmt *st, const struct stack_row *old, const int64_t *new_ids,
                     size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, old[i].id);
        sqlite3_bind_int64(st, 2, new_ids[i]);
        if (sqlite3_step(st) != SQLITE_DONE) return fail(d, "stack_map");
    }
    return 0;
}

/* The pending run into stack_run (insert: id, parent, frames). */
static int write_run(struct symdb *d, sqlite3_stmt *st, struct stack_run *run)
{
    size_t len;
    const char *frames = stack_run_take(run, &len);
    if (!frames) return 0;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, run->first);
    sqlite3_bind_int64(st, 2, run->parent);
    sqlite3_bind_text(st, 3, frames, (int)len, SQLITE_STATIC);
    return sqlite3_step(st) == SQLITE_DONE ? 0 : fail(d, "writing stacks");
}

/* The tree's rows: with runs, or one a node (insert: id, parent, frame). */
static int write_stacks(struct symdb *d, sqlite3_stmt *st, int runs, const struct stack_row *rows, size_t n)
{
    struct stack_run run = { 0 };
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (runs) {
            if (!stack_run_extends(&run, rows[i].id, rows[i].parent)) rc = write_run(d, st, &run);
            if (!rc && stack_run_push(&run, rows[i].id, rows[i].parent, rows[i].frame))
                rc = fail(d, "out of memory");
            continue;
        }
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, rows[i].id);
        sqlite3_bind_int64(st, 2, rows[i].parent);
        sqlite3_bind_int64(st, 3, rows[i].frame);
        if (sqlite3_step(st) != SQLITE_DONE) rc = fail(d, "writing stacks");
    }
    if (!rc && runs) rc = write_run(d, st, &run);
    stack_run_free(&run);
    return rc;
}

/* Whether the file keeps its stack tree as runs (format 6 on). */
static int has_runs(struct symdb *d)
{
    sqlite3_stmt *st = NULL;
    int has = sqlite3_prepare_v2(d->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'stack_run'",
                                 -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return has;
}

int symdb_replace_stacks(struct symdb *d, const struct stack_row *old, const int64_t *new_ids, size_t nold,
                         const struct stack_row *rows, size_t nrows)
{
    sqlite3_stmt *map = NULL, *ins = NULL;
    int runs = has_runs(d);
    int rc = symdb_exec(d, "CREATE TEMP TABLE stack_map(old INTEGER PRIMARY KEY, new INTEGER NOT NULL)");
    if (!rc && (sqlite3_prepare_v2(d->db, "INSERT INTO stack_map VALUES(?, ?)", -1, &map, NULL) ||
                sqlite3_prepare_v2(d->db, runs ? "INSERT INTO stack_run(id, parent, frames) VALUES(?, ?, ?)"
                                                : "INSERT INTO stack(id, parent, frame) VALUES(?, ?, ?)", -1, &ins,
                                   NULL)))
        rc = fail(d, "preparing stack statements");
    if (!rc) rc = write_map(d, map, old, new_ids, nold);
    if (!rc) rc = symdb_exec(d, runs ? "DELETE FROM stack_run" : "DELETE FROM stack");
    if (!rc) rc = write_stacks(d, ins, runs, rows, nrows);
    sqlite3_finalize(map);
    sqlite3_finalize(ins);
    if (!rc)
        rc = symdb_exec(d, "UPDATE sample SET stack = (SELECT new FROM stack_map WHERE old = sample.stack)");
    if (!rc) rc = symdb_exec(d, "DELETE FROM frame WHERE id NOT IN (SELECT frame FROM stack)");
    if (!rc) rc = symdb_exec(d, "DROP TABLE stack_map");
    return rc;
}

void symdb_finish(struct symdb *d)
{
    sqlite3_finalize(d->frame_update);
    sqlite3_finalize(d->frame_insert);
    d->frame_update = d->frame_insert = NULL;
}

void symdb_close(struct symdb *d)
{
    symdb_finish(d);
    sqlite3_close(d->db);
    d->db = NULL;
}
