/* Memory over time from the snapshots and ticks (timeline.c), which
 * `mpquery timeline` prints and `mpquery report` embeds: per selected
 * process its totals at each of its snapshots (peak snapshots aside) and
 * ticks (format version 4: every few milliseconds), the whole tree
 * at each moment a snapshot was taken, optionally the stacks that held
 * the most at the peak; as a table or as an SVG plot (timeline_svg.c);
 * and the process peak, as every view prints it. */
#ifndef MPQUERY_TIMELINE_H
#define MPQUERY_TIMELINE_H

#include "mpquery.h"
#include "profile.h"
#include "output.h"
#include "select.h"

/* The counters a point has (t_counter: their counter ids), its resident
 * bytes (0: unknown; a tick's, or the tree's sum of the latest) and the
 * bytes of the program's own mappings (a tick's, format version 5; the
 * tree's sum of the latest, as RSS). */
enum { T_NCALLS, T_MEMTOT, T_MEMLIVE, T_MAXLIVE, T_RSS, T_MAPPED, NT };

/* One point of a series: a process's snapshot or tick, or the tree at a
 * moment. A tick has no seq, label or maxlive, and no stacks' values of
 * its own (those of the snapshot before it). */
struct point {
    double t;                   /* seconds from the start of the first process */
    int64_t pid, seq;
    const char *reason, *label; /* a tick: "tick", "" */
    int tick;
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
    uint32_t *stacks;           /* profile stack indices, the n that held most at the peaks
                                   (with stack_node: per series, its node's stack that held most) */
    size_t nstacks;
    /* set before timeline_build, or NULL: per stack, its display node
     * (view.h; nnodes of them): a series is then a node, its stacks
     * merged as top merges them, so that the chart's names and figures
     * are those of the other views (Python first: a Python frame's) */
    const uint32_t *stack_node; size_t nnodes;
    struct point *peak;         /* per process: its peak snapshot (seq 0: none), with the
                                   chosen stacks' live bytes then */
    double t0;                  /* the time times are from, seconds since the epoch */
};

/* The timeline of the processes sel selected (with a snapshot), with the
 * nstacks stacks that held the most live bytes at the processes' peak
 * snapshots (`top --snapshot peak --by memlive`'s first rows; a process
 * without one: at its last snapshot); tl->nprocs is 0 when there is none.
 * Times are from the start of the earliest selected process, as info's
 * times of a process are from its start. */
void timeline_build(struct timeline *tl, const struct profile *p, const struct selection *sel, size_t nstacks);
/* (tl->stack_node and nnodes are kept: the rest of *tl is set here) */
void timeline_free(struct timeline *tl);
/* One row a point: time, pid (0: the tree), seq, reason, label, ncalls,
 * memtot, memlive, maxlive, rss, mapped (a profile with mappings), then
 * stack_ID per stack (names: its
 * column names' room, tl->nstacks of them). */
void timeline_table(const struct timeline *tl, struct table *tab, char (*names)[40], int human);

/* info's line on a process's points of memory over time (its ticks):
 * how many, their span and the highest sampled memlive and RSS (the
 * curve's maxima, not the process peak), times from the process's start;
 * 0 (nothing in buf) when it has none. */
int timeline_process_line(const struct profile *p, uint32_t proc, char *buf, size_t size);

/* A process's peak snapshot (its latest of reason 'peak' with totals), NONE. */
uint32_t timeline_peak_snapshot(const struct profile *p, uint32_t proc);
/* The process peak, the one figure info, report, timeline and check
 * print as "peak": its maxlive, the high-water mark of its live bytes
 * (exact for one thread, within 64 KiB a thread with several), -1
 * without totals; *snap its peak snapshot (NONE without one: format
 * versions 1 and 2, or no allocation), taken within max(1/128, 4 KiB)
 * below the peak: what timeline_peak_snapshot_live says it holds. */
int64_t timeline_process_peak(const struct profile *p, uint32_t proc, uint32_t *snap);
/* The live bytes a peak snapshot holds (-1: NONE or no totals). */
int64_t timeline_peak_snapshot_live(const struct profile *p, uint32_t snap);
/* Its maxlive: the high-water mark of its live bytes (the largest of its
 * snapshots' totals), -1 without totals. The peak snapshot is captured
 * within max(1/128, 4 KiB) below it (prof/README.md, "The peak"). */
int64_t timeline_process_maxlive(const struct profile *p, uint32_t proc);

/* The plot (timeline_svg.c): panels of live bytes, RSS (when known),
 * bytes allocated and calls over the time from the run's start, a line a
 * process, the tree, each stack; the peak marked. */
struct timeline_svg {
    int in_page;                /* an element of an HTML page: no XML prolog, no namespace */
    int peaks;                  /* mark each process's peak snapshot on the live bytes panel */
    const char *const *stack_names; /* per stack of tl->stacks, its name in "#ID NAME";
                                       NULL: the leaf's function as stored */
    int shade;                  /* shade the time from shade_from to shade_to (seconds from tl->t0,
                                   the plot's times; -1, 1e300: open) on every panel */
    double shade_from, shade_to;
};
/* The root element also says, for a script, where its time axis is:
 * data-plot-left and data-plot-width (its x, in the viewBox's units), data-tmax
 * (the time at its right end) and data-run-offset (tl->t0 less the first
 * process's run's start: a plot's time plus it is +S, as --since takes). */
void timeline_svg(FILE *f, const struct timeline *tl, const struct timeline_svg *o);

#endif
