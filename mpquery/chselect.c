/* --server URL, the selection: the runs of the store that --where, --exe,
 * --host and --since choose (a subquery over mp_runs, each expression
 * checked to be one), the queries of the stacks' sums (per --group key
 * too) and their frames, sent with readonly=1, and their TabSeparated
 * answers read row by row. */
#include "optdefs.h"
#include "chquery.h"
#include "chstore.h"
#include "select.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- the selection */
/* --where must be one expression: quotes closed, parentheses balanced and
 * never closed below the start, no statement separator, comment or
 * $-string (which could hide the closing parenthesis mpquery adds). */
static int where_check(const char *w, char *err, size_t errlen)
{
    int depth = 0;
    char q = 0;
    if (!*w) return snprintf(err, errlen, "--where: empty expression"), EXIT_BAD_INPUT;
    for (const char *s = w; *s; s++) {
        if (q) {
            if (*s == '\\' && s[1]) s++;
            else if (*s == q) q = 0;
            continue;
        }
        if (*s == '\'' || *s == '"' || *s == '`') q = *s;
        else if (*s == '(') depth++;
        else if (*s == ')' && --depth < 0) break;
        /* '$': the $$...$$ strings of newer releases, which this check does not read */
        if (*s == '$' || *s == ';' || (*s == '-' && s[1] == '-') || (*s == '/' && s[1] == '*') || *s == '#') {
            snprintf(err, errlen, "--where '%s': '%c' is not allowed (one expression over the columns of mp_runs)", w, *s);
            return EXIT_BAD_INPUT;
        }
    }
    if (q || depth) {
        snprintf(err, errlen, "--where '%s': %s", w, q ? "unclosed quote" : "unbalanced parentheses");
        return EXIT_BAD_INPUT;
    }
    return 0;
}

/* --exe NAME as the files' (procs_exe_matches): the runs with a process
 * whose executable's file name or argv[0]'s name (as info shows it: no
 * directory, login shell's '-' and a retitled name's ':' aside) is NAME;
 * a path: the executable's path or argv[0] as typed. */
static void exe_sql(const char *exe, struct strbuf *sql)
{
    static const char argv0[] = "splitByChar(' ', cmdline)[1]";
    sb_puts(sql, " AND run IN (SELECT run FROM mp_process WHERE ");
    if (strchr(exe, '/')) {
        sb_puts(sql, "exe = ");
        ch_quote(sql, exe);
        sb_printf(sql, " OR %s = ", argv0);
    } else {
        sb_puts(sql, "arrayElement(splitByChar('/', exe), -1) = ");
        ch_quote(sql, exe);
        sb_printf(sql, " OR replaceRegexpAll(arrayElement(splitByChar('/', %s), -1), '^-|:$', '') = ", argv0);
    }
    ch_quote(sql, exe);
    sb_puts(sql, ")");
}

/* "SELECT run FROM mp_runs WHERE ..." for side (0, 1; -1: no side). */
static int runs_sql(const struct server_opts *o, int side, struct strbuf *sql, char *err, size_t errlen)
{
    sb_puts(sql, "SELECT run FROM mp_runs WHERE 1");
    const char *wheres[2] = { o->where, side >= 0 ? o->side_where[side] : NULL };
    for (int i = 0; i < 2; i++) {
        if (!wheres[i]) continue;
        int rc = where_check(wheres[i], err, errlen);
        if (rc) return rc;
        sb_printf(sql, " AND (%s\n)", wheres[i]);
    }
    if (o->exe) exe_sql(o->exe, sql);
    if (o->host) {
        sb_puts(sql, " AND host = ");
        ch_quote(sql, o->host);
    }
    if (o->since) {
        struct when w;
        if (when_parse(o->since, 0, &w)) {
            snprintf(err, errlen, "--since '%s': not a time (seconds since the epoch, YYYY-MM-DD[ HH:MM[:SS]] "
                     "or an age such as 2h, 7d)", o->since);
            return EXIT_BAD_INPUT;
        }
        sb_printf(sql, " AND start_time >= %.17g", w.t);
    }
    return 0;
}

/* A window's end as a condition on a snapshot's time: +S from its run's
 * first process's start (t0), or a time; none: every snapshot (until)
 * or none (since). The same sums of doubles as the files' (window.c). */
static void window_end_sql(const char *arg, int none, struct strbuf *q)
{
    struct when w;
    if (!arg || when_parse(arg, 1, &w)) sb_printf(q, "%d", none);
    else sb_printf(q, "time <= %s%.17g", w.rel ? "t0 + " : "", w.t);
}

/* Per (run, process): the snapshots at the window's ends (useq, sseq;
 * 0: none), the last at or before each, peak snapshots aside. */
