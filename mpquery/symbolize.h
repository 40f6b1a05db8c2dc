/* What mpquery symbolize's files share: cmd_symbolize.c (the command, the
 * modules resolved, the frames written) and symbolize_tree.c (the stack
 * tree rebuilt when an inline chain changed length). */
#ifndef MPQ_SYMBOLIZE_H
#define MPQ_SYMBOLIZE_H

#include "mpquery.h"
#include "symdb.h"

/* One distinct (module, offset) and its frames after resolution. */
struct addr {
    size_t first, nold;             /* its rows in frows */
    int nnew;                       /* frames after resolution; 0 = unchanged */
    int64_t *ids;                   /* nnew frame ids (existing rows reused) */
};

struct sym {
    struct symdb db;
    const char *path;
    int skip_mismatched;
    struct frow *frows; size_t nframes;     /* by (module, offset, inline_depth) */
    struct addr *addrs; size_t naddrs;
    struct idmap frame_ix;          /* frame id → index in frows */
    struct strtab names;            /* function and file names seen */
    struct idmap fn_id, file_id;    /* strtab index → database id */
    int64_t max_function, max_file, max_frame;
    size_t modules, resolved, changed, kept, gained_names, gained_lines, new_frames;
    struct dbgd *dbgd;              /* --debuginfod: the servers' client; NULL: never asked */
    size_t fetched, not_fetched;    /* modules whose debug file was fetched, or was not */
    int fetch_failed;               /* a server failed (EXIT_FAILED at the end) */
};

/* A failed database call: "mpquery: DB: what: why"; returns rc. */
static inline int db_fail(struct sym *s, int rc)
{
    return rc ? error(rc, "%s: %s", s->path, s->db.err) : 0;
}

/* The stack tree rebuilt (symbolize_tree.c): each old node mapped to its
 * new path; 0 or the exit code (reported). *nodes: the new tree's. */
int symbolize_rebuild_stacks(struct sym *s, size_t *nodes);

#endif
