/* Untrusted database files: SQL a file brings must never run. The reference
 * schemas are the compiled-in schema/profile.sql and the older versions'
 * schema/v*.sql (variants), each executed in a private in-memory database,
 * so SQLite's own normalization of the CREATE text applies to both sides;
 * their sqlite_master rows are built once per process, the current
 * version's first and the older ones only when a file needs them
 * (published with one atomic pointer: no lock, so fork cannot leave one
 * held) and every file's rows must be among them, all from one variant.
 *
 * The current version's rows are also built at build time, by this same
 * code (tools/dbguard_gen.c), into build/schema_ref.h with the identity of the
 * SQLite library that made them (its source id and compile options): a
 * process whose library is that one takes them from there, without the
 * schema's execution (11 M instructions, half of what a small process's
 * profile costs it). Another library builds them as before. */
#include "dbguard.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static const char schema_sql[] =
#include "schema.h"
;

/* A file keeps the schema of the version that created it (the schema is
 * created only in an empty file): the current one, or one of the older
 * versions' schema/v*.sql, as written then. The recorder writes only the
 * current version. */
static const char *const variant_sql[] = {
    schema_sql,
#include "schema_old.h"
};
#define NVARIANTS (sizeof variant_sql / sizeof *variant_sql)
_Static_assert(NVARIANTS < 32, "a variant is a bit of an unsigned");

/* The tables SQLite itself adds to a file: sqlite_sequence (AUTOINCREMENT)
 * and the ANALYZE statistics, as this SQLite creates them. */
static const char internal_sql[] =
    "CREATE TABLE dbguard_autoinc(id INTEGER PRIMARY KEY AUTOINCREMENT);"
    "DROP TABLE dbguard_autoinc;"
    "ANALYZE;";

static const char master_sql[] = "SELECT type, name, tbl_name, sql FROM main.sqlite_master ORDER BY rowid";

enum { TYPE, NAME, TBL_NAME, SQL, NCOLS };
struct ref_row { char *col[NCOLS]; unsigned variants; };
struct reference { struct ref_row *rows; size_t n, cap; int built_in; };

/* build/schema_ref.h: SCHEMA_REF_LIBRARY (library_identity's text at build
 * time) and schema_ref_rows, variant 0's rows (dbguard_gen.c makes it) */
#ifdef DBGUARD_GEN
static const char SCHEMA_REF_LIBRARY[] = "";
static const char *const schema_ref_rows[][NCOLS] = { { NULL, NULL, NULL, NULL } };
#else
#include "schema_ref.h"
#endif

/* The SQLite library's identity, as far as the rows it makes go: its
 * source id and compile options, into out (cut to size: then no match). */
static void library_identity(char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "%s", sqlite3_sourceid());
    const char *o;
    for (int i = 0; (o = sqlite3_compileoption_get(i)) && n < size; i++)
        n += (size_t)snprintf(out + n, size - n, "|%s", o);
    if (n >= size) out[0] = 0;
}

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
    for (size_t i = 0; i < ref->n && !ref->built_in; i++)
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

/* The rows of the first n variants, each made in a private memory database. */
static struct reference *reference_build(unsigned n)
{
    struct reference *ref = sqlite3_malloc64(sizeof *ref);
    sqlite3 *mem = NULL;
    if (!ref) return NULL;
    memset(ref, 0, sizeof *ref);
    int rc = SQLITE_OK;
    for (unsigned v = 0; rc == SQLITE_OK && v < n; v++) {
        rc = sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_exec(mem, variant_sql[v], NULL, NULL, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_exec(mem, internal_sql, NULL, NULL, NULL);
        if (rc == SQLITE_OK) rc = reference_rows(ref, mem, 1u << v);
        sqlite3_close(mem);
        mem = NULL;
    }
    if (rc == SQLITE_OK) return ref;
    reference_free(ref);
    return NULL;
}

/* Variant 0's rows from build/schema_ref.h (their text not copied) when
 * this process's SQLite is the one that made them; NULL otherwise. */
static struct reference *reference_built_in(void)
{
    char id[4096];
    library_identity(id, sizeof id);
    if (!id[0] || strcmp(id, SCHEMA_REF_LIBRARY) != 0) return NULL;
    size_t n = sizeof schema_ref_rows / sizeof *schema_ref_rows;
    struct reference *ref = sqlite3_malloc64(sizeof *ref);
    struct ref_row *rows = sqlite3_malloc64(n * sizeof *rows);
    if (!ref || !rows) {
        sqlite3_free(ref);
        sqlite3_free(rows);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        memcpy(rows[i].col, schema_ref_rows[i], sizeof rows[i].col);
        rows[i].variants = 1;
    }
    *ref = (struct reference){ .rows = rows, .n = n, .cap = n, .built_in = 1 };
    return ref;
}

/* The reference of the current version alone (all = 0) or of every
 * version (all = 1), built once per process: a file of the current version
 * (every file the recorder writes) costs one schema's execution, not one
 * per version (about 8 M instructions each). */
static const struct reference *reference_get(int all)
{
    static _Atomic(struct reference *) cache[2];
    struct reference *ref = atomic_load_explicit(&cache[all], memory_order_acquire);
    if (ref) return ref;
    struct reference *mine = all ? reference_build(NVARIANTS) : reference_built_in();
    if (!mine && !all) mine = reference_build(1);
    if (!mine) return NULL;
    /* another thread may have built it meanwhile: keep the first one */
    if (atomic_compare_exchange_strong_explicit(&cache[all], &ref, mine, memory_order_acq_rel, memory_order_acquire))
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

/* 0 when every row of db's schema is in ref, all from one variant; else -1
 * with the reason in err. */
static int check_against(sqlite3 *db, const struct reference *ref, char *err, size_t errsize)
{
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

int db_schema_check(sqlite3 *db, char *err, size_t errsize)
{
    /* the current version first; the older ones only for a file it refuses */
    if (check_against(db, reference_get(0), err, errsize) == 0) return 0;
    return check_against(db, reference_get(1), err, errsize);
}
