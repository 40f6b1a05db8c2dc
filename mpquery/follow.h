/* mpquery push --follow: an agent that stores each new snapshot of the
 * profiles it watches in ClickHouse soon after the recorder commits it
 * (follow.c: watching, retrying, stopping; follow_ship.c: one file's new
 * rows, its position kept durably).
 *
 * Invariants: a followed file's run is one load whose id is a function
 * of its MP_RUN token, host and first pid (follow_run_id), so every agent
 * and every restart writes to the same load; a row is stored once per (load, process, snapshot)
 * and table, however often it is sent: the rows of snapshots whose id is
 * at most ffile.shipped are stored, and past it, when the agent cannot be
 * sure (a start, a failed request), it asks the store which (process,
 * snapshot) each table holds and sends only the others (an INSERT of one
 * block is stored whole or not at all: a batch stays under a million rows
 * a table). */
#ifndef MPQUERY_FOLLOW_H
#define MPQUERY_FOLLOW_H

#include "chstore.h"

#include <sys/types.h>

struct follow_opts {
    const char *url, *state_dir;
    char **paths; int npaths;           /* directories and files followed */
    int remove_shipped, quiet;
    long ttl_days;                      /* --ttl: drop the runs started before (0: never) */
};
/* Runs the agent until SIGINT or SIGTERM; the exit code. */
int push_follow(const struct follow_opts *o);

/* A followed profile. */
struct ffile {
    char *path, *state;                 /* the file; its state file (follow_state_path) */
    uint64_t dev, ino;                  /* the file the position is about */
    int64_t shipped;                    /* the rows of every snapshot with an id <= shipped are stored */
    int finished;                       /* stored whole, its processes ended: final rows updated */
    int doubt;                          /* the store may hold rows past shipped: ask before sending */
    int dirty; double due;              /* to read again, from due (monotonic_seconds) */
    int64_t size, mtime_ns;             /* as last read (unchanged and no doubt: nothing to do) */
    int said;                           /* its problem was said (not again until it changes) */
    int waiting;                        /* stored whole, a process of this host not ended yet */
    int64_t *pids; size_t npids;        /* those processes */
    struct idmap stored;                /* processes, threads and mp_run rows stored (follow_key) */
};

/* A file's batch in the round: stored by the round's commit. */
struct follow_pending {
    struct ffile *f;
    int64_t last;                       /* its position then */
    size_t n;                           /* snapshots */
    uint64_t rows;
    uint64_t *keys; size_t nkeys, cap;  /* then stored (follow_key) */
    int again;                          /* its processes ended: read again for its end */
};

/* What the agent shares with follow_ship.c and follow_round.c. */
struct agent {
    struct ch c;
    const struct follow_opts *o;
    const char *copy;                   /* the temporary copy a profile is read from */
    uint64_t snapshots, rows;           /* stored since the start */
    struct ch_writer w;                 /* the round's rows (follow_round.c) */
    struct follow_pending *pend; size_t npend, cap_pend;
    char err[1024];
};

/* A round (follow_round.c): begun, files shipped into it (follow_ship),
 * ended when full and at the end: committed (commit set; 0, or
 * EXIT_FAILED with a->err) or not, its files then left in doubt, due
 * again. */
void follow_round_begin(struct agent *a);
int follow_round_full(const struct agent *a);
int follow_round_end(struct agent *a, int commit);
struct follow_pending *follow_pending_add(struct agent *a, struct ffile *f, int64_t last, size_t n);
void follow_pending_key(struct follow_pending *pd, uint64_t key);
void follow_set_stored(struct ffile *f, uint64_t key);
/* Writes f's position: a temporary file synced, renamed over the state
 * file, the directory synced; 0, or -1 (said once). */
int follow_state_save(struct ffile *f);

enum { FOLLOW_MORE = 3 };               /* follow_ship: more to send (a batch was full) */
/* Reads f again and builds into the round what the store lacks; 0, FOLLOW_MORE,
 * EXIT_FAILED: the server failed (a->err; f is left in doubt), or
 * EXIT_BAD_INPUT: the file is not a profile (said once). */
int follow_ship(struct agent *a, struct ffile *f);
/* A process of this host that f waits for (ffile.pids) is gone. */
int follow_pid_gone(const struct ffile *f);
/* f's state file name, and its position read from it (none: from 0). */
void follow_state_load(struct agent *a, struct ffile *f);
/* The load of run r of a followed file: FNV-1a 64 of ("mpquery push
 * --follow", NUL, token, NUL, host, NUL, the decimal pid of its first
 * process in the file): one per file of a run (MP_OUT=%e-%p.db splits a
 * run that forks over files), the same for every agent and restart; its
 * top 16 bits then the run's start day (ch_day_run). */
uint64_t follow_run_id(const struct profile *p, uint32_t r);

#endif
