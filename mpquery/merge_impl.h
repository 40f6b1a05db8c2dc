/* What merge.c (the inputs mapped into the output's ids, merge_build) and
 * merge_out.c (the output file: its statements, batches of rows and the
 * last tables) share. Private to those two files; merge.c calls
 * merge_out.c, never the other way. */
#ifndef MPQUERY_MERGE_IMPL_H
#define MPQUERY_MERGE_IMPL_H

#include "mpquery.h"
#include "profile.h"
#include "merge.h"
#include "tempfile.h"
#include "format.h"         /* the tables' columns */
#include "stack_run.h"
#include "hists.h"

#include <sqlite3.h>

/* A value of a row to insert: NULL (a column a row leaves out), an
 * integer, a real, text. */
enum { V_NULL, V_INT, V_REAL, V_TEXT };
struct val { int type; int64_t i; double d; const char *s; };
#define I(x) ((struct val){ .type = V_INT, .i = (x) })
#define R(x) ((struct val){ .type = V_REAL, .d = (x) })
#define S(x) ((struct val){ .type = V_TEXT, .s = (x) })
#define NUL ((struct val){ .type = V_NULL })
/* A row of table t (prof/format.h), its values named by column:
 * PUT(m, run, [C(run, id)] = I(id), ...). */
#define C(t, c) FC_##t##_##c
#define PUT(m, t, ...) merge_put(m, FT_##t, (const struct val[FC_##t##_N]){ __VA_ARGS__ })

/* Rows are inserted BATCH_ROWS at a time by one statement (a third less
 * time than one row a statement); the rest of a table's rows one by one
 * (batch_flush), before the strings they point to are freed. */
#define BATCH_ROWS 64
struct batch { sqlite3_stmt *many, *one; int n; struct val v[BATCH_ROWS * FORMAT_MAX_COLS]; };

/* The copy of a process that is kept: its input and id there. */
struct copy { int input; int64_t id, nsnapshots; };
struct out_run { const char *token; double start_time; int last_input, ninputs; int64_t id; };
struct out_process { struct process pr; uint32_t run; };
struct out_frame { uint32_t module, function, file; int32_t inline_depth, line; int64_t offset; };

struct merge {
    sqlite3 *out;
    const char *out_path;
    struct batch *ins;                  /* per table */
    int rc;                             /* the first error (err says it): later writes do nothing */
    char *err; size_t errlen;
    char *const *inputs; size_t ninputs, cur;
    struct strtab proc_keys;            /* (token, pid, start time) */
    struct copy *kept; size_t kept_cap; /* per process key */
    struct strtab tokens;               /* per run token: its index in runs */
    struct out_run *runs; size_t runs_cap;
    struct out_process *procs; size_t nprocs, procs_cap;  /* written last: their runs' ids wait for every run */
    struct arena text;                  /* the processes' strings */
    struct strtab modules, functions, paths, frame_keys;
    struct out_frame *frames; size_t frames_cap;  /* per frame id - 1; written last (a later input may name one) */
    struct idmap tag_frames;            /* function << 32 | inline_depth -> frame id - 1 */
    struct idmap stacks;                /* parent << 32 | frame -> the first stack of that content */
    struct idmap stack_dups;            /* stack -> the next stack of the same content */
    int32_t *stack_input; size_t stacks_cap;  /* per stack id: the last input that mapped a stack to it */
    uint32_t nstacks;
    struct stack_run run;               /* the stack tree's pending run (merge_stack_node) */
    int64_t nthreads, nsnapshots, nsamples;
    struct db_file *files;
};

/* One input's ids in the output, per index of its profile; 0: not copied. */
struct input {
    const struct profile *p;
    uint32_t *run;                      /* index in m->runs */
    int64_t *proc, *thread, *snapshot;
    uint32_t *module, *function, *file, *frame, *stack;
};

/* The first error wins (err says it): later writes do nothing. */
int merge_fail(struct merge *m, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int merge_out_fail(struct merge *m);
/* A row of table t (FT_*), every column (PUT); written BATCH_ROWS at a time. */
void merge_put(struct merge *m, int table, const struct val *v);
void merge_flush_all(struct merge *m);     /* the rows collected so far, of every table */
/* A node of the stack tree, parents first: into the pending run, or the
 * run written and a new one started. */
void merge_stack_node(struct merge *m, int64_t id, int64_t parent, int64_t frame);
/* Interns key into t; *created when it is new. Returns its id (0-based). */
uint32_t merge_intern(struct strtab *t, const void *key, size_t len, int *created);
/* merge_out.c's output file: opened with the schema and the statements of
 * every table; finished with what waited for every input (runs numbered by
 * start time, processes, frames; the files' run ids); freed. */
int merge_open_output(struct merge *m);
int merge_finish(struct merge *m, struct merge_stats *st);
void merge_free(struct merge *m);

#endif
