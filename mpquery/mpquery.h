/* mpquery's core: a stack's counters and the in-memory profile (profile.c,
 * the only SQL reader, with profile_link.c turning ids into indexes). The
 * modules have headers of their own: util.h (containers), select.h,
 * rules.h, view.h, output.h (+ pager, units, -o files), listing.h, load.h,
 * symdb.h, merge.h, server.h, options.h, commands.h.
 *
 * Invariant: after profile_load every cross reference is a dense array index
 * (never a database id), checked once at load time, so commands index arrays
 * without further validation. Database ids are kept only for printing. */
#ifndef MPQUERY_H
#define MPQUERY_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE         /* qsort_r, memmem, REG_STARTEND: every .c includes this first */
#endif

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define MPQ_VERSION "1.0"
#define NAME_MAX_BYTES 65536       /* longer names are cut on load (with "...") */
/* The deepest stack the recorder writes, in frames: MP_DEPTH (at most 1024)
 * return addresses of RES_MAX_INLINE (32, prof/common/resolve.h) inline levels
 * each, the [truncated] marker and MP_MAX_TAGS (16, prof/record.h) tags. A
 * deeper one is a corrupt file (refused on load: output that lists paths
 * grows with the square of the depth). */
#define STACK_DEPTH_MAX (1024 * 32 + 1 + 16)

/* Exit codes: 2 bad input or usage, 1 failed operation. */
enum { EXIT_BAD_INPUT = 2, EXIT_FAILED = 1 };

/* ---------------------------------------------------------------- counters */
/* A stack's counters, in the order every table lists them. nlive (blocks
 * allocated and not freed) is not stored: it is ncalls - nfree, set by
 * counters_derive when a row is loaded, and sums like the others. ntemp
 * (temporary blocks) and time (MP_TIME: nanoseconds) are the samples'
 * alone, last: a totals row has the first NCOUNTERS (the others stay 0 and
 * are never shown), a sample all NSTACK_COUNTERS (a file of format
 * version 1 reads ntemp as 0, of versions 1 and 2 time as 0). Tables show
 * time only for a profile recorded with it (shown_counters). */
enum { NCALLS, MEMTOT, NFREE, NLIVE, MEMLIVE, MAXLIVE, NTEMP, TIME, NSTACK_COUNTERS };
enum { NCOUNTERS = NTEMP };
typedef struct { int64_t v[NSTACK_COUNTERS]; } counters;
extern const char *const counter_name[NSTACK_COUNTERS];
int counter_parse(const char *name);     /* -1 when unknown */
/* The counters in order, for --help and messages. */
#define COUNTER_LIST "ncalls, memtot, nfree, nlive, memlive, maxlive, ntemp or time"
/* The largest value a profile's counter may hold (2^62: 4 EiB, 146 years
 * of nanoseconds); the loader refuses others, and negative ones, as a
 * corrupt file. Two values then add without overflow; sums of more
 * saturate (sat_add) at INT64_MAX / INT64_MIN instead of wrapping. */
#define COUNTER_MAX ((int64_t)1 << 62)
static inline int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}
static inline void counters_derive(counters *a)
{
    a->v[NLIVE] = a->v[NCALLS] - a->v[NFREE];
}
static inline void counters_add(counters *a, const counters *b)
{
    for (int i = 0; i < NSTACK_COUNTERS; i++) a->v[i] = sat_add(a->v[i], b->v[i]);
}
static inline int counters_zero(const counters *a)
{
    for (int i = 0; i < NSTACK_COUNTERS; i++) if (a->v[i]) return 0;
    return 1;
}

/* ---------------------------------------------------------------- the profile (profile.c) */
struct run { int64_t id; const char *token; double start_time; };
struct process {
    int64_t id, pid, ppid, run_id;
    uint32_t run;                       /* index into profile.runs */
    const char *exe, *cmdline, *host, *settings;
    const char *ended;                  /* "exit 3", "signal SIGSEGV"...; "" (version 1: always) */
    double start_time, end_time;        /* end_time < 0: none yet */
    uint32_t first_snapshot, nsnapshots; /* range in profile.snapshots (by seq) */
    uint32_t first_tick, nticks;        /* range in profile.ticks (by time) */
};
struct thread { int64_t id, seq, tid; uint32_t process; const char *name; };
struct module { int64_t id; const char *path, *build_id, *base; int special; };
/* A tag scope's module: its frames are named by the tag (function), their
 * offset is the name's hash (tag_offset). */
