/* What chquery.c (the profile built from a store's rows) and chselect.c
 * (the selection of runs, the queries and their answers) share. */
#ifndef MPQUERY_CHQUERY_H
#define MPQUERY_CHQUERY_H

#include "mpquery.h"
#include "http.h"
#include "server.h"

#include <stdlib.h>

/* The rows of a TabSeparated answer, field by field. */
struct rows {
    const char *cur, *end;
    struct strbuf f[16];             /* the widest answer: a stack, its --group key, 13 counters, frames */
    size_t n;
};

static inline int64_t i64(const struct rows *r, size_t i) { return strtoll(r->f[i].s, NULL, 10); }
static inline uint64_t u64(const struct rows *r, size_t i) { return strtoull(r->f[i].s, NULL, 10); }
static inline double f64(const struct rows *r, size_t i) { return strtod(r->f[i].s, NULL); }


struct server {
    struct ch ch;
    struct strbuf runs;         /* the selection's SELECT run ... */
    struct strbuf out;          /* the latest answer */
    struct rows rows;
    const char *where;          /* the user's --where (or side's), for messages */
    const char *what;           /* "the selection", "side A's selection" */
    char *err; size_t errlen;
};

/* The next row into r->f[0..n); 1, or 0 at the end; -1 when a row does
 * not have `want` fields. */
int ch_next_row(struct rows *r, size_t want);
void ch_rows_free(struct rows *r);
/* Runs a query (readonly); its rows then come from ch_next_row(&s->rows). */
int ch_ask(struct server *s, const struct strbuf *sql);
/* An answer of another shape: EXIT_FAILED, naming the query's what. */
int ch_malformed(struct server *s, const char *what);
/* The server of o, its selection's SQL for side (0, 1; -1: no side). */
int ch_server_open(struct server *s, const struct server_opts *o, int side, char *err, size_t errlen);
void ch_server_close(struct server *s);
/* A time window's join (chselect.c): per (run, process) of runs R, the
 * snapshots at its ends, useq and sseq (0: none), as window.c finds them. */
void ch_window_sql(const struct server_opts *o, const char *R, struct strbuf *q);
/* The counters of mp_sample's columns, in their order. */
enum { CH_NCOUNTERS = 13 };
extern const int ch_counter_of_col[CH_NCOUNTERS];
/* Per distinct stack of the selection (and --group key, o->group_by: a
 * field after the stack): its counters combined (summed, or the largest:
 * counter_is_max) over runs, processes and threads at each process's
 * selected snapshot (the last, or with peak its peak, by the rules of
 * schema/profile.sql; with a window their change over it), and its
 * frames. */
void ch_stacks_sql(const struct server *s, const struct server_opts *o, int peak, struct strbuf *q);
/* The frames of those stacks, one row each (chquery.c's add_frame); fast:
 * of the stacks of ch_window_stacks_sql. */
void ch_frames_sql(const struct server *s, int fast, struct strbuf *q);

/* A window over the whole store from its growth rollups (chwindow.c):
 * whether o's selection and window, and the store, allow it (1), */
int ch_window_fast(struct server *s, const struct server_opts *o, int side, int peak);
/* then the condition that keeps of runs R's mp_snapshot and mp_totals
 * the rows of the snapshots the window reads (" AND ..."), and the query
 * of the stacks' sums, as ch_stacks_sql's. */
void ch_window_snapshots_sql(const struct server_opts *o, const char *R, struct strbuf *q);
void ch_window_stacks_sql(const struct server_opts *o, struct strbuf *q);

#endif
