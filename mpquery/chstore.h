/* mallocprof's store on ClickHouse (schema/clickhouse.sql), the writing
 * side (chstore.c): the content addresses of frames and stacks that every
 * run shares, the schema's statements, and the rows of a run (RowBinary)
 * sent in bulk, table by table, with the run's mp_run row last. */
#ifndef MPQUERY_CHSTORE_H
#define MPQUERY_CHSTORE_H

#include "mpquery.h"
#include "profile.h"
#include "http.h"

/* The frame's id in the store: FNV-1a 64 over (module path, NUL, build
 * id, NUL, offset as 8 bytes little-endian, inline depth as 4 bytes LE);
 * for a [tag] frame over ("[tag]", NUL, its name). */
uint64_t ch_frame_id(const struct profile *p, uint32_t frame);
/* A stack's id: FNV-1a 64 over its frames' ids (8 bytes LE each),
 * outermost first. */
uint64_t ch_stack_id(const uint64_t *frames, size_t n);

/* Checks the store's version (ch_check_version), runs
 * schema/clickhouse.sql's statements (each idempotent), then checks that
 * the store's columns have the types push writes (a store of another
 * schema is an error naming the column). */
int ch_create_schema(struct ch *c, char *err, size_t errlen);
/* The store's version into *version (view mp_version; without it 1 for a
 * store from before versions, 0 for none) is one this mpquery reads, at
 * most ch_schema_version(): 0, else EXIT_FAILED with err "URL: the store
 * is of version N, ...". push and --server both check it. */
int ch_check_version(struct ch *c, long *version, char *err, size_t errlen);
/* push --ttl DAYS: drops the partitions of the runs started more than
 * DAYS days ago (UTC days), mp_run's first; *runs: how many runs. A store
 * of version 1 (not partitioned) is an error. 0 or EXIT_FAILED. */
int ch_drop_expired(struct ch *c, long days, long *runs, char *err, size_t errlen);
int ch_schema_version(void);
/* A load's id: the day its run started (UTC, days since the epoch) in its
 * top 16 bits, by which the store is partitioned (schema/clickhouse.sql),
 * then 48 bits of bits (random, or a followed run's hash). */
static inline uint64_t ch_day_run(uint64_t bits, double start_time)
{
    double day = start_time > 0 ? start_time / 86400 : 0;
    return (uint64_t)(day < 65535 ? day : 65535) << 48 | (bits & 0xffffffffffffULL);
}

/* The tables a push writes, in the order it sends them: mp_run last. */
enum { CH_FRAME, CH_STACK, CH_PROCESS, CH_THREAD, CH_SNAPSHOT, CH_TOTALS, CH_SAMPLE, CH_HIST, CH_STACK_HIST,
       CH_GROWTH, CH_GROWTH_RUN, CH_RUN, CH_NTABLES };
extern const char *const ch_table_name[CH_NTABLES];
/* A table's columns in the order of its rows, "name Type, ..." (with_types)
 * or "name, ...", appended to out: the store's keys, then the columns it
 * copies of the format's table (prof/format.h). Push writes them, --server
 * reads them, ch_create_schema checks them against the store. */
void ch_columns(int t, int with_types, struct strbuf *out);
int ch_ncolumns(int t);

/* What a push writes, buffered per table. A table's rows are sent when its
 * buffer reaches `chunk` bytes; mp_run's only by ch_commit, after all the
 * others: a run whose push fails midway has no mp_run row, and readers
 * never see its rows. Frames and stacks sent once are not sent again by
 * the same writer. */
