/* A snapshot's points of memory over time (ticks.c), inside the flush's
 * transaction: they replace those the process's previous snapshot wrote,
 * the buffer's points and then one of this snapshot's own totals at its
 * time, so that the last point is always the latest snapshot's. */
#define _GNU_SOURCE
#include "flush.h"
#include "maps.h"

static struct tick_point tick_copy[2 * TICK_POINTS + 1];

/* t: the snapshot's process totals, read at now. None with MP_TICK=0. */
int ticks_rows_write(struct writer *w, double now, const struct mp_totals *t)
{
    if (mp_opt.tick <= 0) return 0;
    size_t n = ticks_copy(tick_copy);
    while (n && tick_copy[n - 1].time >= now) n--;     /* taken as this snapshot was written: the next one has them */
    tick_copy[n++] = (struct tick_point){ now, t->ncalls, t->memtot, t->live > 0 ? (uint64_t)t->live : 0,
                                          ticks_last_rss(), maps_mapped_now() };
    sqlite3_stmt *del = prepare(w, "DELETE FROM tick WHERE process = ?");
    if (!del) return -1;
    sqlite3_bind_int64(del, 1, flush_ids.process);
    int rc = step_done(w, del);
    sqlite3_finalize(del);
    sqlite3_stmt *st = rc ? NULL : prepare_insert(w, "INSERT OR REPLACE", FT_tick, 1);
    if (!st) return -1;
    for (size_t i = 0; i < n && !rc; i++) {
        const struct tick_point *pt = &tick_copy[i];
        sqlite3_bind_int64(st, FORMAT_PARAM(tick, process), flush_ids.process);
        sqlite3_bind_double(st, FORMAT_PARAM(tick, time), pt->time);
        sqlite3_bind_int64(st, FORMAT_PARAM(tick, ncalls), (int64_t)pt->ncalls);
        sqlite3_bind_int64(st, FORMAT_PARAM(tick, memtot), (int64_t)pt->memtot);
        sqlite3_bind_int64(st, FORMAT_PARAM(tick, memlive), (int64_t)pt->memlive);
        sqlite3_bind_int64(st, FORMAT_PARAM(tick, rss), (int64_t)pt->rss);
        sqlite3_bind_int64(st, FORMAT_PARAM(tick, mapped), (int64_t)pt->mapped);
        rc = step_done(w, st);
    }
    sqlite3_finalize(st);
    return rc;
}
