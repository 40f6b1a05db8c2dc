/* mallocprof's store on ClickHouse: schema/clickhouse.sql's statements
 * (compiled in, each idempotent) and each table's columns as push writes
 * and --server reads them, made from the profile format's tables
 * (prof/format.h); ch_create_schema checks the store has them, and the
 * store's version (view mp_version) against this mpquery's. */
#include "chstore.h"
#include "format.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const ch_table_name[CH_NTABLES] = {
    "mp_frame", "mp_stack", "mp_process", "mp_thread", "mp_snapshot", "mp_totals", "mp_sample", "mp_hist",
    "mp_stack_hist", "mp_growth", "mp_growth_run", "mp_run",
};

static const char ch_schema_sql[] =
#include "clickhouse_schema.h"
;

/* The columns chstore.c's rows fill, in their order, with the types their
 * RowBinary encoding assumes: the store's own keys, then those of the
 * format's table from column `first` on (INTEGER as Int64, REAL as
 * Float64, TEXT as String). ch_create_schema checks them against the
 * store, and each INSERT names its columns (a column a later schema adds
 * with a default does not break a push). */
#define CH_KEYS "run UInt64, process UInt32"
static const struct { const char *keys; int table, first; } layout[CH_NTABLES] = {
    [CH_FRAME] = { "frame UInt64, module String, build_id String, offset Int64, inline_depth UInt32, "
                   "function String, file String, line UInt32", -1, 0 },
    [CH_STACK] = { "stack UInt64, frames Array(UInt64)", -1, 0 },
    [CH_PROCESS] = { CH_KEYS, FT_process, FC_process_pid },
    [CH_THREAD] = { CH_KEYS ", thread UInt32", FT_thread, FC_thread_seq },
    [CH_SNAPSHOT] = { CH_KEYS ", seq UInt32", FT_snapshot, FC_snapshot_time },
    [CH_TOTALS] = { CH_KEYS ", seq UInt32, thread UInt32", FT_totals, FC_totals_ncalls },
    [CH_SAMPLE] = { CH_KEYS ", seq UInt32, stack UInt64, thread UInt32", FT_sample, FC_sample_ncalls },
    [CH_HIST] = { CH_KEYS ", seq UInt32", FT_hist, FC_hist_lo },
    [CH_STACK_HIST] = { CH_KEYS ", seq UInt32, stack UInt64, thread UInt32", FT_stack_hist, FC_stack_hist_lo },
    [CH_GROWTH] = { "run UInt64, process UInt32, seq UInt32, at UInt32, g String, stack UInt64", FT_sample,
                    FC_sample_ncalls },
    [CH_GROWTH_RUN] = { "run UInt64", -1, 0 },
    [CH_RUN] = { "run UInt64, token String, start_time Float64, pushed DateTime, source String, host String, "
                 "exe String, cmdline String, processes UInt32, snapshots UInt32, rows UInt64", -1, 0 },
};

static const char *ch_type(const char *sql_type)
{
    return !strcmp(sql_type, "REAL") ? "Float64" : !strcmp(sql_type, "TEXT") ? "String" : "Int64";
}

void ch_columns(int t, int with_types, struct strbuf *out)
{
    struct strbuf all = { 0 };
    sb_puts(&all, layout[t].keys);
    const struct format_table_def *d = layout[t].table < 0 ? NULL : &format_tables[layout[t].table];
    for (int c = layout[t].first; d && c < d->ncols; c++)
        sb_printf(&all, ", %s %s", d->col[c].name, ch_type(d->col[c].type));
    if (with_types) {
        sb_add(out, all.s, all.len);
    } else {
        for (const char *c = all.s; *c;) {     /* the names only */
            sb_add(out, c, strcspn(c, " "));
            c += strcspn(c, ",");
            if (*c) { sb_puts(out, ", "); c += 2; }
        }
    }
    sb_free(&all);
}

int ch_ncolumns(int t)
{
    int n = 1;
    for (const char *c = layout[t].keys; *c; c++) n += *c == ',';
    return n + (layout[t].table < 0 ? 0 : format_tables[layout[t].table].ncols - layout[t].first);
}

