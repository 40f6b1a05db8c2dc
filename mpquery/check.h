/* mpquery check (cmd_check.c: the measures and the checks; check_out.c:
 * the report as text, json or JUnit XML). A check is a limit on the
 * profile alone, or the growth of one stack (a display node, after rules)
 * or one function (self values, by label) from the baseline; each has
 * the value before and after and the most `after` may be. */
#ifndef MPQUERY_CHECK_H
#define MPQUERY_CHECK_H

#include "mpquery.h"
#include "options.h"
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

/* Writes the report to f. */
void check_print(const struct check_report *r, FILE *f);

#endif
