/* A stack's counters (ncalls, memtot ... coldage): their order and names
 * (units.c parses them), how two values combine, and sets of them. Data
 * and arithmetic only. */
#ifndef MPQUERY_COUNTERS_H
#define MPQUERY_COUNTERS_H

#include <stdint.h>

/* A stack's counters, in the order every table lists them. nlive (blocks
 * allocated and not freed) is not stored: it is ncalls - nfree, set by
 * counters_derive when a row is loaded, and sums like the others. ntemp
 * (temporary blocks) and time (MP_TIME: nanoseconds) and the ones after
 * are the samples' alone: a totals row has the first NCOUNTERS (the others
 * stay 0 and are never shown), a sample all NSTACK_COUNTERS (a column an
 * older format version lacks reads as 0). Format version 5 adds the
 * program's own mappings (nmap, mapped, maxmapped, rss: set on the rows of
 * stacks whose leaf is an '[mmap]' frame, 0 on heap rows) and cold blocks
 * (MP_COLD: memcold bytes, coldage snapshots). Tables show time, the
 * mapping counters and the cold ones only for a profile that has them
 * (shown_counters). */
enum { NCALLS, MEMTOT, NFREE, NLIVE, MEMLIVE, MAXLIVE, NTEMP, TIME,
       NMAP, MAPPED, MAXMAPPED, RSS, MEMCOLD, COLDAGE, NSTACK_COUNTERS };
enum { NCOUNTERS = NTEMP };
typedef struct { int64_t v[NSTACK_COUNTERS]; } counters;
extern const char *const counter_name[NSTACK_COUNTERS];
int counter_parse(const char *name);     /* -1 when unknown */
/* The counters in order, for messages (one line) and --help (two). */
#define COUNTER_LIST "ncalls, memtot, nfree, nlive, memlive, maxlive, ntemp, time, " \
                     "nmap, mapped, maxmapped, rss, memcold or coldage"
#define COUNTER_HELP "ncalls, memtot, nfree, nlive, memlive, maxlive, ntemp,\n" \
                     "time, nmap, mapped, maxmapped, rss, memcold or coldage"
/* A set of counters: bit k for counter k. */
typedef uint32_t counter_set;
#define COUNTER_BIT(k) ((counter_set)1 << (k))
#define MAPPING_COUNTERS (COUNTER_BIT(NMAP) | COUNTER_BIT(MAPPED) | COUNTER_BIT(MAXMAPPED) | COUNTER_BIT(RSS))
#define COLD_COUNTERS (COUNTER_BIT(MEMCOLD) | COUNTER_BIT(COLDAGE))
/* How two values of a counter combine (threads, processes, stacks merged,
 * files merged): summed, or the larger kept (coldage: an age, not an
 * amount). counters_add is the one place that applies it. */
#define MAX_COUNTERS COUNTER_BIT(COLDAGE)
static inline int counter_is_max(int k) { return (MAX_COUNTERS & COUNTER_BIT(k)) != 0; }
/* The largest value a profile's counter may hold (2^62: 4 EiB, 146 years
 * of nanoseconds); the loader refuses others, and negative ones, as a
 * corrupt file. Two values then add without overflow; sums of more
 * saturate (sat_add) at INT64_MAX / INT64_MIN instead of wrapping. */
#define COUNTER_MAX ((int64_t)1 << 62)
static inline int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}
static inline void counters_derive(counters *a)
{
    a->v[NLIVE] = a->v[NCALLS] - a->v[NFREE];
}
/* Two values of counter k as one (counter_is_max: the larger, else the sum). */
static inline int64_t counter_combine(int k, int64_t a, int64_t b)
{
    return counter_is_max(k) ? (a > b ? a : b) : sat_add(a, b);
}
static inline void counters_add(counters *a, const counters *b)
{
    for (int i = 0; i < NSTACK_COUNTERS; i++) a->v[i] = counter_combine(i, a->v[i], b->v[i]);
}
static inline int counters_zero(const counters *a)
{
    for (int i = 0; i < NSTACK_COUNTERS; i++) if (a->v[i]) return 0;
    return 1;
}

#endif
