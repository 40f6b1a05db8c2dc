/* mpquery check (cmd_check.c: the measures and the checks; check_out.c:
 * the report as text, json or JUnit XML). A check is a limit on the
 * profile alone, or the growth of one stack (a display node, after rules)
 * or one function (self values, by label) from the baseline; each has
 * the value before and after and the most `after` may be. */
#ifndef MPQUERY_CHECK_H
#define MPQUERY_CHECK_H

#include "mpquery.h"
#include "profile.h"
#include "opt_groups.h"
#include "options.h"
#include "select.h"
#include "view.h"

/* The measures, per stack, function or profile: allocations, bytes
 * allocated, live bytes at the peak snapshot, live bytes at exit (as
 * `mpquery leaks` counts them: the built-in suppressions left out). */
enum { M_CALLS, M_BYTES, M_PEAK, M_LEAKED, NM };
extern const char *const measure_name[NM];
enum { K_LIMIT, K_STACK, K_FUNCTION };

struct finding {
    int kind, measure;
    uint32_t item;              /* K_STACK: display node; K_FUNCTION: label; K_LIMIT: NONE */
    double before, after;       /* K_LIMIT: before unused */
    double limit;               /* the most `after` may be */
    double noise;               /* K_STACK, K_FUNCTION: sigmas x the difference's standard deviation */
    int failed;
};

struct check_report {
    const struct common *c;
    const struct dtree *t;
    const char *current, *baseline;     /* for the report's first line; baseline NULL: limits only */
    double max_growth, sigmas;          /* percent; standard deviations */
    double min_share, min_bytes, min_calls; /* the floors' settings: percent, bytes, calls */
    double floor[NM];                   /* per measure, the least growth that fails */
    const char *filter;                 /* the --filter patterns, joined, for limit rows */
    int sampled[2];                     /* baseline, current: sampled (estimates) */
    struct finding *f; size_t n;        /* limits first, then growths that failed */
    size_t compared[2];                 /* stacks, functions compared */
    size_t grown[2];                    /* of them, grown */
    size_t limits_failed;
    int format;                         /* CHECK_TEXT, CHECK_JSON, CHECK_JUNIT */
};
enum { CHECK_TEXT, CHECK_JSON, CHECK_JUNIT };

/* One side (0 baseline, 1 current): its profile (and the one its peak
 * is read from: the same for files, a second load from a store), the
 * selections at exit and at the peak, each stack's display node. */
struct side {
    struct profile *p, *pp;
    struct selection last, peak;
    uint32_t *node, *node_peak;
    int has_peak;               /* else peak is each stack's maxlive at exit */
    double sample;              /* MP_SAMPLE of its processes (the largest); 0: full capture */
    double scale;               /* 1 / the runs selected: a side is their mean */
    double total[NM];           /* the whole profile's (filters aside): calls, bytes, and the
                                   process peak for peak and leaked; a mean, as the values */
    double window;              /* how far below the process peak its snapshot may be taken */
};

/* Per side and measure, per display node: the value and its variance. */
struct measures { double *v[2][NM], *var[2][NM]; };
/* Side k's measures per node into ms (its totals into s); then its
 * totals and window (side_totals); the functions' from the nodes'. */
void side_measures(const struct dtree *t, struct side *s, int k, struct measures *ms);
void side_totals(struct side *s);
void function_measures(const struct dtree *t, const struct measures *node, struct measures *fn);
/* The stacks (display nodes) of side 0 (n[0]) and of side 1 (n[1]) that
 * have calls or live bytes, filters aside, and of them those of both
 * (n[2]). */
void stacks_in_common(const struct dtree *t, const struct side *s, size_t n[3]);
void measures_alloc(struct measures *ms, size_t n);
void measures_free(struct measures *ms);

/* Writes the report to f. */
void check_print(const struct check_report *r, FILE *f);

#endif
