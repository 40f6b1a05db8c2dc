/* The snapshot layer's interface, for process/ and entry/ above it: a
 * snapshot taken (flush.c) and the process's points of memory over time
 * (ticks.c). flush.h, the layer's own shared header, includes it. */
#ifndef MP_SNAPSHOT_H
#define MP_SNAPSHOT_H

#include "record.h"

/* ------------------------------------------------------------ flush.c */
enum flush_reason { FLUSH_EXIT, FLUSH_INTERVAL, FLUSH_API, FLUSH_SIGNAL, FLUSH_EXEC, FLUSH_FATAL, FLUSH_DETACH,
                   FLUSH_NEAR_LIMIT };
int flush_snapshot(enum flush_reason reason, const char *label);
void flush_ahead(void);         /* the background thread: the stack tree written ahead, when large */
void flush_lock(void);
void flush_unlock(void);
void flush_close(void);         /* the process ends: no flush after this one */
void flush_after_fork_child(void);
void flush_release(void);          /* a detach: the session's database state, its stack's pages given back */
void flush_after_attach(void);      /* a new session: a new file or run, nothing of it known */
void flush_forget_addresses(void);      /* after an unload; flush lock held */
void flush_check_output(int first_of_run);      /* at start: says when MP_OUT cannot be written */

/* ------------------------------------------------------------ ticks.c */
/* Memory over time: points of the process's totals taken by the
 * background thread, TICK_POINTS to 2 * TICK_POINTS of them kept. */
#define TICK_POINTS 100
struct tick_point { double time; uint64_t ncalls, memtot, memlive, rss, mapped; };    /* mapped: maps.c's */
void ticks_start(double now);           /* at init: the first point is due now (none with MP_TICK=0) */
double ticks_take(double now, int overdue);     /* a point if one is due (overdue: late); when the next is (0: none) */
size_t ticks_copy(struct tick_point *out);      /* the points so far, out: 2 * TICK_POINTS */
uint64_t ticks_rss(void);               /* resident bytes now, 0: unknown */
void ticks_stop(void);                  /* the process is ending: no more points */
uint64_t ticks_last_rss(void);          /* the RSS of a snapshot's point: now, or as at ticks_stop */
void ticks_lock(void);                  /* fork: the buffer consistent in the child */
void ticks_unlock(void);
void ticks_after_fork_child(void);      /* a new process: its own points, from now */

#endif
