/* The processes of a profile as report, info and timeline show them
 * (procs.c): in the order they started, named by their executable, their
 * totals rows summed, their times as local dates. */
#ifndef MPQUERY_PROCS_H
#define MPQUERY_PROCS_H

#include "mpquery.h"

/* qsort_r's comparison of process indexes (uint32_t, ctx the profile):
 * by start time, then by id. */
int procs_by_start(const void *a, const void *b, void *ctx);
/* A process's command name (info calls it its role): the basename of its
 * executable ("bash", "python3.11": for a script, its interpreter), "?"
 * when not known. */
const char *procs_name(const struct process *pr);
/* Seconds since the epoch as the local "YYYY-MM-DD HH:MM:SS" in buf (the
 * number itself when it is no date). */
void procs_fmt_date(double t, char *buf, size_t n);
/* sum += t: the counters and the allocations without a stack, saturated
 * (counters_derive is the caller's). */
void procs_total_add(struct total *sum, const struct total *t);

#endif
