/* Memory over time from the snapshots (timeline.c), which `mpquery
 * timeline` prints and `mpquery report` embeds: per selected process its
 * totals at each of its snapshots (peak snapshots aside), the whole tree
 * at each moment a snapshot was taken, optionally the stacks whose live
 * bytes grew most; as a table or as an SVG plot. */
#ifndef MPQUERY_TIMELINE_H
#define MPQUERY_TIMELINE_H

#include "mpquery.h"
#include "output.h"
#include "select.h"

/* The counters a point has (t_counter: their counter ids). */
enum { T_NCALLS, T_MEMTOT, T_MEMLIVE, T_MAXLIVE, NT };

/* One point of a series: a process's snapshot, or the tree at a moment. */
struct point {
    double t;                   /* seconds from the run's start */
    int64_t pid, seq;
    const char *reason, *label;
    int64_t v[NT];
    int64_t *stack_live;        /* [nstacks] */
};

struct timeline {
    const struct profile *p;
    uint32_t *procs;            /* the selected processes, by start */
    size_t nprocs;
    struct point *pts;          /* per process, its snapshots in order; then the tree's */
    size_t npts, *first, *count;    /* per process: its points */
    size_t tree_first, ntree;
    uint32_t *stacks;           /* profile stack indices, the n that grew most */
    size_t nstacks;
    struct point *peak;         /* per process: its peak snapshot (seq 0: none) */
    double t0;                  /* the time times are from, seconds since the epoch */
};

/* The timeline of the processes sel selected (with a snapshot), with the
 * nstacks stacks that grew most; tl->nprocs is 0 when there is none.
 * Times are from the run's start, the time its first snapshot was
 * written, or with from_start from its first process's start if earlier
 * (a peak snapshot is often taken before the first was written). */
void timeline_build(struct timeline *tl, const struct profile *p, const struct selection *sel, size_t nstacks,
                    int from_start);
void timeline_free(struct timeline *tl);
/* One row a point: time, pid (0: the tree), seq, reason, label, ncalls,
 * memtot, memlive, maxlive, then stack_ID per stack (names: its column
 * names' room, tl->nstacks of them). */
void timeline_table(const struct timeline *tl, struct table *tab, char (*names)[40]);

/* The plot: three panels (live bytes, bytes allocated, calls) over the
 * time from the run's start, a line a process, the tree, each stack. */
struct timeline_svg {
    int in_page;                /* an element of an HTML page: no XML prolog, no namespace */
    int peaks;                  /* mark each process's peak snapshot on the live bytes panel */
    const char *const *stack_names; /* per stack of tl->stacks, its name in "#ID NAME";
                                       NULL: the leaf's function as stored */
};
void timeline_svg(FILE *f, const struct timeline *tl, const struct timeline_svg *o);

#endif
