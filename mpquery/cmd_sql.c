/* mpquery sql DB "SELECT ...": one read-only statement against the profile
 * and its views, printed as an aligned table, CSV or JSON. The database is
 * opened read-only and statements that would write are refused before they
 * run (sqlite3_stmt_readonly). */
#include "mpquery.h"
#include "profile.h"
#include "commands.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery sql DB \"SELECT ...\" [--format text|csv|json]\n"
"\n"
"Runs one read-only SQL statement (SQLite) on the profile. The tables are\n"
"those of schema/profile.sql (run, process, thread, module, function, file,\n"
"frame, stack, snapshot, sample, totals, hist, stack_hist); these views make\n"
"common questions one-liners:\n"
"\n"
"  frame_info      one row per frame with names resolved: frame, module,\n"
"                  build_id, offset, inline_depth, function, file, line\n"
"  last_snapshot   the latest snapshot of each process\n"
"  last_sample     current counters of every (process, stack, thread) as of\n"
"                  the process's latest snapshot\n""  peak_snapshot   each process's peak: its latest snapshot of reason 'peak'\n"
"  peak_sample     counters of every (process, stack, thread) at the peak\n"
"  stack_frames    frames of every sampled stack: stack, depth (0 = leaf), frame_info\n"
"  stack_path      stack, leaf function, path 'root;...;leaf' of raw names\n"
"  stack_totals    current counters per stack summed over threads and\n"
"                  processes, with leaf and path\n"
"  process_totals  each process's exact totals at its latest snapshot\n"
"                  (including allocations without a stack)\n"
"\n"
"Rules do not apply here: names are as stored.\n"
"\n";

static const char more[] =
"\n"
"examples:\n"
"  mpquery sql app.db \"SELECT leaf, memtot FROM stack_totals ORDER BY memtot DESC LIMIT 5\"\n"
"  mpquery sql app.db \"SELECT pid, exe, memlive FROM process_totals\" --format csv\n";

static const struct opt opts[] = {
    OPTION_FORMAT("text (default), csv or json (an array of objects)"),
    OPTION_NO_PAGER,
    { 0 }
};

static const struct cmd_opts sql_opts = {
    .cmd = "sql", .usage = usage, .more = more, .opts = opts,
    .operands = 2, .missing = "needs DB and a query", .readable = 1
};

static int only_space(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != ';') return 0;
    return 1;
}

static int run_query(const struct common *c, const char *path, sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, &tail) != SQLITE_OK)
        return error(EXIT_BAD_INPUT, "%s: sql: %s", path, sqlite3_errmsg(db));
    if (!st) return error(EXIT_BAD_INPUT, "%s: sql: empty statement", path);
    if (tail && !only_space(tail)) {
        sqlite3_finalize(st);
        return error(EXIT_BAD_INPUT, "%s: sql: one statement only", path);
    }
    if (!sqlite3_stmt_readonly(st)) {
        sqlite3_finalize(st);
        return error(EXIT_BAD_INPUT, "%s: sql: only read-only statements are allowed", path);
    }
    int ncols = sqlite3_column_count(st);
    const char **cols = xmalloc((size_t)ncols * sizeof *cols);
    for (int i = 0; i < ncols; i++) {
        const char *name = sqlite3_column_name(st, i);
        cols[i] = name ? name : "?";
    }
    struct table tab;
    table_init(&tab, (size_t)ncols, cols);
    int rc;
    char blob[64];
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < ncols; i++) {
            switch (sqlite3_column_type(st, i)) {
            case SQLITE_INTEGER: table_int(&tab, sqlite3_column_int64(st, i)); break;
            case SQLITE_FLOAT: table_double(&tab, sqlite3_column_double(st, i)); break;
            case SQLITE_NULL: table_null(&tab); break;
            case SQLITE_BLOB:
                snprintf(blob, sizeof blob, "<blob %d bytes>", sqlite3_column_bytes(st, i));
                table_str(&tab, blob);
                break;
            default: {
                const char *s = (const char *)sqlite3_column_text(st, i);
                table_strn(&tab, s ? s : "", (size_t)sqlite3_column_bytes(st, i));
            }
            }
        }
    }
    int result = 0;
    if (rc != SQLITE_DONE) result = error(EXIT_BAD_INPUT, "%s: sql: %s", path, sqlite3_errmsg(db));
    else if (ncols > 0) table_print(&tab, c->out.format, stdout);
    table_free(&tab);
    free(cols);
    sqlite3_finalize(st);
    return result;
}

int cmd_sql(int argc, char **argv)
{
    struct common c;
    int rc = parse_options(&c, &sql_opts, argc, argv);
    if (rc != PARSE_OK) return rc;
    const char *path = argv[optind];
    sqlite3 *db;
    char err[512];
    if ((rc = profile_open_db(path, &db, 0, err, sizeof err))) return error(rc, "%s: %s", path, err);
    rc = run_query(&c, path, db, argv[optind + 1]);
    sqlite3_close(db);
    return rc;
}
