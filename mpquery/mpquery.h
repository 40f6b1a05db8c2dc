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
 * (temporary blocks) and time (MP_TIME: nanoseconds) and the ones after
 * are the samples' alone: a totals row has the first NCOUNTERS (the others
 * stay 0 and are never shown), a sample all NSTACK_COUNTERS (a column an
 * older format version lacks reads as 0). Format version 5 adds the
 * program's own mappings (nmap, mapped, maxmapped, rss: set on the rows of
 * stacks whose leaf is an '[mmap]' frame, 0 on heap rows) and cold blocks
 * (MP_COLD: memcold bytes, coldage snapshots). Tables show time, the
 * mapping counters and the cold ones only for a profile that has them
 * (shown_counters). */
enum { NCALLS, MEMTOT, NFREE, NLIVE, MEMLIVE, MAXLIVE, NTEMP, TIME,
       NMAP, MAPPED, MAXMAPPED, RSS, MEMCOLD, COLDAGE, NSTACK_COUNTERS };
enum { NCOUNTERS = NTEMP };
typedef struct { int64_t v[NSTACK_COUNTERS]; } counters;
extern const char *const counter_name[NSTACK_COUNTERS];
int counter_parse(const char *name);     /* -1 when unknown */
/* The counters in order, for messages (one line) and --help (two). */
#define COUNTER_LIST "ncalls, memtot, nfree, nlive, memlive, maxlive, ntemp, time, " \
                     "nmap, mapped, maxmapped, rss, memcold or coldage"
#define COUNTER_HELP "ncalls, memtot, nfree, nlive, memlive, maxlive, ntemp,\n" \
                     "time, nmap, mapped, maxmapped, rss, memcold or coldage"
/* A set of counters: bit k for counter k. */
typedef uint32_t counter_set;
#define COUNTER_BIT(k) ((counter_set)1 << (k))
#define MAPPING_COUNTERS (COUNTER_BIT(NMAP) | COUNTER_BIT(MAPPED) | COUNTER_BIT(MAXMAPPED) | COUNTER_BIT(RSS))
#define COLD_COUNTERS (COUNTER_BIT(MEMCOLD) | COUNTER_BIT(COLDAGE))
/* How two values of a counter combine (threads, processes, stacks merged,
 * files merged): summed, or the larger kept (coldage: an age, not an
 * amount). counters_add is the one place that applies it. */
#define MAX_COUNTERS COUNTER_BIT(COLDAGE)
static inline int counter_is_max(int k) { return (MAX_COUNTERS & COUNTER_BIT(k)) != 0; }
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
/* Two values of counter k as one (counter_is_max: the larger, else the sum). */
static inline int64_t counter_combine(int k, int64_t a, int64_t b)
{
    return counter_is_max(k) ? (a > b ? a : b) : sat_add(a, b);
}
static inline void counters_add(counters *a, const counters *b)
{
    for (int i = 0; i < NSTACK_COUNTERS; i++) a->v[i] = counter_combine(i, a->v[i], b->v[i]);
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
    const char *name;                   /* as info shows it (procs_name_of), set by the loader */
    const char *ended;                  /* "exit 3", "signal SIGSEGV"...; "" (version 1: always) */
    double start_time, end_time;        /* end_time < 0: none yet */
    uint32_t first_snapshot, nsnapshots; /* range in profile.snapshots (by seq) */
    uint32_t first_tick, nticks;        /* range in profile.ticks (by time) */
};
struct thread { int64_t id, seq, tid; uint32_t process; const char *name; };
struct module { int64_t id; const char *path, *build_id, *base; int special; };
/* A mapping's module (format version 5): its frame is the leaf of a
 * mapping's stack, named by what is mapped ('anonymous', a file's path). */
static inline int module_is_mmap(const struct module *m) { return !strcmp(m->path, "[mmap]"); }
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
/* rec: the stack's index among the recorded ones (profile.recorded) */
struct sample { uint32_t snapshot, stack, thread, rec; counters c; };
struct total {
    uint32_t snapshot, thread;          /* thread NONE = whole process */
    counters c;
    int64_t ncalls_nostack, memtot_nostack, nfree_unknown;
};

/* A point of memory over time (format version 4): the process's totals
 * at a moment, without stacks, its resident bytes (0: unknown) and the
 * bytes of its own mappings (version 5; 0 before). */
struct tick { uint32_t process; double time; int64_t ncalls, memtot, memlive, rss, mapped; };

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
    /* The recorded stacks: those a sample row names (a million of a
     * profile's three million stack rows in make bench's manystacks: the
     * others are their prefixes), in index order; what a selection's
     * counters are kept per (select.h), and recorded_of per stack: its
     * index there, NONE when no row names it. */
    uint32_t *recorded; size_t nrecorded;
    uint32_t *recorded_of;
    struct total *totals; size_t ntotals;
    uint32_t *snapshot_total;           /* per snapshot: its whole-process totals row, NONE */
    struct hist_row *hists; size_t nhists;  /* loaded with PROFILE_HISTS (hists.h) */
    struct stack_hist_row *stack_hists; size_t nstack_hists;
    struct tick *ticks; size_t nticks;  /* by process, then time (none before version 4) */
    struct ledger_row *ledger; size_t nledger;      /* loaded with PROFILE_LEDGER (ledger.h) */
    int version;                        /* format version, 1..SCHEMA_VERSION (user_version) */
    int has_time;                       /* a process recorded with MP_TIME=1 */
    int has_mappings;                   /* a sample row of a mapping ('[mmap]' leaf) */
    int has_cold;                       /* a process recorded with MP_COLD=1, or a cold row */
    int aggregate;                      /* --server: the samples are the runs' sums, hung on one
                                           process (chquery.c), not each process's own */
};
/* The counters tables show: every one, but time when no process recorded
 * it, the mapping counters when no row is a mapping's, the cold ones when
 * nothing was recorded with MP_COLD. */
static inline counter_set shown_counters(const struct profile *p)
{
    counter_set s = COUNTER_BIT(TIME) - 1;
    if (p->has_time) s |= COUNTER_BIT(TIME);
    if (p->has_mappings) s |= MAPPING_COUNTERS;
    if (p->has_cold) s |= COLD_COUNTERS;
    return s;
}
static inline int counter_shown(counter_set s, int k) { return (s & COUNTER_BIT(k)) != 0; }
/* The counters of s in order into k (NSTACK_COUNTERS entries); how many. */
static inline int counter_list(counter_set s, int *k)
{
    int n = 0;
    for (int i = 0; i < NSTACK_COUNTERS; i++) if (counter_shown(s, i)) k[n++] = i;
    return n;
}
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
/* The last committed state of path, which a recorder may be writing, copied
 * into copy under a shared lock held only for the copy (profile_open.c). */
int profile_copy_committed(const char *path, const char *copy, char *err, size_t errlen);
/* The processes and snapshots of the run with this MP_RUN token (record):
 * processes (pids, as mpquery info's process tree counts them), their
 * images (process rows: an exec starts a new one), snapshots (all, as info
 * lists them) and those of them that are peaks; 0, or EXIT_FAILED with
 * the reason in err. */
struct run_count { int64_t processes, images, snapshots, peaks; };
int profile_count_run(struct sqlite3 *db, const char *token, struct run_count *c, char *err, size_t errlen);

#endif
