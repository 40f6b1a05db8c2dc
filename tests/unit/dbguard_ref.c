/* The schema check's built-in reference (common/dbguard.c): the rows
 * build/schema_ref.h holds are the ones this process's SQLite builds from
 * schema/profile.sql (so a process that takes them checks files exactly as
 * one that builds them), they are taken when the library is the build's,
 * and a file made from the schema passes while one with an object of its
 * own does not, either way. */
#include "dbguard.c"
#include "check.h"

/* Whether every row of a is in b (same columns). */
static int rows_in(const struct reference *a, const struct reference *b)
{
    for (size_t i = 0; i < a->n; i++) {
        const char *col[NCOLS];
        memcpy(col, a->rows[i].col, sizeof col);
        if (!row_variants(b, col)) {
            fprintf(stderr, "row not in the other reference: %s %s\n", col[TYPE], col[NAME]);
            return 0;
        }
    }
    return 1;
}

/* A memory database made from sql: db_schema_check's verdict on it. */
static int check_made(const char *sql)
{
    sqlite3 *db;
    CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    char err[300] = "";
    int rc = db_schema_check(db, err, sizeof err);
    sqlite3_close(db);
    return rc;
}

int main(void)
{
    struct reference *built_in = reference_built_in(), *built = reference_build(1);
    CHECK(built_in != NULL);
    CHECK(built != NULL);
    CHECK(built_in->built_in && !built->built_in);
    CHECK_EQ(built_in->n, built->n);
    CHECK(built_in->n > 20);
    CHECK(rows_in(built_in, built) && rows_in(built, built_in));
    OK("the built-in rows are the %zu rows this library builds", built->n);
    reference_free(built_in);
    reference_free(built);

    CHECK(reference_get(0)->built_in);
    CHECK(check_made(schema_sql) == 0);
    CHECK(check_made("CREATE TABLE x(a)") != 0);
    char sql[sizeof schema_sql + 100];
    snprintf(sql, sizeof sql, "%sCREATE TRIGGER t AFTER INSERT ON run BEGIN SELECT 1; END;", schema_sql);
    CHECK(check_made(sql) != 0);
    OK("reference_get takes them; a file of the schema passes, one with a table or trigger of its own not");

    char id[4096];
    library_identity(id, sizeof id);
    CHECK(strcmp(id, SCHEMA_REF_LIBRARY) == 0);
    char small[8];
    library_identity(small, sizeof small);
    CHECK(small[0] == 0);
    OK("the library's identity is the build's; cut short, it matches nothing");
    return 0;
}