/* ---------------------------------------------------------------- the schema */
/* A statement holds something besides blanks and -- comments. */
static int has_sql(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '-' && i + 1 < n && s[i + 1] == '-') {
            while (i < n && s[i] != '\n') i++;
        } else if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') {
            return 1;
        }
    }
    return 0;
}

/* One expected column against the store's (rows "table<TAB>name<TAB>type"
 * of system.columns in out); 0, or EXIT_FAILED with err set. */
static int check_column(struct ch *c, const char *table, const char *name, size_t nlen, const char *type,
                        size_t tlen, const struct strbuf *out, char *err, size_t errlen)
{
    struct strbuf f[3] = { { 0 } };
    const char *cur = out->s, *end = out->s + out->len;
    int found = 0, rc = 0;
    while (!found && cur < end) {
        int sep = 0;
        for (int i = 0; i < 3 && (i == 0 || sep == '\t'); i++) sep = tsv_field(&cur, end, &f[i]);
        found = !strcmp(f[0].s, table) && f[1].len == nlen && !memcmp(f[1].s, name, nlen);
    }
    if (!found) {
        snprintf(err, errlen, "%s: the store's %s has no column %.*s (not a store of this mpquery's "
                 "schema/clickhouse.sql)", c->url, table, (int)nlen, name);
        rc = EXIT_FAILED;
    } else if (f[2].len != tlen || memcmp(f[2].s, type, tlen)) {
        snprintf(err, errlen, "%s: the store's %s.%.*s is %s, mpquery push writes %.*s (not a store of "
                 "this mpquery's schema/clickhouse.sql)", c->url, table, (int)nlen, name, f[2].s, (int)tlen, type);
        rc = EXIT_FAILED;
    }
    for (int i = 0; i < 3; i++) sb_free(&f[i]);
    return rc;
}

/* Every column of the layout has its type in the store. */
static int check_columns(struct ch *c, char *err, size_t errlen)
{
    struct strbuf sql = { 0 }, out = { 0 };
    sb_puts(&sql, "SELECT table, name, type FROM system.columns WHERE database = currentDatabase() AND table IN (");
    for (int t = 0; t < CH_NTABLES; t++) sb_printf(&sql, "%s'%s'", t ? ", " : "", ch_table_name[t]);
    sb_putc(&sql, ')');
    int rc = ch_query(c, sql.s, 1, &out, err, errlen);
    struct strbuf cols = { 0 };
    for (int t = 0; t < CH_NTABLES && !rc; t++) {
        cols.len = 0;
        ch_columns(t, 1, &cols);
        for (const char *col = cols.s; *col && !rc;) {
            size_t nlen = strcspn(col, " "), tlen = strcspn(col + nlen + 1, ",");
            rc = check_column(c, ch_table_name[t], col, nlen, col + nlen + 1, tlen, &out, err, errlen);
            col += nlen + 1 + tlen;
            col += strspn(col, ", ");
        }
    }
    sb_free(&cols);
    sb_free(&sql);
    sb_free(&out);
    return rc;
}

/* ---------------------------------------------------------------- the version */
/* This mpquery's store version: the number clickhouse.sql's view mp_version
 * says, so that the file is its one definition. */
static const char version_sql[] = "CREATE VIEW IF NOT EXISTS mp_version AS SELECT toUInt32(";

int ch_schema_version(void)
{
    const char *v = strstr(ch_schema_sql, version_sql);
    return v ? atoi(v + sizeof version_sql - 1) : 0;
}

/* The store's version: its view's number; without the view 1 when it has
 * tables (a store from before versions), 0 when it has none (new). */
static int store_version(struct ch *c, long *version, char *err, size_t errlen)
{
    struct strbuf out = { 0 };
    int rc = ch_query(c, "SELECT version FROM mp_version", 1, &out, err, errlen);
    if (!rc) *version = strtol(out.s ? out.s : "", NULL, 10);
    if (rc && c->exception_code == 60) {        /* no such view */
        out.len = 0;
        rc = ch_query(c, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'mp_run'",
                      1, &out, err, errlen);
        *version = !rc && out.s && out.s[0] != '0';
    }
    sb_free(&out);
    return rc;
}

