/* Untrusted database files: SQL a file brings must never run. The reference
 * schema is the compiled-in schema/profile.sql executed in a private
 * in-memory database, so SQLite's own normalization of the CREATE text
 * applies to both sides; its sqlite_master rows are built once per process
 * (published with one atomic pointer: no lock, so fork cannot leave one
 * held) and every file's rows must be among them, all from one variant. */
#include "dbguard.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static const char schema_sql[] =
#include "schema.h"
;

/* A file keeps the schema of the version that created it (the schema is
 * created only in an empty file). Each earlier version is the one after it
 * with these objects replaced, by their text exactly as it was then:
 * format version 2, before peak snapshots (it has none), stack_hist and
 * sample.time (read as 0); format version
 * 1, before sample.ntemp, process.ended and hist (a reader of such a file
 * reads ntemp as 0, ended as ''). The recorder writes only the current
 * version. */
#define FORMAT_V2 /* before format version 3: no peak snapshots, stack_hist, sample.time */ \
    "DROP VIEW peak_sample; DROP VIEW peak_snapshot; DROP TABLE stack_hist;\n" \
    "DROP TABLE sample;\n" \
    "CREATE TABLE IF NOT EXISTS sample (\n" \
    "    snapshot    INTEGER NOT NULL REFERENCES snapshot(id),\n" \
    "    stack       INTEGER NOT NULL REFERENCES stack(id),\n" \
    "    thread      INTEGER NOT NULL REFERENCES thread(id),\n" \
    "    ncalls      INTEGER NOT NULL,   -- allocations\n" \
    "    memtot      INTEGER NOT NULL,   -- bytes requested\n" \
    "    nfree       INTEGER NOT NULL,   -- of these blocks, how many were freed\n" \
    "    memlive     INTEGER NOT NULL,   -- bytes still allocated\n" \
    "    maxlive     INTEGER NOT NULL,   -- peak of memlive for this (stack, thread)\n" \
    "    ntemp       INTEGER NOT NULL DEFAULT 0, -- of these blocks, how many were temporary: freed\n" \
    "                                    -- by their thread before it allocated or freed anything else (version 2)\n" \
    "    PRIMARY KEY (snapshot, stack, thread)\n" \
    ") WITHOUT ROWID;\n" \
    "CREATE INDEX IF NOT EXISTS sample_stack ON sample(stack);\n" \
    "DROP VIEW last_sample; DROP VIEW last_snapshot;\n" \
    "CREATE VIEW IF NOT EXISTS last_snapshot AS\n" \
    "SELECT s.* FROM snapshot s\n" \
    "WHERE s.seq = (SELECT MAX(seq) FROM snapshot t WHERE t.process = s.process);\n" \
    "CREATE VIEW IF NOT EXISTS last_sample AS\n" \
    "SELECT sn.process, sa.stack, sa.thread, sa.ncalls, sa.memtot, sa.nfree,\n" \
    "       sa.memlive, sa.maxlive, sa.ntemp\n" \
    "FROM sample sa JOIN snapshot sn ON sn.id = sa.snapshot\n" \
    "WHERE sa.snapshot = (SELECT MAX(s2.snapshot) FROM sample s2\n" \
    "                     WHERE s2.stack = sa.stack AND s2.thread = sa.thread);\n"
#define FORMAT_V1 /* before format version 2: no sample.ntemp, process.ended, hist */ \
    "DROP TABLE process;\n" \
    "CREATE TABLE IF NOT EXISTS process (\n" \
    "    id          INTEGER PRIMARY KEY,\n" \
    "    run         INTEGER NOT NULL REFERENCES run(id),\n" \
    "    pid         INTEGER NOT NULL,\n" \
    "    ppid        INTEGER NOT NULL,\n" \
    "    exe         TEXT NOT NULL,          -- /proc/self/exe\n" \
    "    cmdline     TEXT NOT NULL,          -- arguments joined by single spaces\n" \
    "    host        TEXT NOT NULL,\n" \
    "    start_time  REAL NOT NULL,          -- profiler start, seconds since the epoch\n" \
    "    end_time    REAL,                   -- time of the latest snapshot\n" \
    "    settings    TEXT NOT NULL           -- \"MP_DEPTH=128 MP_THRESHOLD=0 ...\"\n" \
    ");\n" \
    "DROP TABLE sample;\n" \
    "CREATE TABLE IF NOT EXISTS sample (\n" \
    "    snapshot    INTEGER NOT NULL REFERENCES snapshot(id),\n" \
    "    stack       INTEGER NOT NULL REFERENCES stack(id),\n" \
    "    thread      INTEGER NOT NULL REFERENCES thread(id),\n" \
    "    ncalls      INTEGER NOT NULL,   -- allocations\n" \
    "    memtot      INTEGER NOT NULL,   -- bytes requested\n" \
    "    nfree       INTEGER NOT NULL,   -- of these blocks, how many were freed\n" \
    "    memlive     INTEGER NOT NULL,   -- bytes still allocated\n" \
    "    maxlive     INTEGER NOT NULL,   -- peak of memlive for this (stack, thread)\n" \
    "    PRIMARY KEY (snapshot, stack, thread)\n" \
    ") WITHOUT ROWID;\n" \
    "CREATE INDEX IF NOT EXISTS sample_stack ON sample(stack);\n" \
    "DROP VIEW last_sample;\n" \
    "CREATE VIEW IF NOT EXISTS last_sample AS\n" \
    "SELECT sn.process, sa.stack, sa.thread, sa.ncalls, sa.memtot, sa.nfree,\n" \
    "       sa.memlive, sa.maxlive\n" \
    "FROM sample sa JOIN snapshot sn ON sn.id = sa.snapshot\n" \
    "WHERE sa.snapshot = (SELECT MAX(s2.snapshot) FROM sample s2\n" \
    "                     WHERE s2.stack = sa.stack AND s2.thread = sa.thread);\n"
