/* The in-memory profile (profile.c, the only SQL reader, with
 * profile_link.c turning ids into indexes): its rows' types, the counters
 * a table shows, and the loader's interface.
 *
 * Invariant: after profile_load every cross reference is a dense array index
 * (never a database id), checked once at load time, so commands index arrays
 * without further validation. Database ids are kept only for printing. */
#ifndef MPQUERY_PROFILE_H
#define MPQUERY_PROFILE_H

#include "counters.h"
#include "mpquery.h"

#include <string.h>

/* ---------------------------------------------------------------- the rows */
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
    int shared;                         /* mpquery serve's and report's (serve_cache.c): the
                                           commands that read it leave it (profile_free) */
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

/* ---------------------------------------------------------------- the loader (profile*.c) */
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
