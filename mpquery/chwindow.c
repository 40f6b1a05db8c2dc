/* --server with a time window over the whole store (no --where, --exe,
 * --host or --since runs; no --group, or --group exe), the fleet's "what
 * grew in the last hour": the stacks' sums read from the growth rollups
 * (schema/clickhouse.sql's mp_growth_minute and mp_growth_second) instead
 * of every row of mp_sample, and of the snapshots and totals only those a
 * window reads (each process's first, last, and last at or before each
 * end). Exact, as the files' windows are: the window's ends are whole
 * seconds (an age, a date, whole epoch seconds; else, or +S from a run's
 * start, mp_sample answers) and a snapshot at time t is in the rollups at
 * ceil(t). The growth of a sum over (S, U]: whole minutes from
 * mp_growth_minute, the seconds at the ends from mp_growth_second; of a
 * maximum (maxlive, maxmapped: their value at U) everything up to U. */
#include "chquery.h"
#include "select.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* An end of the window as whole seconds into *t; 0 when it is none or
 * not a whole second (then the general queries answer). */
static int whole_end(const char *arg, double none, double *t)
{
    struct when w;
    if (!arg) return *t = none, 1;
    if (when_parse(arg, 1, &w) || w.rel || w.t != floor(w.t) || w.t < 0 || w.t > 4e9) return 0;
    return *t = w.t, 1;
}

struct ends { long long s, u, lo, hi; };   /* (s, u]; whole minutes lo..hi (lo > hi: none) */

static int window_ends_of(const struct server_opts *o, struct ends *e)
{
    double s, u;
    if (!whole_end(o->win_since, 0, &s) || !whole_end(o->win_until, 4294967295.0, &u)) return 0;
    e->s = (long long)s, e->u = (long long)u;
    e->lo = (e->s + 60 + 59) / 60 * 60;         /* the first minute M with M - 60 >= s */
    e->hi = e->u / 60 * 60;
    return 1;
}

int ch_window_fast(struct server *s, const struct server_opts *o, int side, int peak)
{
    struct ends e;
    if (peak || !(o->win_since || o->win_until) || o->where || o->exe || o->host || o->since ||
        (side >= 0 && o->side_where[side]) || (o->group_by && o->group_by != GROUP_EXE) || !window_ends_of(o, &e))
        return 0;
    /* every run readers see has its growth stored, one load per token, no
     * MP_COLD ages (their largest is no sum); an older store: no rollups */
    struct strbuf q = { 0 };
    sb_puts(&q, "SELECT (SELECT count() FROM mp_run) = (SELECT count() FROM mp_runs)"
                " AND (SELECT count() FROM mp_run WHERE run NOT IN (SELECT run FROM mp_growth_run)) = 0"
                " AND (SELECT count() FROM mp_growth_minute WHERE coldage != 0) = 0");
    int rc = ch_ask(s, &q), fast = !rc && ch_next_row(&s->rows, 1) == 1 && !strcmp(s->rows.f[0].s, "1");
    sb_free(&q);
    return fast;
}

void ch_window_snapshots_sql(const struct server_opts *o, const char *R, struct strbuf *q)
{
    struct ends e;
    window_ends_of(o, &e);
    sb_printf(q, " AND (run, process, seq) IN (SELECT run, process, arrayJoin([min(seq), max(seq),"
                 " maxIf(seq, time <= %lld), maxIf(seq, time <= %lld)]) FROM mp_snapshot WHERE run IN (%s)"
                 " AND reason != 'peak' GROUP BY run, process)", e.u, o->win_since ? e.s : -1LL, R);
}

/* Per (g, stack) the growth in the window (sums) and until its end
 * (maxima): part 0 from the minutes, part 1 from the seconds the
 * minutes leave out. Every stack of the store has a row (0 outside the
 * window), as mp_sample's queries give every stack of the runs. */
static void growth_sql(const struct ends *e, struct strbuf *q)
{
    char cond[2][2][160];       /* [part][max] */
    snprintf(cond[0][0], sizeof cond[0][0], "minute >= %lld AND minute <= %lld", e->lo, e->hi);
    snprintf(cond[0][1], sizeof cond[0][1], "minute <= %lld", e->hi);
    snprintf(cond[1][0], sizeof cond[1][0], "at > %lld AND at <= %lld AND NOT (at > %lld AND at <= %lld)", e->s,
             e->u, e->lo - 60, e->hi);
    snprintf(cond[1][1], sizeof cond[1][1], "at > %lld AND at <= %lld", e->hi, e->u);
    for (int part = 0; part < 2; part++) {
        sb_puts(q, part ? " UNION ALL SELECT g, stack" : "SELECT g, stack");
        for (int i = 0; i < CH_NCOUNTERS; i++)
            sb_printf(q, ", if(%s, %s, 0) AS v_%d", cond[part][counter_is_max(ch_counter_of_col[i])],
                      counter_name[ch_counter_of_col[i]], i);
        if (part == 0) sb_puts(q, " FROM mp_growth_minute");
        else sb_printf(q, " FROM mp_growth_second WHERE (%s) OR (%s)", cond[1][0], cond[1][1]);
    }
}

void ch_window_stacks_sql(const struct server_opts *o, struct strbuf *q)
{
    struct ends e;
    window_ends_of(o, &e);
    int g = o->group_by != 0;
    sb_printf(q, "SELECT a.stack, %s", g ? "a.g, " : "");
    for (int i = 0; i < CH_NCOUNTERS; i++) sb_printf(q, "a.s_%d, ", i);
    sb_printf(q, "b.frames FROM (SELECT stack%s", g ? ", g" : "");
    for (int i = 0; i < CH_NCOUNTERS; i++) sb_printf(q, ", sum(v_%d) AS s_%d", i, i);
    sb_puts(q, " FROM (");
    growth_sql(&e, q);
    sb_printf(q, ") GROUP BY stack%s) AS a ALL LEFT JOIN (SELECT stack, any(frames) AS frames FROM mp_stack"
                 " WHERE stack IN (SELECT stack FROM mp_growth_minute) GROUP BY stack) AS b USING stack"
                 " ORDER BY a.stack%s FORMAT TabSeparated", g ? ", g" : "", g ? ", a.g" : "");
}

