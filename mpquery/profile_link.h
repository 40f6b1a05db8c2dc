/* What profile.c (the SQL reader), profile_open.c (the file) and
 * profile_link.c (ids into indexes) share while a profile loads: the rows as read, the id indexes and the
 * loader's state. Private to those two files. */
#ifndef MPQUERY_PROFILE_LINK_H
#define MPQUERY_PROFILE_LINK_H

#include "mpquery.h"
#include "profile.h"
#include "hists.h"
#include "format.h"

/* Rows kept as read until their references are resolved (the dictionaries
 * the profile stores as they are have no raw form). */
struct raw_thread { struct thread t; int64_t process; };
struct raw_name { int64_t id; const char *name; };
struct raw_frame { int64_t id, offset, module, function, file; int32_t inline_depth, line; };
struct raw_stack { int64_t id, parent, frame; };
struct raw_snapshot { struct snapshot s; int64_t process; };
struct raw_total { int64_t snapshot, thread; struct total t; };
struct raw_sample { int64_t snapshot, stack, thread; counters c; };
struct raw_hist { int64_t snapshot, lo, v[NH]; };
struct raw_stack_hist { int64_t snapshot, stack, thread, lo, v[NH]; };
struct raw_tick { int64_t process; struct tick t; };
struct raw_ledger { int64_t snapshot; const char *line; int64_t bytes, size; };

/* Id → index for one table: direct when ids are 1..n in order (the usual
 * case), a hash map otherwise. */
struct idindex { size_t n; int dense; struct idmap map; };

struct loader {
    struct sqlite3 *db;
    struct profile *p;
    char *err; size_t errlen;
    struct idindex run, proc, thread, module, function, file, frame, stack, snapshot;
    struct raw_thread *rthreads; size_t nthreads;
    struct raw_name *rfunctions, *rfiles; size_t nfunctions, nfiles;
    struct raw_frame *rframes; size_t nframes;
    struct raw_stack *rstacks; size_t nstacks;
    struct raw_snapshot *rsnapshots; size_t nsnapshots;
    struct raw_total *rtotals; size_t ntotals;
    struct raw_tick *rticks; size_t nticks;
    int bad_ref;                /* a sample with a dangling reference or a corrupt value was seen */
    int flags;                  /* PROFILE_PEAK_ROWS, PROFILE_HISTS (hists.h) */
    int window;                 /* a store's sums over a time window (chquery.c): samples'
                                   counters are differences, below 0 too */
};

/* profile_open_db (profile_open.c), telling the file's format version. */
int profile_open_version(const char *path, struct sqlite3 **out, int writable, int *version, char *err, size_t errlen);
/* "why" into err; returns EXIT_BAD_INPUT. */
int profile_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* After the dictionaries are read: their indexes, then processes, threads,
 * names, frames, stacks (with their order) and snapshots linked. */
int link_dictionaries(struct loader *l);
/* A raw sample into a struct sample as it is read (table_spec.convert). */
void convert_sample(struct loader *l, const void *raw, void *stored);
/* A raw hist or stack_hist row into its stored form; references the
 * profile does not have become NONE (table_spec.convert). */
void convert_hist(struct loader *l, const void *raw, void *stored);
void convert_stack_hist(struct loader *l, const void *raw, void *stored);
/* A ledger row, a mapping's sample row (ledger.h); references the
 * profile does not have become NONE: no selection reads them. */
void convert_ledger(struct loader *l, const void *raw, void *stored);
/* After the samples: the totals. */
void link_recorded(struct profile *p);  /* the recorded stacks, once the samples are read */
int link_totals(struct loader *l);
/* The ticks (read ORDER BY process, time): each process's range. */
int link_ticks(struct loader *l);
void loader_free(struct loader *l);

#endif