void ch_window_sql(const struct server_opts *o, const char *R, struct strbuf *q)
{
    sb_puts(q, " ALL INNER JOIN (SELECT run, process, maxIf(seq, ");
    window_end_sql(o->win_until, 1, q);
    sb_puts(q, ") AS useq, maxIf(seq, ");
    window_end_sql(o->win_since, 0, q);
    sb_printf(q, ") AS sseq FROM mp_snapshot ALL INNER JOIN (SELECT run, min(start_time) AS t0 FROM mp_process"
                 " WHERE run IN (%s) GROUP BY run) USING (run) WHERE run IN (%s) AND reason != 'peak'"
                 " GROUP BY run, process) USING (run, process)", R, R);
}

/* ---------------------------------------------------------------- the sums */
const int ch_counter_of_col[CH_NCOUNTERS] = { NCALLS, MEMTOT, NFREE, MEMLIVE, MAXLIVE, NTEMP, TIME, NMAP, MAPPED,
                                              MAXMAPPED, RSS, MEMCOLD, COLDAGE };
#define counter_col(i) counter_name[ch_counter_of_col[i]]

/* --group's key of a process, as group_key (threads.c) makes it: its
 * host, its pid, or its executable and argv[0] (no space in it, so the
 * space between them is unambiguous). */
static const char *group_key_sql(int by)
{
    return by == GROUP_HOST ? "host" : by == GROUP_PID ? "toString(pid)"
                                                        : "concat(exe, ' ', splitByChar(' ', cmdline)[1])";
}

/* Per (run, process, stack, thread) the row at the selected snapshot, or
 * its change over the window (useq, sseq: ch_window_sql). */
static void rows_sql(const struct server_opts *o, const char *R, int peak, struct strbuf *q)
{
    int win = o->win_since || o->win_until;
    sb_puts(q, "SELECT run, process, stack");
    for (int i = 0; i < CH_NCOUNTERS; i++) {
        if (!win) sb_printf(q, ", argMax(%s, seq) AS v_%s", counter_col(i), counter_col(i));
        else if (counter_is_max(ch_counter_of_col[i]))
            sb_printf(q, ", argMaxIf(%s, seq, seq <= useq) AS v_%s", counter_col(i), counter_col(i));
        else
            sb_printf(q, ", argMaxIf(%s, seq, seq <= useq) - argMaxIf(%s, seq, seq <= sseq) AS v_%s",
                      counter_col(i), counter_col(i), counter_col(i));
    }
    sb_puts(q, " FROM mp_sample");
    if (peak)
        sb_printf(q, " ALL INNER JOIN (SELECT run, process, max(seq) AS pseq FROM mp_snapshot"
                     " WHERE run IN (%s) AND reason = 'peak' GROUP BY run, process) USING (run, process)", R);
    if (win) ch_window_sql(o, R, q);
    sb_printf(q, " WHERE run IN (%s) AND ", R);
    const char *chain = "(run, process, seq) IN (SELECT run, process, seq FROM mp_snapshot WHERE run IN (%s)"
                        " AND reason != 'peak')";
    if (peak) sb_puts(q, "(seq = pseq OR (seq < pseq AND ");
    sb_printf(q, chain, R);
    if (peak) sb_puts(q, "))");
    sb_puts(q, " GROUP BY run, process, stack, thread");
}

void ch_stacks_sql(const struct server *s, const struct server_opts *o, int peak, struct strbuf *q)
{
    const char *R = s->runs.s;
    sb_printf(q, "SELECT a.stack, %s", o->group_by ? "a.g, " : "");
    for (int i = 0; i < CH_NCOUNTERS; i++) sb_printf(q, "a.s_%s, ", counter_col(i));
    sb_printf(q, "b.frames FROM (SELECT stack%s", o->group_by ? ", g" : "");
    for (int i = 0; i < CH_NCOUNTERS; i++)
        sb_printf(q, ", %s(v_%s) AS s_%s", counter_is_max(ch_counter_of_col[i]) ? "max" : "sum", counter_col(i),
                  counter_col(i));
    sb_puts(q, " FROM (");
    rows_sql(o, R, peak, q);
    sb_puts(q, ")");
    if (o->group_by)
        sb_printf(q, " ALL INNER JOIN (SELECT run, process, %s AS g FROM mp_process WHERE run IN (%s))"
                     " USING (run, process)", group_key_sql(o->group_by), R);
    sb_printf(q, " GROUP BY stack%s) AS a ALL LEFT JOIN (SELECT stack, any(frames) AS frames FROM mp_stack",
              o->group_by ? ", g" : "");
    sb_printf(q, " WHERE stack IN (SELECT stack FROM mp_sample WHERE run IN (%s)) GROUP BY stack) AS b USING stack"
                 " ORDER BY a.stack%s FORMAT TabSeparated", R, o->group_by ? ", a.g" : "");
}

/* Its frames: the symbolized copy when pushes disagree, its function,
 * file and line taken together (one push's). (The joins are ALL: current
 * ClickHouse releases make ANY INNER JOIN keep one row per key of both
 * sides.) */