int ch_check_version(struct ch *c, long *version, char *err, size_t errlen)
{
    int rc = store_version(c, version, err, errlen);
    if (rc || *version <= ch_schema_version()) return rc;
    snprintf(err, errlen, "%s: the store is of version %ld, this mpquery reads versions 1 to %d (upgrade mpquery)",
             c->url, *version, ch_schema_version());
    return EXIT_FAILED;
}

/* ---------------------------------------------------------------- --ttl */
/* The active partitions of table t of the runs started before day cutoff. */
static int expired(struct ch *c, const char *table, long cutoff, struct strbuf *out, char *err, size_t errlen)
{
    struct strbuf sql = { 0 };
    sb_printf(&sql, "SELECT DISTINCT partition FROM system.parts WHERE database = currentDatabase() AND table = '%s'"
                    " AND active AND toInt64OrZero(partition) < %ld ORDER BY partition", table, cutoff);
    out->len = 0;
    int rc = ch_query(c, sql.s, 1, out, err, errlen);
    sb_free(&sql);
    return rc;
}

int ch_drop_expired(struct ch *c, long days, long *runs, char *err, size_t errlen)
{
    static const char *const tables[] = { "mp_run", "mp_process", "mp_thread", "mp_snapshot", "mp_totals",
                                          "mp_sample", "mp_hist", "mp_stack_hist", "mp_growth_run", ".inner.mp_growth_seen",
                                          ".inner.mp_growth_second", ".inner.mp_growth_minute" };
        /* mp_run first: readers see no part of a dropped run; a view's rows are in its .inner table */
    long version, cutoff = (long)(time(NULL) / 86400) - days;
    int rc = ch_check_version(c, &version, err, errlen);
    if (!rc && version < 2) {
        snprintf(err, errlen, "%s: --ttl: the store is of version 1, not partitioned by day (made before "
                 "version 2): nothing dropped", c->url);
        return EXIT_FAILED;
    }
    struct strbuf out = { 0 }, sql = { 0 };
    sb_printf(&sql, "SELECT count() FROM mp_run WHERE bitShiftRight(run, 48) < %ld", cutoff);
    if (!rc) rc = ch_query(c, sql.s, 1, &out, err, errlen);
    *runs = rc ? 0 : strtol(out.s ? out.s : "", NULL, 10);
    for (size_t i = 0; i < sizeof tables / sizeof *tables && !rc; i++) {
        if ((rc = expired(c, tables[i], cutoff, &out, err, errlen))) break;
        for (const char *part = out.s ? out.s : ""; *part && !rc; part += strcspn(part, "\n") + 1) {
            sql.len = 0;
            sb_printf(&sql, "ALTER TABLE `%s` DROP PARTITION %ld", tables[i], strtol(part, NULL, 10));
            struct strbuf ignored = { 0 };
            rc = ch_query(c, sql.s, 0, &ignored, err, errlen);
            sb_free(&ignored);
        }
    }
    sb_free(&out);
    sb_free(&sql);
    return rc;
}

/* ---------------------------------------------------------------- creating it */
int ch_create_schema(struct ch *c, char *err, size_t errlen)
{
    struct strbuf stmt = { 0 }, out = { 0 };
    long version;
    int rc = ch_check_version(c, &version, err, errlen);
    /* statements end at a line holding only ';'; a store of version 1 stays
     * so (its tables are not partitioned by day): no view */
    for (const char *s = ch_schema_sql; *s && !rc;) {
        const char *end = strstr(s, "\n;\n");
        size_t n = end ? (size_t)(end - s) : strlen(s);
        const char *view = strstr(s, version_sql);
        if (has_sql(s, n) && !(version == 1 && view && view < s + n)) {
            stmt.len = 0;
            sb_add(&stmt, s, n);
            out.len = 0;
            rc = ch_query(c, stmt.s, 0, &out, err, errlen);
        }
        s += end ? n + 3 : n;
    }
    sb_free(&stmt);
    sb_free(&out);
    return rc ? rc : check_columns(c, err, errlen);
}
