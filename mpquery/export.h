/* What the writers of `mpquery export` share: cmd_export.c (the command;
 * folded is cmd_fold.c's fold_print), export_speedscope.c, export_sites.c
 * (stacks after rules as paths of locations), export_pprof.c and
 * export_massif.c. Every writer starts from the listing of fold (common.c:
 * rules, selection, filters, one display tree) and writes one file to the
 * FILE it is given; the caller opens it and finds write errors (ferror). */
#ifndef MPQUERY_EXPORT_H
#define MPQUERY_EXPORT_H

#include "mpquery.h"
#include "counters.h"
#include "listing.h"
#include "view.h"

/* What the command parsed, for every writer. */
struct export_opts {
    const char *db;             /* the operand, for descriptions */
    const char *out;            /* -o FILE, NULL: stdout */
    int by;                     /* --by, -1: not given */
    int time_bytes;             /* massif: --time-unit B (else ms) */
    double threshold;           /* massif: --threshold, percent */
};

/* The stacks after rules as sequences of locations, for the formats that
 * keep addresses (pprof, massif). A location is one return address of one
 * module with the frames of it that the rules kept, innermost first
 * (inlined calls before the function they were inlined into); locations
 * form a trie by adding an inner frame to the same address (loc_parent:
 * without it, NONE for the outermost). A site is a path of locations,
 * root first, also a trie (site 0: the empty path); every stack maps to
 * the site of its frames after rules: the frames that made the nodes of
 * its display path, each with that node's label (export_sites.c). */
struct sites {
    uint32_t *loc_parent, *loc_frame, *loc_label;  /* per location; frame NONE: "[no frames]" */
    size_t nlocs, loc_cap;
    uint32_t *parent, *loc;                        /* per site: the path's last location */
    size_t n, cap;
    uint32_t *stack_site;                          /* per stack */
    struct idmap loc_map, site_map;
};
/* Builds the sites of every stack of q from its display nodes in t. */
void sites_build(struct sites *s, const struct query *q, struct dtree *t);
void sites_free(struct sites *s);
/* The counters of the selected stacks summed per site, those of stacks
 * whose display path the filters left out aside (malloc'd, s->n). */
counters *sites_counters(const struct sites *s, const struct query *q, const struct dtree *t);

/* "app (pid 100)", "app (pid 100), cc (pid 21) and 3 more": the selected
 * processes, into out. */
void export_process_names(const struct query *q, struct strbuf *out);

/* Each writes its format to f; 0, or the exit code (reported). */
int export_speedscope(struct listing *l, const struct export_opts *o, FILE *f);
int export_pprof(struct listing *l, const struct export_opts *o, FILE *f);
int export_massif(struct listing *l, const struct export_opts *o, FILE *f);

#endif