void ch_frames_sql(const struct server *s, int fast, struct strbuf *q)
{
    struct strbuf stacks = { 0 };
    if (fast) sb_puts(&stacks, "SELECT stack FROM mp_growth_minute");   /* every stack of the store (chwindow.c) */
    else sb_printf(&stacks, "SELECT stack FROM mp_sample WHERE run IN (%s)", s->runs.s);
    sb_printf(q, "SELECT frame, module, build_id, offset, inline_depth, tupleElement(sym, 1), tupleElement(sym, 2),"
                 " tupleElement(sym, 3) FROM (SELECT frame, any(module) AS module, any(build_id) AS build_id,"
                 " any(offset) AS offset, any(inline_depth) AS inline_depth,"
                 " argMax(tuple(function, file, line), tuple(length(function), length(file))) AS sym"
                 " FROM mp_frame WHERE frame IN (SELECT arrayJoin(frames) FROM mp_stack WHERE stack IN"
                 " (%s)) GROUP BY frame) FORMAT TabSeparated", stacks.s);
    sb_free(&stacks);
}

/* ---------------------------------------------------------------- answers */
/* The next row into r->f[0..n); 1, or 0 at the end; -1 when a row does
 * not have `want` fields. */
int ch_next_row(struct rows *r, size_t want)
{
    if (r->cur >= r->end) return 0;
    r->n = 0;
    int sep;
    do {
        if (r->n == sizeof r->f / sizeof *r->f) return -1;
        sep = tsv_field(&r->cur, r->end, &r->f[r->n++]);
    } while (sep == '\t');
    return r->n == want ? 1 : -1;
}

void ch_rows_free(struct rows *r)
{
    for (size_t i = 0; i < sizeof r->f / sizeof *r->f; i++) sb_free(&r->f[i]);
}


/* ClickHouse's codes for a query it cannot take as written: with --where
 * given, the user's expression is the likely cause (bad input, exit 2). */
static int refused_query(int code)
{
    static const int codes[] = { 36 /* BAD_ARGUMENTS */, 42 /* NUMBER_OF_ARGUMENTS_DOESNT_MATCH */,
                                 43 /* ILLEGAL_TYPE_OF_ARGUMENT */, 46 /* UNKNOWN_FUNCTION */,
                                 47 /* UNKNOWN_IDENTIFIER */, 53 /* TYPE_MISMATCH */, 60 /* UNKNOWN_TABLE */,
                                 62 /* SYNTAX_ERROR */,
                                 164 /* READONLY */, 386 /* NO_COMMON_TYPE */ };
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++)
        if (code == codes[i]) return 1;
    return 0;
}

/* Runs a query (readonly); its rows then come from ch_next_row(&s->rows). */
int ch_ask(struct server *s, const struct strbuf *sql)
{
    s->out.len = 0;
    int rc = ch_query(&s->ch, sql->s, 1, &s->out, s->err, s->errlen);
    s->rows.cur = s->out.s ? s->out.s : "";
    s->rows.end = s->rows.cur + s->out.len;
    /* a table of the store missing: no store there (another table: the selection's) */
    if (rc && s->ch.exception_code == 60 && strstr(s->err, "mp_hist")) {
        snprintf(s->err, s->errlen, "%s: this store has no size histograms (table mp_hist): its runs were pushed "
                 "by an older mpquery; push them again", s->ch.url);
        return rc;
    }
    if (rc && s->ch.exception_code == 60 && strstr(s->err, "mp_")) {
        snprintf(s->err, s->errlen, "%s: no mallocprof store there (no table mp_runs: push profiles first, "
                 "or name its database with ?database=)", s->ch.url);
        return rc;
    }
    if (rc && s->where && refused_query(s->ch.exception_code)) {
        char why[1024];
        snprintf(why, sizeof why, "%s", s->err);
        snprintf(s->err, s->errlen, "--where '%s': the server refused the selection: %s", s->where, why);
        rc = EXIT_BAD_INPUT;
    }
    return rc;
}

int ch_malformed(struct server *s, const char *what)
{
    snprintf(s->err, s->errlen, "%s: unexpected answer to the query of %s (is it a mallocprof store? "
             "see mpquery push)", s->ch.url, what);
    return EXIT_FAILED;
}

int ch_server_open(struct server *s, const struct server_opts *o, int side, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->ch.fd = -1;
    s->err = err;
    s->errlen = errlen;
    s->where = side >= 0 && o->side_where[side] ? o->side_where[side] : o->where;
    s->what = side == 0 ? "side A's selection" : side == 1 ? "side B's selection" : "the selection";
    int rc = runs_sql(o, side, &s->runs, err, errlen);
    if (!rc) rc = ch_open(&s->ch, o->url, err, errlen);
    long version;
    if (!rc) rc = ch_check_version(&s->ch, &version, err, errlen);
    return rc;
}

void ch_server_close(struct server *s)
{
    ch_close(&s->ch);
    sb_free(&s->runs);
    sb_free(&s->out);
    ch_rows_free(&s->rows);
}
