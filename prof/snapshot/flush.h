/* What the files of the flush share (never installed). A snapshot is one
 * SQLite transaction written through a `writer`:
 *   flush.c        the entry: locks, the schema, the transaction, the log line
 *   flush_sql.c    statements: prepare, step, batches of rows, the first error
 *   mirror.c       this process's mirror of the shared dictionaries (module,
 *                  function, file, frame) and of the stack tree
 *   flush_rows.c   the rows of a snapshot: totals, samples, size classes
 *   flush_maps.c   the rows of the program's own mappings (maps.c)
 *   flush_process.c  the process's and its threads' rows
 * Everything runs under flush_lock with the profiler marked internal: SQLite,
 * libdw and these files allocate from the profiler's heap (ownheap.c). */
#ifndef MP_FLUSH_H
#define MP_FLUSH_H

#include "snapshot.h"
#include "symbols.h"
#include "format.h"
#include "stack_run.h"

#include <sqlite3.h>

/* ------------------------------------------------------------ flush_sql.c */

/* Rows of the big tables (stack nodes, samples, stack_hist) go in by BATCH_ROWS
 * per INSERT: a statement per row costs more than the row. */
#define BATCH_ROWS 64
struct batch {
    sqlite3_stmt *many, *one;   /* BATCH_ROWS rows; one row (a snapshot's rest): each prepared
                                 * at its first use (a process with few rows never needs the
                                 * first, whose parse is most of a small process's flush) */
    enum format_table table;
    int ncols, n;
    int next_id;                /* the first column is the table's INTEGER PRIMARY KEY, each
                                 * row's the largest so far + 1: left NULL for SQLite to give
                                 * (it then appends without a search), checked after */
    int64_t v[BATCH_ROWS * FORMAT_MAX_COLS];
};

enum { D_MODULE, D_FUNCTION, D_FILE, D_FRAME, ND };    /* the mirrored dictionaries */

struct writer {
    sqlite3 *db;
    const char *error;      /* first failure, for the one-line report */
    char error_text[256];
    sqlite3_stmt *ins[ND];  /* one INSERT per dictionary */
    sqlite3_stmt *totals;
    struct batch samples, stack_hists;
    struct stack_run run;   /* the stack tree's pending run (mirror.c) */
    struct run_batch {      /* and the runs ended, BATCH_ROWS per INSERT */
        sqlite3_stmt *many, *one;
        int n;
        int64_t id[BATCH_ROWS], parent[BATCH_ROWS];
        size_t end[BATCH_ROWS];     /* where each one's frames end in text */
        char *text;
        size_t len, cap;
    } runs;
};

int fail(struct writer *w, const char *what);           /* keeps the first; returns -1 */
sqlite3_stmt *prepare(struct writer *w, const char *sql);
int step_done(struct writer *w, sqlite3_stmt *st);      /* step, reset, clear bindings */
int sql_exec(struct writer *w, const char *sql);
int64_t query_int(struct writer *w, const char *sql, int64_t deflt);
/* INSERT of one row of table t, every column (prof/format.h): bind column c
 * of table t as parameter FORMAT_PARAM(t, c); a column left unbound is NULL. */
sqlite3_stmt *prepare_insert(struct writer *w, const char *verb, enum format_table t, int rows);
void batch_init(struct batch *b, enum format_table t, int next_id);
int batch_add(struct writer *w, struct batch *b, const int64_t *row);   /* row: the table's columns in order */
int batch_flush(struct writer *w, struct batch *b);     /* the rows collected so far */
void batch_finalize(struct batch *b);
/* Grows a zeroed array of elem-sized items to at least need items. */
int grow_array(void *pp, size_t *n, size_t need, size_t elem);
uint64_t words_digest(const uint64_t *w, size_t n);     /* 0 for all zeros, else odd (flush_sql.c) */

/* ------------------------------------------------------------ mirror.c */

#include "node_map.h"     /* the stack tree's (parent, frame) → id */

int mirror_stale(struct writer *w);     /* the database was replaced: forget everything */
int mirror_sync(struct writer *w);      /* the rows other processes added since */
int mirror_prepare(struct writer *w);   /* the dictionaries' INSERT statements */
int mirror_reserve(void);               /* room for the stack nodes not mapped yet */
int64_t mirror_stack(struct writer *w, uint32_t node);  /* a recorder node's database stack id */
int mirror_all(struct writer *w);       /* every recorder node's (flush_ahead) */
int mirror_write_run(struct writer *w); /* the tree's runs not written yet, before the COMMIT */
void mirror_forget(void);               /* another database: nothing is known */
void mirror_forget_addresses(void);     /* after an unload */

/* ------------------------------------------------------------ flush_rows.c */

int rows_write(struct writer *w, enum flush_reason reason, const char *label, int64_t *nrows);
void rows_forget(int new_process);      /* a fork child: a new process of the same run */
int rows_peak_due(double settle);       /* a new peak, likely final: to write ahead */
int rows_write_peak(struct writer *w, int64_t *nrows);     /* that peak's snapshot alone */
uint32_t rows_peak_epoch(void);         /* the peak of the latest peak snapshot written */

/* ------------------------------------------------------------ flush_ticks.c */

/* The process's points of memory over time, the last one of totals t at now. */
int ticks_rows_write(struct writer *w, double now, const struct mp_totals *t);

/* ------------------------------------------------------------ flush_maps.c */

/* The mapping rows of a snapshot (not of a peak): the (stack, thread) rows
 * of maps.c that changed since the process's previous snapshot. */
int maps_rows_write(struct writer *w, int64_t snapshot, int64_t *nrows);
void maps_rows_forget(void);            /* another database, or a fork child */

/* ------------------------------------------------------------ ledger.c */

/* The ledger lines of a snapshot; fatal: a fatal signal's snapshot, which
 * calls no mallinfo2. */
int ledger_write(struct writer *w, int64_t snapshot, int fatal);
double ledger_time(void);      /* seconds the latest ledger took */
void ledger_release(void);      /* the end of an attach session: its buffers unmapped */
void ledger_after_fork_child(void);    /* ledger_heap.c: what a fork child inherited (before its reset) */

/* ------------------------------------------------------------ flush_process.c */

/* This process's ids in the database; 0: not known (yet). */
struct process_ids {
    int64_t run, process, snapshot_seq;
    int64_t *threads;           /* by thread seq */
    size_t nthreads;
};
extern struct process_ids flush_ids;
int process_rows_write(struct writer *w, double now);      /* its run and process rows */
int64_t process_rows_thread(struct writer *w, struct mp_thread *t);    /* the thread's row id; 0: failed */
int process_rows_check(struct writer *w);   /* 1 when our process row is gone */
void process_rows_forget(int new_process);
extern const char *const reason_names[];

#endif
