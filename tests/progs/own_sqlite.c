/* A program linked with its own SQLite (dynamically), using it
 * (tests/recorder/isolation.sh): with the profiler, its calls must reach
 * the libsqlite3.so.0 it was linked with and allocate as they do alone
 * (sqlite3_initialize's first allocations included), after a snapshot the
 * profiler wrote with its own SQLite. Prints where its
 * sqlite3_open_v2 is. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mallocprof.h>
#include <sqlite3.h>
#include <stdio.h>

int main(void)
{
    mp_snapshot("start");      /* profiled: the profile written (by SQLite) before ours starts */
    sqlite3 *db;
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) return 1;
    char *err = NULL;
    int rc = sqlite3_exec(db, "CREATE TABLE t(a INTEGER, b TEXT);"
                              "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 500)"
                              "  INSERT INTO t SELECT i, printf('row %d', i) FROM c;"
                              "CREATE INDEX tb ON t(b);", NULL, NULL, &err);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "own_sqlite: %s\n", err);
        return 1;
    }
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT COUNT(*), SUM(a) FROM t WHERE b LIKE 'row 1%'", -1, &st, NULL);
    sqlite3_step(st);
    printf("%d rows, %lld\n", sqlite3_column_int(st, 0), (long long)sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    sqlite3_close(db);
    Dl_info info;
    printf("sqlite3_open_v2 in %s\n", dladdr((void *)sqlite3_open_v2, &info) && info.dli_fname ? info.dli_fname : "?");
    return 0;
}
