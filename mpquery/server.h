/* --server URL (chquery.c): the runs of a ClickHouse store (mpquery
 * push) read as one profile, for top, fold, diff and info; and the
 * options that name the store and select its runs, which parse_options
 * parses into struct server_opts (server_option). */
#ifndef MPQUERY_SERVER_H
#define MPQUERY_SERVER_H

#include "mpquery.h"
#include "profile.h"
#include "options.h"

struct server_opts {
    const char *url;                    /* NULL: read files */
    const char *where, *exe, *host, *since;     /* which runs (both sides of a diff); exe:
                                                   --exe, the selection's (parse_options) */
    const char *side_where[2];          /* diff: --a-where, --b-where */
    const char *win_since, *win_until;  /* the selection's window (select_opts since, until:
                                           load_selected): the allocations made in it */
    int group_by;                       /* the selection's --group: sums per key (select.h) */
};
/* The selected runs of the store: their processes, threads, snapshots and
 * totals as they are, and the counters of every distinct stack summed over
 * them at each process's last snapshot (peak: its peak), hung on one
 * process's snapshot and thread; every run selected by default. side: 0
 * or 1 in a diff, else -1. 0, or the exit code with one line in err. */
int server_load(const struct server_opts *o, int side, int flags, struct profile **out, char *err, size_t errlen);

/* ---------------------------------------------------------------- options */
/* The store's options, each entry tagged OPTG_SERVER: parse_server parses
 * it (options.h), --help-all lists it under ClickHouse. */
#define OPTG_SERVER .parse = parse_server, .place = PLACE_SERVER, .advanced = 1
enum { OPT_SERVER = 5 << 8, OPT_WHERE, OPT_HOST, OPT_SINCE };     /* --exe: the selection's (select.h) */
/* the commands that read a time window (OPTIONS_WINDOW) take the store
 * without its --since (runs started since) */
#define OPTIONS_SERVER OPTIONS_SERVER_STORE, \
    { OPTG_SERVER, .name = "since", .id = OPT_SINCE, .arg = "TIME", \
      .help = "runs started at TIME or later: seconds since the epoch,\n" \
              "YYYY-MM-DD[ HH:MM[:SS]] (local time) or an age (30m, 2h, 7d)" }
#define OPTIONS_SERVER_STORE \
    { OPTG_SERVER, .name = "server", .id = OPT_SERVER, .arg = "URL", \
      .help = "read the runs of a ClickHouse store (mpquery push) at\n" \
              "URL (http://[user:password@]host[:port]/[?database=D])\n" \
              "instead of files: all its runs, or those selected below" }, \
    { OPTG_SERVER, .name = "where", .id = OPT_WHERE, .arg = "SQL", \
      .help = "runs where this ClickHouse expression over mp_runs'\n" \
              "columns holds (token, start_time, pushed, source, host,\n" \
              "exe, cmdline, processes); read-only" }, \
    { OPTG_SERVER, .name = "host", .id = OPT_HOST, .arg = "NAME", .help = "runs on this host" }
/* One of the options above into o. */
int server_option(struct server_opts *o, int id, const char *arg);
opt_parser parse_server;            /* the entries': server_option into c->server */

#endif
