/* The profile format's columns, written once: build/format_columns.h is made
 * by schema/format.awk from schema/profile.sql (and the older versions'
 * schema/v*.sql, for the version that added each column), so the table and
 * the .sql cannot drift. The recorder's INSERTs, mpquery's loader, merge and
 * the ClickHouse store's rows are made from it. Both programs include it; it
 * depends on neither. */
#ifndef MP_FORMAT_H
#define MP_FORMAT_H

#include <stddef.h>
#include <stdio.h>

#include "format_columns.h"

/* FT_<table>: the tables, in the order of schema/profile.sql. */
#define FORMAT_TABLE_ENUM(t) FT_##t,
enum format_table { FORMAT_TABLES(FORMAT_TABLE_ENUM) FT_N };

/* FC_<table>_<column>: the column's place in its table's rows (as in CREATE
 * TABLE); FC_<table>_N: how many columns the table has. */
#define FORMAT_COL_ENUM(t, c, type, since, deflt) FC_##t##_##c,
#define FORMAT_COLS_ENUM(t) enum { FORMAT_##t(FORMAT_COL_ENUM) FC_##t##_N };
FORMAT_TABLES(FORMAT_COLS_ENUM)

/* The widest table's columns: rows of any table fit in this many values. */
#define FORMAT_MAX_COLS 16
#define FORMAT_FITS(t) _Static_assert(FC_##t##_N <= FORMAT_MAX_COLS, "FORMAT_MAX_COLS holds a row of " #t);
FORMAT_TABLES(FORMAT_FITS)

/* A column: its name, SQL type, the format version that added it, and the
 * value an older file's rows have (its DEFAULT, as SQL; NULL: none). */
struct format_column { const char *name, *type, *deflt; int since; };
struct format_table_def {
    const char *name;
    const char *columns;                /* "c1, c2, ...": every column, in order */
    int ncols;
    const struct format_column *col;    /* by FC_<table>_<column> */
};
#define FORMAT_COL_DEF(t, c, type, since, deflt) { #c, #type, deflt, since },
#define FORMAT_COL_NAME(t, c, type, since, deflt) ", " #c
#define FORMAT_TABLE_DEF(t) \
    [FT_##t] = { #t, FORMAT_##t(FORMAT_COL_NAME) + 2, FC_##t##_N, \
                 (const struct format_column[]){ FORMAT_##t(FORMAT_COL_DEF) } },
static const struct format_table_def format_tables[FT_N] = { FORMAT_TABLES(FORMAT_TABLE_DEF) };

/* "INSERT INTO t (every column) VALUES (?, ...), ..." for `rows` rows into
 * buf (verb: "INSERT", "INSERT OR IGNORE"); the length, or -1 when size is
 * too small. Row r's column c is parameter r * ncols + c + 1; one left
 * unbound is NULL: an INTEGER PRIMARY KEY then gets the next id. */
static inline int format_insert_sql(const char *verb, enum format_table t, int rows, char *buf, size_t size)
{
    const struct format_table_def *d = &format_tables[t];
    size_t len = (size_t)snprintf(buf, size, "%s INTO %s (%s) VALUES ", verb, d->name, d->columns);
    for (int r = 0; r < rows && len < size; r++)
        for (int c = 0; c < d->ncols && len < size; c++)
            len += (size_t)snprintf(buf + len, size - len, "%s?%s", c ? ", " : r ? ", (" : "(",
                                    c + 1 < d->ncols ? "" : ")");
    return len < size ? (int)len : -1;
}
/* Room for format_insert_sql's statement of `rows` rows of any table. */
#define FORMAT_INSERT_SIZE(rows) (180 + 14 * FORMAT_MAX_COLS + (rows) * (3 * FORMAT_MAX_COLS + 4))
/* The parameter of column c of table t in a one-row statement. */
#define FORMAT_PARAM(t, c) (1 + FC_##t##_##c)

#endif