struct ch_row { char *s; size_t len, cap; };     /* the row being built */
struct ch_writer {
    struct ch *c;
    struct ch_row row;
    int dry_run;                        /* build the rows, send nothing */
    size_t chunk;
    struct strbuf buf[CH_NTABLES];
    uint64_t buffered[CH_NTABLES];      /* rows in buf */
    uint64_t sent[CH_NTABLES];          /* rows sent */
    uint64_t requests, bytes;           /* INSERTs made and their bytes */
    uint64_t uncommitted;               /* bytes built since the last commit */
    struct idmap frames_sent, stacks_sent;  /* ids (as keys) of rows already built */
    uint32_t pushed;                    /* time of the push, for mp_run.pushed */
};
void ch_writer_init(struct ch_writer *w, struct ch *c, size_t chunk, int dry_run);
void ch_writer_free(struct ch_writer *w);

/* A row's values in RowBinary (chwriter.c), and the row done: appended
 * to table t's buffer, sent when full (mp_run's only by ch_commit). */
void ch_u64(struct ch_row *r, uint64_t v);
void ch_i64(struct ch_row *r, int64_t v);
void ch_u32(struct ch_row *r, uint64_t v);
void ch_f64(struct ch_row *r, double v);
void ch_leb128(struct ch_row *r, uint64_t v);
void ch_str(struct ch_row *r, const char *s);
int ch_row_done(struct ch_writer *w, int t, char *err, size_t errlen);

/* A profile's content addresses and its rows grouped by run, made once
 * for all its runs. */
struct ch_source {
    const struct profile *p;
    const char *source;                 /* mp_run.source: the file */
    uint64_t *frame_id, *stack_id;      /* per frame, per stack */
    uint32_t *sample_order, *sample_start;  /* sample indexes by run: run r's are [start[r], start[r+1]) */
    uint32_t *total_order, *total_start;
    uint32_t *hist_order, *hist_start;  /* hist rows by run (run nruns: rows of no snapshot) */
    uint32_t *shist_order, *shist_start;    /* stack_hist rows alike */
    uint32_t *pnum, *tnum;              /* per process, thread: its number in its load (from 1) */
    uint32_t *stack_mark;               /* per stack: 1 + the last run that used it */
    /* push --follow (follow_ship.c): the load's id when not 0 (else 64
     * random bits), and the rows left out because the store has them
     * (NULL: none): per snapshot the tables (1 << CH_*) that hold its rows,
     * per process and per thread 1 when its row is stored; no_run_row:
     * the load's mp_run row is stored. */
    uint64_t run_id;
    const uint16_t *skip_snapshot;
    const unsigned char *skip_process, *skip_thread;
    int no_run_row;
};
void ch_source_init(struct ch_source *s, const struct profile *p, const char *source);
void ch_source_free(struct ch_source *s);

/* One load: run r of a profile. */
struct ch_load {
    uint64_t run;                       /* its id in the store: 64 random bits */
    uint32_t processes, snapshots;      /* snapshots: peaks aside */
    uint64_t rows;                      /* its rows in mp_process, mp_thread, mp_snapshot,
                                           mp_totals, mp_sample (mp_run.rows; the
                                           histograms' rows aside) */
    uint64_t dict_rows;                 /* and the mp_frame and mp_stack rows it added */
};
/* Builds run r's rows (and its mp_run row, held for ch_commit), sending
 * any table whose buffer is full; 0, or the exit code with err set. */
int ch_write_run(struct ch_writer *w, struct ch_source *s, uint32_t r, struct ch_load *load,
                 char *err, size_t errlen);
/* Run r's mp_growth rows (chgrowth.c): per snapshot of the chain (peaks
 * aside) and stack, what its counters grew by since the process's
 * previous snapshot, summed over threads, at the snapshot's time rounded
 * up to the second, with the process's --group exe key; the snapshots the
 * store has (skip_snapshot's CH_GROWTH) left out. */
int ch_growth_rows(struct ch_writer *w, const struct ch_source *s, uint32_t r, uint64_t run, char *err,
                   size_t errlen);

/* Sends every buffered row, mp_snapshot's after the other tables' of
 * rows, then the mp_run rows: the runs built since the last commit are
 * stored. */
int ch_commit(struct ch_writer *w, char *err, size_t errlen);


#endif