static inline int module_is_tag(const struct module *m) { return !strcmp(m->path, "[tag]"); }
struct frame {
    int64_t id, offset;
    uint32_t module, function, file;    /* function, file: NONE when unknown */
    int32_t inline_depth, line;
};
struct stack { int64_t id; uint32_t parent, frame; uint32_t depth; };
struct snapshot {
    int64_t id, seq, profiler_memory;
    uint32_t process;
    double time;
    const char *reason, *label;
    int peak;                           /* reason 'peak': not in the chain of the others */
};
struct sample { uint32_t snapshot, stack, thread; counters c; };
struct total {
    uint32_t snapshot, thread;          /* thread NONE = whole process */
    counters c;
    int64_t ncalls_nostack, memtot_nostack, nfree_unknown;
};

/* A point of memory over time (format version 4): the process's totals
 * at a moment, without stacks, and its resident bytes (0: unknown). */
struct tick { uint32_t process; double time; int64_t ncalls, memtot, memlive, rss; };

/* A database file of a profile loaded from several (load_profiles): the
 * ids its runs have in the profile, the processes it holds of each, and
 * its latest run (the largest id it had in the file). */
struct db_file { const char *path; int64_t *runs, *nprocs; size_t nruns; int64_t latest; };

struct profile {
    const char *path;                   /* for messages: the file, or "a.db (and 2 more)" */
    const char *db_path;                /* the database read: the file, or the files merged */
    struct db_file *sources; size_t nsources; /* several files: each one's runs; else none */
    uint8_t *latest_runs;               /* per run: the latest of a file, selected by default;
                                           NULL: the last run (the largest id) */
    struct arena text;
    struct run *runs; size_t nruns;
    struct process *procs; size_t nprocs;
    struct thread *threads; size_t nthreads;
    struct module *modules; size_t nmodules;
    const char **functions; size_t nfunctions;
    const char **files; size_t nfiles;
    struct frame *frames; size_t nframes;
    struct stack *stacks; size_t nstacks;
    uint32_t *stack_order;              /* parents before children */
    struct snapshot *snapshots; size_t nsnapshots;
    struct sample *samples; size_t nsamples;
    struct total *totals; size_t ntotals;
    uint32_t *snapshot_total;           /* per snapshot: its whole-process totals row, NONE */
    struct hist_row *hists; size_t nhists;  /* loaded with PROFILE_HISTS (hists.h) */
    struct stack_hist_row *stack_hists; size_t nstack_hists;
    struct tick *ticks; size_t nticks;  /* by process, then time (none before version 4) */
    struct ledger_row *ledger; size_t nledger;      /* loaded with PROFILE_LEDGER (ledger.h) */
    struct map_row *map_rows; size_t nmap_rows;
    int version;                        /* format version, 1..SCHEMA_VERSION (user_version) */
    int has_time;                       /* a process recorded with MP_TIME=1 */
};
/* How many counters tables show, from the first: all, or all but time
 * when no process recorded it. */
static inline int shown_counters(const struct profile *p) { return p->has_time ? NSTACK_COUNTERS : TIME; }
/* Loads the whole database (one pass per table). On failure returns the
 * exit code and writes the reason (without the path) into err. */
/* peak_rows: also the sample rows of peak snapshots, which only a
 * selection of a peak snapshot reads (without them, a peak-heavy profile
 * loads in half the time). */
int profile_load(const char *path, struct profile **out, int peak_rows, char *err, size_t errlen);
/* profile_load, then more(ctx, db, p) (unless NULL) in the same read
 * transaction, so that it reads what the profile was loaded from (merge:
 * the tables the profile does not hold); a non-zero return fails the load. */
struct sqlite3;
int profile_load_more(const char *path, int peak_rows, struct profile **out,
                      int (*more)(void *ctx, struct sqlite3 *db, struct profile *p), void *ctx,
                      char *err, size_t errlen);
void profile_free(struct profile *p);
/* Index of the stack with this database id, or NONE. */
uint32_t profile_stack_index(const struct profile *p, int64_t id);
/* Opens a database (read-only unless writable: symbolize) and checks that
 * it is a profile of this schema version, made only of mallocprof's own
 * schema objects; shared by profile_load, sql, symbolize, record and merge. */
int profile_open_db(const char *path, struct sqlite3 **db, int writable, char *err, size_t errlen);
/* The processes and snapshots of the run with this MP_RUN token (record):
 * processes (pids, as mpquery info's process tree counts them), their
 * images (process rows: an exec starts a new one), snapshots (all, as info
 * lists them) and those of them that are peaks; 0, or EXIT_FAILED with
 * the reason in err. */
struct run_count { int64_t processes, images, snapshots, peaks; };
int profile_count_run(struct sqlite3 *db, const char *token, struct run_count *c, char *err, size_t errlen);

#endif
