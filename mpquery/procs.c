/* The processes of a profile as report, info and timeline show them: in
 * the order they started (ties by id, so the order is the same on every
 * run), named by their executable, their totals summed, their times as
 * dates. Pure functions of the profile: nothing is allocated. */
#include "procs.h"

#include <time.h>

int procs_by_start(const void *a, const void *b, void *ctx)
{
    const struct profile *p = ctx;
    const struct process *x = &p->procs[*(const uint32_t *)a], *y = &p->procs[*(const uint32_t *)b];
    if (x->start_time != y->start_time) return x->start_time < y->start_time ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

const char *procs_name(const struct process *pr)
{
    return *pr->exe ? path_basename(pr->exe) : "?";
}

void procs_fmt_date(double t, char *buf, size_t n)
{
    time_t s = (time_t)t;
    struct tm tm;
    if (!localtime_r(&s, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm)) snprintf(buf, n, "%.3f", t);
}

void procs_total_add(struct total *sum, const struct total *t)
{
    counters_add(&sum->c, &t->c);
    sum->ncalls_nostack = sat_add(sum->ncalls_nostack, t->ncalls_nostack);
    sum->memtot_nostack = sat_add(sum->memtot_nostack, t->memtot_nostack);
    sum->nfree_unknown = sat_add(sum->nfree_unknown, t->nfree_unknown);
}