#define STACK_UNIQUE /* before 77d6cec: UNIQUE (parent, frame) */ \
    "DROP TABLE stack;\n" \
    "CREATE TABLE IF NOT EXISTS stack (\n" \
    "    id          INTEGER PRIMARY KEY,\n" \
    "    parent      INTEGER NOT NULL,            -- 0 = root\n" \
    "    frame       INTEGER NOT NULL REFERENCES frame(id),\n" \
    "    UNIQUE (parent, frame)\n" \
    ");\n"
#define VIEWS_5A1E854 /* before e882f41: views over every stack node */ \
    "DROP VIEW stack_path; DROP VIEW stack_frames;\n" \
    "CREATE VIEW IF NOT EXISTS stack_frames AS\n" \
    "WITH RECURSIVE walk(stack, depth, node) AS (\n" \
    "    SELECT id, 0, id FROM stack\n" \
    "    UNION ALL\n" \
    "    SELECT w.stack, w.depth + 1, s.parent FROM walk w JOIN stack s ON s.id = w.node\n" \
    "    WHERE s.parent != 0\n" \
    ")\n" \
    "SELECT w.stack, w.depth, fi.* FROM walk w\n" \
    "JOIN stack s ON s.id = w.node JOIN frame_info fi ON fi.frame = s.frame;\n" \
    "CREATE VIEW IF NOT EXISTS stack_path AS\n" \
    "SELECT stack,\n" \
    "       (SELECT function FROM stack_frames f2 WHERE f2.stack = f.stack AND f2.depth = 0) AS leaf,\n" \
    "       group_concat(CASE WHEN function != '' THEN function\n" \
    "                         ELSE module || '+0x' || printf('%x', offset) END, ';') AS path\n" \
    "FROM (SELECT * FROM stack_frames ORDER BY stack, depth DESC) f\n" \
    "GROUP BY stack;\n"

/* Variant v: the current schema with the changes 1..v applied. */
static const char *const variant_change[] = { "", FORMAT_V2, FORMAT_V1, STACK_UNIQUE, VIEWS_5A1E854 };
#define NVARIANTS (sizeof variant_change / sizeof *variant_change)

/* The tables SQLite itself adds to a file: sqlite_sequence (AUTOINCREMENT)
 * and the ANALYZE statistics, as this SQLite creates them. */
static const char internal_sql[] =
    "CREATE TABLE dbguard_autoinc(id INTEGER PRIMARY KEY AUTOINCREMENT);"
    "DROP TABLE dbguard_autoinc;"
    "ANALYZE;";

static const char master_sql[] = "SELECT type, name, tbl_name, sql FROM main.sqlite_master ORDER BY rowid";

enum { TYPE, NAME, TBL_NAME, SQL, NCOLS };
struct ref_row { char *col[NCOLS]; unsigned variants; };
struct reference { struct ref_row *rows; size_t n, cap; };

