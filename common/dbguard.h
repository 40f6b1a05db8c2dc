/* A profile database file is untrusted input: its schema may carry
 * triggers, views, CHECK or DEFAULT expressions that SQLite would run on the
 * reader's or writer's behalf. db_harden turns off what could run them;
 * db_schema_check accepts a file only when every object of its schema is one
 * that schema/profile.sql, or an older version's schema/v*.sql, defines,
 * with the same SQL. Compiled into both the recorder and mpquery (no
 * dependency on internal.h). */
#ifndef MP_DBGUARD_H
#define MP_DBGUARD_H

#include <sqlite3.h>
#include <stddef.h>

/* Hardens a freshly opened connection: SQLITE_DBCONFIG_DEFENSIVE on,
 * trusted_schema OFF (SQLITE_DBCONFIG_TRUSTED_SCHEMA 0 and PRAGMA
 * trusted_schema=OFF), triggers off (SQLITE_DBCONFIG_ENABLE_TRIGGER 0), views
 * off unless allow_views (SQLITE_DBCONFIG_ENABLE_VIEW). Returns 0 or -1. */
int db_harden(sqlite3 *db, int allow_views);

/* Checks that every object in the file's sqlite_master (type, name,
 * tbl_name, sql) is one that schema/profile.sql defines (or defined: files
 * keep the schema of the version that created them), with the same SQL.
 * 0 = ok (an empty database is ok too); -1 and a one-line reason in err
 * ("trigger 'x' is not part of the mallocprof schema", "table 'stack'
 * differs from the mallocprof schema") otherwise. */
int db_schema_check(sqlite3 *db, char *err, size_t errsize);

#endif