int db_harden(sqlite3 *db, int allow_views)
{
    const int settings[][2] = {
        { SQLITE_DBCONFIG_DEFENSIVE, 1 },
        { SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0 },
        { SQLITE_DBCONFIG_ENABLE_TRIGGER, 0 },
        { SQLITE_DBCONFIG_ENABLE_VIEW, allow_views != 0 },
    };
    for (size_t i = 0; i < sizeof settings / sizeof *settings; i++) {
        int now = -1;
        if (sqlite3_db_config(db, settings[i][0], settings[i][1], &now) != SQLITE_OK || now != settings[i][1])
            return -1;
    }
    return sqlite3_exec(db, "PRAGMA trusted_schema = OFF", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* ---------------------------------------------------------------- reference */
static int same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static int row_equal(const struct ref_row *r, const char *const col[NCOLS])
{
    for (int i = 0; i < NCOLS; i++)
        if (!same(r->col[i], col[i])) return 0;
    return 1;
}

static void reference_free(struct reference *ref)
{
    for (size_t i = 0; i < ref->n; i++)
        for (int c = 0; c < NCOLS; c++) sqlite3_free(ref->rows[i].col[c]);
    sqlite3_free(ref->rows);
    sqlite3_free(ref);
}

/* Adds a row of variant bit v, or the bit to an equal row. */
static int reference_add(struct reference *ref, const char *const col[NCOLS], unsigned v)
{
    for (size_t i = 0; i < ref->n; i++)
        if (row_equal(&ref->rows[i], col)) { ref->rows[i].variants |= v; return 0; }
    if (ref->n == ref->cap) {
        size_t cap = ref->cap ? 2 * ref->cap : 64;
        struct ref_row *rows = sqlite3_realloc64(ref->rows, cap * sizeof *rows);
        if (!rows) return -1;
        ref->rows = rows;
        ref->cap = cap;
    }
    struct ref_row *r = &ref->rows[ref->n++];
    memset(r, 0, sizeof *r);
    r->variants = v;
    for (int c = 0; c < NCOLS; c++)
        if (col[c] && !(r->col[c] = sqlite3_mprintf("%s", col[c]))) return -1;
    return 0;
}

static void row_columns(sqlite3_stmt *st, const char *col[NCOLS])
{
    for (int c = 0; c < NCOLS; c++) col[c] = (const char *)sqlite3_column_text(st, c);
}

/* Adds the rows of mem's sqlite_master as variant bit v; an SQLite code. */
static int reference_rows(struct reference *ref, sqlite3 *mem, unsigned v)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(mem, master_sql, -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *col[NCOLS];
        row_columns(st, col);
        rc = reference_add(ref, col, v) ? SQLITE_NOMEM : SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Every variant's rows, made in one private memory database (about 2 ms,
 * once per process). */
static struct reference *reference_build(void)
{
    struct reference *ref = sqlite3_malloc64(sizeof *ref);
    sqlite3 *mem = NULL;
    if (!ref) return NULL;
    memset(ref, 0, sizeof *ref);
    int rc = sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(mem, schema_sql, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(mem, internal_sql, NULL, NULL, NULL);
    for (unsigned v = 0; rc == SQLITE_OK && v < NVARIANTS; v++) {
        rc = sqlite3_exec(mem, variant_change[v], NULL, NULL, NULL);
        if (rc == SQLITE_OK) rc = reference_rows(ref, mem, 1u << v);
    }
    sqlite3_close(mem);
    if (rc == SQLITE_OK) return ref;
    reference_free(ref);
    return NULL;
}

static const struct reference *reference_get(void)
{
    static _Atomic(struct reference *) cache;
    struct reference *ref = atomic_load_explicit(&cache, memory_order_acquire);
    if (ref) return ref;
    struct reference *mine = reference_build();
    if (!mine) return NULL;
    /* another thread may have built it meanwhile: keep the first one */
    if (atomic_compare_exchange_strong_explicit(&cache, &ref, mine, memory_order_acq_rel, memory_order_acquire))
        return mine;
    reference_free(mine);
    return ref;
}

/* ---------------------------------------------------------------- checking */
/* Text from the file for a one-line message: control characters as '?',
 * cut with "..." to fit size. */
static const char *printable(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; s && *s && n + 4 < size; s++)
        out[n++] = (unsigned char)*s >= 0x20 && *s != 0x7f ? *s : '?';
    if (s && *s) n += (size_t)snprintf(out + n, size - n, "...");
    out[n] = 0;
    return out;
}

static int read_error(sqlite3 *db, char *err, size_t errsize)
{
    char why[200];
    snprintf(err, errsize, "cannot read the schema (%s)", printable(sqlite3_errmsg(db), why, sizeof why));
    return -1;
}

static int reject(const struct reference *ref, const char *const col[NCOLS], char *err, size_t errsize)
{
    int known = 0;
    for (size_t i = 0; i < ref->n && !known; i++)
        known = same(ref->rows[i].col[TYPE], col[TYPE]) && same(ref->rows[i].col[NAME], col[NAME]);
    char type[80], name[80];
    snprintf(err, errsize, "%s '%s' %s the mallocprof schema", printable(col[TYPE], type, sizeof type),
             printable(col[NAME], name, sizeof name), known ? "differs from" : "is not part of");
    return -1;
}

/* The variants (bits) that define exactly this row; 0 for none. */
static unsigned row_variants(const struct reference *ref, const char *const col[NCOLS])
{
    for (size_t i = 0; i < ref->n; i++)
        if (row_equal(&ref->rows[i], col)) return ref->rows[i].variants;
    return 0;
}

int db_schema_check(sqlite3 *db, char *err, size_t errsize)
{
    const struct reference *ref = reference_get();
    if (!ref) {
        snprintf(err, errsize, "cannot build the reference schema (out of memory)");
        return -1;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, master_sql, -1, &st, NULL) != SQLITE_OK) return read_error(db, err, errsize);
    unsigned possible = (1u << NVARIANTS) - 1;  /* the variants every row so far is in */
    int rc = SQLITE_DONE, result = 0;
    while (!result && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *col[NCOLS];
        row_columns(st, col);
        unsigned v = row_variants(ref, col) & possible;
        if (v) possible = v;
        else result = reject(ref, col, err, errsize);
    }
    if (!result && rc != SQLITE_DONE) result = read_error(db, err, errsize);
    sqlite3_finalize(st);
    return result;
}
