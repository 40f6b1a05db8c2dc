/* What mpquery's files share: the in-memory profile (profile.c, the only
 * SQL reader, with profile_link.c turning ids into indexes; profile_write.c,
 * symbolize's writes), the selection of samples (select.c), the rules
 * (rules.c), the display tree of rewritten paths (view.c), output writers
 * (output.c), option tables (options.c), what the commands that read
 * profiles share (common.c) and small containers (util.c).
 *
 * Invariant: after profile_load every cross reference is a dense array index
 * (never a database id), checked once at load time, so commands index arrays
 * without further validation. Database ids are kept only for printing. */
#ifndef MPQUERY_H
#define MPQUERY_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE         /* qsort_r, memmem, REG_STARTEND: every .c includes this first */
#endif

#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define MPQ_VERSION "1.0"
#define NONE UINT32_MAX            /* "no index" in uint32_t index arrays */
#define NAME_MAX_BYTES 65536       /* longer names are cut on load (with "...") */
/* The deepest stack the recorder writes, in frames: MP_DEPTH (at most 1024)
 * return addresses of RES_MAX_INLINE (32, prof/resolve.h) inline levels
 * each, the [truncated] marker and MP_MAX_TAGS (16, prof/record.h) tags. A
 * deeper one is a corrupt file (refused on load: output that lists paths
 * grows with the square of the depth). */
#define STACK_DEPTH_MAX (1024 * 32 + 1 + 16)

/* Exit codes: 2 bad input or usage, 1 failed operation. */
enum { EXIT_BAD_INPUT = 2, EXIT_FAILED = 1 };

/* ---------------------------------------------------------------- util.c */
/* Allocation that exits on failure; a size of 0 is valid (a pointer that
 * must only be freed), so callers need no special case for empty tables. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* Grows *arr (of `size`-byte elements, *cap of them) by doubling until it
 * holds index n; new elements zeroed. */
void *array_grow(void *arr, size_t n, size_t *cap, size_t size);
/* n uint32_t indexes, all NONE. */
uint32_t *none_array(size_t n);
char *xstrdup(const char *s);
/* CLOCK_MONOTONIC in seconds, for durations. */
double monotonic_seconds(void);
/* "mpquery: ..." on stderr; returns `code` so that commands can
 * `return error(2, "%s: ...", path)`. */
int error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

struct strbuf { char *s; size_t len, cap; };
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_putc(struct strbuf *sb, char c);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(struct strbuf *sb);

/* Bump allocator for many small strings freed together. */
struct arena { struct arena_block *head; };
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_free(struct arena *a);

/* Open-addressing map uint64 key → uint32 value (values != NONE). */
struct idmap { uint64_t *keys; uint32_t *vals; size_t cap, len; };
void idmap_init(struct idmap *m, size_t expected);
uint32_t idmap_get(const struct idmap *m, uint64_t key);
/* Returns the value slot for key; *created = 1 when it was just added (the
 * slot then holds NONE and the caller must store a value). */
uint32_t *idmap_put(struct idmap *m, uint64_t key, int *created);
void idmap_free(struct idmap *m);
/* Makes room for `more` additional keys without growing again. */
void idmap_reserve(struct idmap *m, size_t more);

/* Interned strings: equal strings get the same dense id. */
struct strtab {
    const char **str; uint32_t *len; uint64_t *hash;
    size_t n, cap;
    uint32_t *slots; size_t nslots;
    struct arena text;
};
void strtab_init(struct strtab *t);
uint32_t strtab_intern(struct strtab *t, const char *s, size_t len);
void strtab_free(struct strtab *t);

uint64_t hash_bytes(const void *p, size_t n);
/* Demangled copy (malloc'd) of an Itanium C++ name, or NULL. */
char *demangle(const char *name);
const char *path_basename(const char *path);
/* Directory of the running executable (malloc'd), from /proc/self/exe. */
char *exe_dir(void);
/* Parses a whole decimal int64; 0 on success. */
int parse_int64(const char *s, int64_t *out);

/* Bounded selection: sorts the k best of items[0..n) (by cmp, best first)
 * into items[0..k) and returns k' = min(k, n). O(n log k). */
size_t select_top(uint32_t *items, size_t n, size_t k,
                  int (*cmp)(uint32_t, uint32_t, void *), void *ctx);

/* ---------------------------------------------------------------- counters */
/* A stack's counters, in the order every table lists them. nlive (blocks
 * allocated and not freed) is not stored: it is ncalls - nfree, set by
 * counters_derive when a row is loaded, and sums like the others. ntemp
 * (temporary blocks) and time (MP_TIME: nanoseconds) are the samples'
 * alone, last: a totals row has the first NCOUNTERS (the others stay 0 and
 * are never shown), a sample all NSTACK_COUNTERS (a file of format
 * version 1 reads ntemp as 0, of versions 1 and 2 time as 0). Tables show
 * time only for a profile recorded with it (shown_counters). */
enum { NCALLS, MEMTOT, NFREE, NLIVE, MEMLIVE, MAXLIVE, NTEMP, TIME, NSTACK_COUNTERS };
enum { NCOUNTERS = NTEMP };
typedef struct { int64_t v[NSTACK_COUNTERS]; } counters;
extern const char *const counter_name[NSTACK_COUNTERS];
int counter_parse(const char *name);     /* -1 when unknown */
/* The counters in order, for --help and messages. */
#define COUNTER_LIST "ncalls, memtot, nfree, nlive, memlive, maxlive, ntemp or time"
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
static inline void counters_add(counters *a, const counters *b)
{
    for (int i = 0; i < NSTACK_COUNTERS; i++) a->v[i] = sat_add(a->v[i], b->v[i]);
}
static inline int counters_zero(const counters *a)
{
    for (int i = 0; i < NSTACK_COUNTERS; i++) if (a->v[i]) return 0;
    return 1;
}

/* ---------------------------------------------------------------- profile.c */
struct run { int64_t id; const char *token; double start_time; };
struct process {
    int64_t id, pid, ppid, run_id;
    uint32_t run;                       /* index into profile.runs */
    const char *exe, *cmdline, *host, *settings;
    const char *ended;                  /* "exit 3", "signal SIGSEGV"...; "" (version 1: always) */
    double start_time, end_time;        /* end_time < 0: none yet */
    uint32_t first_snapshot, nsnapshots; /* range in profile.snapshots (by seq) */
};
struct thread { int64_t id, seq, tid; uint32_t process; const char *name; };
struct module { int64_t id; const char *path, *build_id, *base; int special; };
/* A tag scope's module: its frames are named by the tag (function), their
 * offset is the name's hash (tag_offset). */
static inline int module_is_tag(const struct module *m) { return !strcmp(m->path, "[tag]"); }
struct frame {
    int64_t id, offset;
    uint32_t module, function, file;    /* function, file: NONE when unknown */
    int32_t inline_depth, line;
};
struct stack { int64_t id; uint32_t parent, frame; uint32_t depth; };
struct snapshot {
    int64_t id, seq, profiler_memory;
    uint32_t process;
    double time;
    const char *reason, *label;
    int peak;                           /* reason 'peak': not in the chain of the others */
};
struct sample { uint32_t snapshot, stack, thread; counters c; };
struct total {
    uint32_t snapshot, thread;          /* thread NONE = whole process */
    counters c;
    int64_t ncalls_nostack, memtot_nostack, nfree_unknown;
};

/* A database file of a profile loaded from several (load_profiles): the
 * ids its runs have in the profile, the processes it holds of each, and
 * its latest run (the largest id it had in the file). */
struct db_file { const char *path; int64_t *runs, *nprocs; size_t nruns; int64_t latest; };

struct profile {
    const char *path;                   /* for messages: the file, or "a.db (and 2 more)" */
    const char *db_path;                /* the database read: the file, or the files merged */
    struct db_file *sources; size_t nsources; /* several files: each one's runs; else none */
    uint8_t *latest_runs;               /* per run: the latest of a file, selected by default;
                                           NULL: the last run (the largest id) */
    struct arena text;
    struct run *runs; size_t nruns;
    struct process *procs; size_t nprocs;
    struct thread *threads; size_t nthreads;
    struct module *modules; size_t nmodules;
    const char **functions; size_t nfunctions;
    const char **files; size_t nfiles;
    struct frame *frames; size_t nframes;
    struct stack *stacks; size_t nstacks;
    uint32_t *stack_order;              /* parents before children */
    struct snapshot *snapshots; size_t nsnapshots;
    struct sample *samples; size_t nsamples;
    struct total *totals; size_t ntotals;
    uint32_t *snapshot_total;           /* per snapshot: its whole-process totals row, NONE */
    struct hist_row *hists; size_t nhists;  /* loaded with PROFILE_HISTS (hists.h) */
    struct stack_hist_row *stack_hists; size_t nstack_hists;
    int version;                        /* format version, 1..SCHEMA_VERSION (user_version) */
    int has_time;                       /* a process recorded with MP_TIME=1 */
};
/* How many counters tables show, from the first: all, or all but time
 * when no process recorded it. */
static inline int shown_counters(const struct profile *p) { return p->has_time ? NSTACK_COUNTERS : TIME; }
/* Loads the whole database (one pass per table). On failure returns the
 * exit code and writes the reason (without the path) into err. */
/* peak_rows: also the sample rows of peak snapshots, which only a
 * selection of a peak snapshot reads (without them, a peak-heavy profile
 * loads in half the time). */
int profile_load(const char *path, struct profile **out, int peak_rows, char *err, size_t errlen);
/* profile_load, then more(ctx, db, p) (unless NULL) in the same read
 * transaction, so that it reads what the profile was loaded from (merge:
 * the tables the profile does not hold); a non-zero return fails the load. */
struct sqlite3;
int profile_load_more(const char *path, int peak_rows, struct profile **out,
                      int (*more)(void *ctx, struct sqlite3 *db, struct profile *p), void *ctx,
                      char *err, size_t errlen);
void profile_free(struct profile *p);
/* Index of the stack with this database id, or NONE. */
uint32_t profile_stack_index(const struct profile *p, int64_t id);
/* Opens a database (read-only unless writable: symbolize) and checks that
 * it is a profile of this schema version, made only of mallocprof's own
 * schema objects; shared by profile_load, sql, symbolize, record and merge. */
int profile_open_db(const char *path, struct sqlite3 **db, int writable, char *err, size_t errlen);
/* The processes and snapshots of the run with this MP_RUN token (record):
 * processes (pids, as mpquery info's process tree counts them), their
 * images (process rows: an exec starts a new one), snapshots (all, as info
 * lists them) and those of them that are peaks; 0, or EXIT_FAILED with
 * the reason in err. */
struct run_count { int64_t processes, images, snapshots, peaks; };
int profile_count_run(struct sqlite3 *db, const char *token, struct run_count *c, char *err, size_t errlen);

/* symbolize's access to the database it rewrites: its reads are at the end
 * of profile.c, its writes in profile_write.c. Each call returns 0, or
 * EXIT_FAILED with "WHAT: sqlite's message" in err (symdb_max_id: -1). */
struct sqlite3_stmt;
struct symdb {
    struct sqlite3 *db;
    struct sqlite3_stmt *frame_update, *frame_insert;   /* prepared on first use */
    char err[1024];
};
/* A frame row as symbolize works on it; function, file: 0 = NULL. */
struct frow {
    int64_t id, module, offset, function, file;
    int depth, line;
    int64_t addr;                   /* symbolize's: index of its address */
};
struct stack_row { int64_t id, parent, frame; };
int64_t symdb_max_id(struct symdb *d, const char *table);
int symdb_each_name(struct symdb *d, int files, void (*fn)(void *ctx, int64_t id, const char *name),
                    void *ctx);
/* Sorted by (module, offset, inline_depth): an address's rows are consecutive. */
int symdb_frames(struct symdb *d, struct frow **out, size_t *n);
int symdb_stacks(struct symdb *d, struct stack_row **out, size_t *n);
/* The modules that are files (not [tag], [unknown]...), by id; their
 * strings in text. */
struct module_row { int64_t id; const char *path, *build_id; };
int symdb_modules(struct symdb *d, struct module_row **out, size_t *n, struct arena *text);
/* BEGIN IMMEDIATE, COMMIT, ROLLBACK */
int symdb_exec(struct symdb *d, const char *sql);
int symdb_insert_name(struct symdb *d, int is_file, int64_t id, const char *name);
/* Sets frame f->id's function, file and line; with insert, adds f whole. */
int symdb_write_frame(struct symdb *d, const struct frow *f, int insert);
/* The stack table becomes rows[0..nrows); sample rows move from stack
 * old[i].id to new_ids[i]; frames no stack uses any more are deleted. */
int symdb_replace_stacks(struct symdb *d, const struct stack_row *old, const int64_t *new_ids, size_t nold,
                         const struct stack_row *rows, size_t nrows);
/* Finalizes its statements (the connection stays open); then closes. */
void symdb_finish(struct symdb *d);
void symdb_close(struct symdb *d);

/* ---------------------------------------------------------------- select.c */
enum { SNAP_LAST, SNAP_SEQ, SNAP_ID, SNAP_LABEL, SNAP_PEAK };
struct select_opts {
    int run_all, has_run; int64_t run_id;
    int has_pid; int64_t pid;
    int has_tid; int64_t tid;   /* --thread TID */
    const char *thread_re;      /* --thread RE: the threads whose whole name (as shown) matches */
    const struct ruleset *rules; /* their `thread replace` lines name the threads (load_rules); NULL: as recorded */
    int snap_kind; int64_t snap_value; const char *snap_label;
    int live_only;              /* leaks: only stacks with blocks or bytes still live */
    int keep_rows;              /* fill selection.rows (--per-thread views) */
};
struct selection {
    uint8_t *run_on;            /* per run: selected */
    size_t nruns_on;
    uint32_t run;               /* the run index when one run is selected, else NONE */
    uint32_t *proc_snapshot;    /* per process: selected snapshot index, NONE = not selected */
    size_t nselected;           /* selected processes */
    counters *stack_c;          /* per stack: counters summed over threads/processes */
    uint8_t *thread_ok;         /* per thread: selected */
    const char **thread_name;   /* per thread: its name as shown (after thread rules) */
    struct arena names;         /* their text */
    uint32_t *rows; size_t nrows; /* keep_rows: the sample rows summed into stack_c, one per
                                   (stack, thread); live_only does not apply to them */
};
int select_parse_snapshot(const char *arg, struct select_opts *o);
int select_apply(const struct profile *p, const struct select_opts *o,
                 struct selection *s, char *err, size_t errlen);
void selection_free(struct selection *s);
/* The process totals row (thread = whole process) of a snapshot, or NULL. */
const struct total *snapshot_total(const struct profile *p, uint32_t snapshot);

/* ---------------------------------------------------------------- threads.c */
/* --thread and --group-threads patterns: POSIX ERE matched against the
 * whole name. compile: 0, or 2 with regerror's text in err. */
int thread_pattern_compile(const char *pattern, regex_t *re, char *err, size_t errlen);
int thread_pattern_match(const regex_t *re, const char *name);
/* --thread's value is a tid when it is all digits. */
int thread_spec_is_tid(const char *arg);
/* Per thread: its name after the rules' thread lines (rules NULL: the
 * recorded name); the text in `text` (malloc'd array). */
const char **thread_names(const struct profile *p, const struct ruleset *rules, struct arena *text);
/* The roots of per-thread views: every selected thread in one group
 * (group_of, NONE: not selected), each group named. */
struct thread_groups {
    uint32_t *group_of;         /* per thread */
    const char **name;          /* per group */
    size_t n;
    struct arena text;
};
/* One group per process: "EXE (pid N)". */
void thread_groups_by_process(const struct profile *p, const struct selection *s, struct thread_groups *g);
/* One group per pattern, the threads whose name matches it (the first that
 * does), named by the pattern; every other thread its own, "NAME (tid N)".
 * 0, or 2 with err set (bad regex). */
int thread_groups_by_name(const struct profile *p, const struct selection *s, const char *const *patterns,
                          size_t npatterns, struct thread_groups *g, char *err, size_t errlen);
void thread_groups_free(struct thread_groups *g);
/* s->rows (keep_rows) ordered by group into rows (sized s->nrows); returns
 * the start of each group's rows (g->n + 1 entries, malloc'd). */
size_t *group_rows(const struct profile *p, const struct selection *s, const struct thread_groups *g,
                   uint32_t *rows);

/* ---------------------------------------------------------------- rules.c */
enum { RULE_DROP = 1, RULE_PRUNE = 2, RULE_ROOT = 4 };
struct ruleset;
struct ruleset *rules_new(void);
/* Appends the rules of a file; on error returns 2 with "FILE:LINE: why". */
int rules_load(struct ruleset *rs, const char *path, char *err, size_t errlen);
/* The same from memory: len bytes of a rules file, errors as "NAME:LINE: why". */
int rules_parse(struct ruleset *rs, const char *text, size_t len, const char *name,
                char *err, size_t errlen);
size_t rules_count(const struct ruleset *rs);
/* The rules that mark frames: drop, prune, root. */
size_t rules_count_marks(const struct ruleset *rs);
/* The last collapse-templates line's DEPTH, or -1 (none, or off; rs NULL). */
int rules_collapse_depth(const struct ruleset *rs);
/* Runs the rules in order on name; the rewritten name goes to out, the
 * stack flags (RULE_*) are returned. */
unsigned rules_apply(const struct ruleset *rs, const char *name, size_t len,
                     struct strbuf *out);
/* Runs the `thread replace` lines in order on a thread name, into out. */
void rules_apply_thread(const struct ruleset *rs, const char *name, size_t len, struct strbuf *out);
void rules_free(struct ruleset *rs);

/* ---------------------------------------------------------------- names.c */
/* A function's name for people (text output), after every rule: template
 * argument lists nested more than depth levels deep become <…> (depth < 0:
 * none), and with no_signatures the parameter list goes (with the
 * qualifiers after it). A name that is not C++ comes back unchanged. */
void shorten_name(const char *s, size_t n, int depth, int no_signatures, struct strbuf *out);

/* ---------------------------------------------------------------- view.c */
/* The display tree: paths of frame labels after rules, as a trie. Node 0
 * is the empty path; a node's parent index is always smaller than its own,
 * so reverse index order visits children before parents. Two profiles
 * viewed into one tree (diff) get equal nodes for equal paths. */
struct dtree {
    uint32_t *parent, *label; size_t n, cap;
    struct idmap child;         /* (parent << 32 | label) → node */
    struct strtab labels;       /* label id → text */
    uint32_t children_ready;    /* child_start / child_list built */
    uint32_t *child_start, *child_list;
    /* with filters (view_build), per node: 1 when they leave its path out:
     * --filter given and no frame on the path matches one, or a frame
     * matches an --exclude or is marked (drop, prune, root) by a
     * suppression rule; names tested as shown. NULL without filters. */
    uint8_t *left_out;
    uint8_t *tag_label; size_t tag_cap;     /* per label: 1 when a [tag] frame's (view_build) */
};
struct view_opts {
    const struct ruleset *rules;
    int no_inline, lines, module;
    int collapse, no_signatures;            /* function names shortened after the rules (names.c):
                                               the rules' collapse-templates, no parameter lists */
    const char **filter; size_t nfilter;    /* --filter / --exclude */
    const char **exclude; size_t nexclude;
    const struct ruleset *suppress;         /* leaks --suppressions, or NULL */
};
void dtree_init(struct dtree *t);
void dtree_free(struct dtree *t);
/* Maps every stack of p to a display node (out: per stack index) and,
 * with filters, sets t->left_out. Returns 0, or 2 with err set (bad
 * --filter or --exclude regex). */
int view_build(const struct profile *p, const struct view_opts *o,
               struct dtree *t, uint32_t *stack_node, char *err, size_t errlen);
/* Adds per-stack counters into per-node counters (node_c sized t->n). */
void view_accumulate(const struct profile *p, const struct selection *s,
                     const uint32_t *stack_node, counters *node_c);
/* Per-node subtree sums (sub sized t->n). */
void dtree_subtotals(const struct dtree *t, const counters *own, counters *sub);
/* The tree of tag scopes: the leading [tag] frames of the paths of t, named
 * without the "[tag] " prefix, built into scopes (dtree_init'ed by the
 * caller). Per node of t, scope_of is the scope node of its innermost tag
 * (0: the path has no tag). */
void dtree_tag_scopes(const struct dtree *t, struct dtree *scopes, uint32_t *scope_of);
/* Self (leaf) and inclusive (stack counted once per function) per label. */
void dtree_functions(struct dtree *t, const counters *own, counters *self, counters *incl);
void dtree_children(struct dtree *t, int sorted);
/* Leaf-first labels of a node joined by sep, at most depth frames
 * (0 = all), " < ..." style ellipsis when cut. */
void dtree_short_path(const struct dtree *t, uint32_t node, size_t depth,
                      const char *sep, struct strbuf *out);
/* Leaf-first labels of a node as a JSON array of strings. */
void dtree_frames_json(const struct dtree *t, uint32_t node, struct strbuf *out);
/* Root-first path for folded output, names escaped for the format. */
void dtree_fold_path(const struct dtree *t, uint32_t node, struct strbuf *out);
/* Depth-first over the tree in path order (siblings sorted by label),
 * calling emit with each node's escaped root-first path; subtrees whose
 * keep[] is zero are skipped. */
void fold_walk(struct dtree *t, const int64_t *keep,
               void (*emit)(uint32_t node, const char *path, size_t len, void *ctx), void *ctx);
/* Escapes a frame label for folded stacks: ';' → ':', control chars → ' '. */
void fold_escape(const char *s, size_t n, struct strbuf *out);
/* Base display name of a frame before rules: demangled function name, or
 * basename(module)+0xOFFSET, or the special module's own label. */
void frame_base_name(const struct profile *p, uint32_t frame, struct strbuf *out);

/* ---------------------------------------------------------------- output.c */
enum { FMT_TEXT, FMT_CSV, FMT_JSON };
int format_parse(const char *s);    /* -1 when unknown */
enum { CELL_STR, CELL_INT, CELL_NUM, CELL_NULL, CELL_JSON };
struct cell { int type; char *s; };
struct table {
    size_t ncols, nrows, cap;   /* cap: cells of the row being filled */
    int indent;                 /* text: spaces before each line */
    size_t width;               /* text: lines cut to this many columns (0: whole) */
    const char **cols;
    struct cell *cells;         /* nrows * ncols */
};
void table_init(struct table *t, size_t ncols, const char *const *cols);
void table_str(struct table *t, const char *s);    /* append cells row-major */
void table_strn(struct table *t, const char *s, size_t n);
void table_int(struct table *t, int64_t v);
/* v of a counter: with human, sizes and times in units (fmt_human, right
 * aligned like numbers); counts, and everything without human, whole. */
void table_counter(struct table *t, int counter, int64_t v, int human);
void table_num(struct table *t, double v, int decimals);
void table_double(struct table *t, double v);  /* shortest form; NaN/inf: null */
void table_null(struct table *t);
void table_json(struct table *t, const char *json);  /* raw JSON value */
/* Text: aligned columns, numbers right-aligned, last column unpadded.
 * CSV: RFC 4180. JSON: array of objects; a column "a.b" nests b in a. */
void table_print(const struct table *t, int format, FILE *f);
void table_free(struct table *t);
/* A JSON writer: values in order; separators, nesting and escaping are its
 * job. json_break(w, indent) puts the next element, or the closing bracket,
 * on a new line indented by indent spaces. */
struct json {
    FILE *f;
    int depth, after_key, brk;      /* brk: pending line break's indent, -1 none */
    unsigned char first[32];        /* per level: no element written yet */
};
void json_init(struct json *w, FILE *f);
void json_open(struct json *w, char bracket);      /* '{' or '[' */
void json_close(struct json *w, char bracket);
void json_key(struct json *w, const char *key);
void json_int(struct json *w, int64_t v);
void json_fixed(struct json *w, double v, int decimals);
void json_str(struct json *w, const char *s);
void json_strn(struct json *w, const char *s, size_t n);
void json_null(struct json *w);
void json_raw(struct json *w, const char *json);   /* a value already in JSON */
void json_break(struct json *w, int indent);
/* The table as one JSON value: an array of objects, one a row. */
void table_json_value(const struct table *t, struct json *w);
/* Ends an object written to w->f with "key": the table, then a newline. */
void json_rows_last(struct json *w, const char *key, const struct table *t);
void json_string(FILE *f, const char *s, size_t n);
/* Length of the valid UTF-8 sequence at s (n bytes left), or 0. */
size_t utf8_seq_len(const char *s, size_t n);
void json_string_sb(struct strbuf *sb, const char *s, size_t n);
/* Text output (a terminal's): control characters (C0, DEL and C1) shown
 * as spaces, invalid UTF-8 as U+FFFD; to f, or appended to sb. */
void text_clean(FILE *f, const char *s, size_t n);
void text_clean_sb(struct strbuf *sb, const char *s, size_t n);
/* printf to f, the whole text cleaned as text_clean does (error messages:
 * one line, whatever the strings in them). */
void text_vprintf(FILE *f, const char *fmt, va_list ap);
void text_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as XML (SVG, HTML) text or double-quoted attribute value: markup
 * escaped, control characters (C0, DEL, C1) as spaces, invalid UTF-8, U+FFFE and U+FFFF
 * as U+FFFD; at most max_chars characters (>= 3; longer text is cut and
 * ends with ".."), appended to sb. The one escaper of every SVG and HTML
 * mpquery writes. */
void xml_escape(struct strbuf *sb, const char *s, size_t n, size_t max_chars);
/* All of s, escaped so, to f. */
void xml_write(FILE *f, const char *s);
/* Characters of s: UTF-8 sequences, an invalid byte counting one. */
size_t utf8_chars(const char *s, size_t n);
/* One line of text: cleaned, cut to width columns (code points; 0: whole)
 * ending in '…' when longer, then a newline. */
void text_line(FILE *f, const char *s, size_t n, size_t width);
void csv_field(FILE *f, const char *s, size_t n);

/* ---------------------------------------------------------------- pager.c */
/* The width of the terminal stdout is (COLUMNS when set, else the
 * terminal's own, else 80), or 0 when stdout is not a terminal; the
 * first call's answer, so ask before pager_start. */
size_t terminal_width(void);
/* When stdout is a terminal: stdout goes through $PAGER (less -SFRX when
 * unset; none when empty or cat) until the program exits, which waits
 * for the pager. */
void pager_start(void);

/* ---------------------------------------------------------------- chquery.c */
/* --server URL: the runs of a ClickHouse store (mpquery push) as one
 * profile, for top, fold, diff and info. */
struct server_opts {
    const char *url;                    /* NULL: read files */
    const char *where, *exe, *host, *since;     /* which runs (both sides of a diff) */
    const char *side_where[2];          /* diff: --a-where, --b-where */
};
/* The selected runs of the store: their processes, threads, snapshots and
 * totals as they are, and the counters of every distinct stack summed over
 * them at each process's last snapshot (peak: its peak), hung on one
 * process's snapshot and thread; every run selected by default. side: 0
 * or 1 in a diff, else -1. 0, or the exit code with one line in err. */
int server_load(const struct server_opts *o, int side, int peak, struct profile **out, char *err, size_t errlen);

/* ---------------------------------------------------------------- options.c */
/* Ids of the options several commands share, parsed into struct common. */
enum {
    OPT_RUN = 1, OPT_PID, OPT_THREAD, OPT_SNAPSHOT, OPT_RULES, OPT_NO_DEFAULT_RULES,
    OPT_FORMAT, OPT_BY, OPT_LIMIT, OPT_NO_INLINE, OPT_LINES, OPT_MODULE, OPT_DEPTH,
    OPT_FILTER, OPT_EXCLUDE, OPT_SUPPRESSIONS, OPT_PER_THREAD, OPT_GROUP_THREADS,
    OPT_FULL_NAMES, OPT_SIGNATURES, OPT_NO_SIGNATURES, OPT_BYTES, OPT_NO_PAGER,
    OPT_SERVER, OPT_WHERE, OPT_EXE, OPT_HOST, OPT_SINCE,
};
/* The values of the shared options. */
struct common {
    const char *cmd;
    struct select_opts sel;
    const char *rules_files[64]; size_t nrules_files;
    int no_default_rules;
    int format, by, depth, limit;
    struct view_opts view;
    const char *filters[64], *excludes[64];
    const char *suppression_files[64]; size_t nsuppression_files;
    int per_thread;                         /* --per-thread (implied by --group-threads) */
    /* diff: each side's selection (side_option, sides_apply) */
    struct { int id; const char *arg; } side_args[2][16];
    size_t nside_args[2];
    struct select_opts side_sel[2];
    int sides;                              /* the profiles use side_sel[i], not sel */
    int operands_a;                         /* cmd_opts.dashdash: the operands before "--" (the
                                               first ones from optind), or -1 without "--" */
    int peak_rows;                          /* load peak snapshots' rows whatever the selection */
    struct server_opts server;              /* --server URL and its run selection (chquery.c) */
    const char *thread_groups[64]; size_t nthread_groups;
    /* text for people (commands with cmd_opts.readable), set from the
     * options below and the format once they are parsed */
    int full_names, signatures;             /* --full-names; --signatures 1, --no-signatures 0, else -1 */
    int bytes, no_pager;                    /* --bytes, --no-pager */
    int human;                              /* text: sizes and times in units (fmt_human) */
    size_t width;                           /* text on a terminal: its width, else 0 (whole lines) */
    int pager;                              /* page the output when stdout is a terminal (pager_start) */
};

/* One entry of a command's option table. The table yields both the
 * getopt_long array and the option lines of --help, as git's
 * parse-options tables do. An entry is a shared option (id), a flag or a
 * value of the command's own (flag, str), or else goes to the command's
 * `own` callback. */
struct opt {
    const char *name;       /* long name without "--"; NULL: short only; NULL
                               and no letter: the end of the table */
    char letter;            /* short form (-n), or 0 */
    int id;                 /* a shared option: OPT_* */
    const char *arg;        /* the value's name in --help; NULL: takes no value */
    const char *help;       /* its text in --help, lines after the first indented
                               by the writer; NULL: listed on the next entry's line */
    int *flag;              /* a flag of the command: *flag = value */
    int value;
    char **str;             /* a value of the command: *str = the text */
};
/* The shared options as entries, defined once; the help text is the
 * command's where its wording differs. OPTIONS_* are groups. */
#define OPTION_BY(h)        { .name = "by", .id = OPT_BY, .arg = "COUNTER", .help = (h) }
#define OPTIONS_FILTER \
    { .name = "filter", .id = OPT_FILTER, .arg = "RE", \
      .help = "keep only stacks with a frame matching RE (POSIX ERE, on\n" \
              "the names after rules; repeatable: any of them)" }, \
    { .name = "exclude", .id = OPT_EXCLUDE, .arg = "RE", \
      .help = "drop stacks with a frame matching RE (repeatable)" }
#define OPTION_LIMIT        { .letter = 'n', .id = OPT_LIMIT, .arg = "N", \
                              .help = "show N rows (default 20, 0 = all)" }
#define OPTION_DEPTH        { .name = "depth", .id = OPT_DEPTH, .arg = "K", \
                              .help = "frames shown per stack, leaf first (default 5, 0 = all)" }
#define OPTION_FORMAT(h)    { .name = "format", .id = OPT_FORMAT, .arg = "F", .help = (h) }
/* --server and the selection of its runs (top, fold, diff, info) */
#define OPTIONS_SERVER \
    { .name = "server", .id = OPT_SERVER, .arg = "URL", \
      .help = "read the runs of a ClickHouse store (mpquery push) at\n" \
              "URL (http://[user:password@]host[:port]/[?database=D])\n" \
              "instead of files: all its runs, or those selected below" }, \
    { .name = "where", .id = OPT_WHERE, .arg = "SQL", \
      .help = "runs where this ClickHouse expression over mp_runs'\n" \
              "columns holds (token, start_time, pushed, source, host,\n" \
              "exe, cmdline, processes); read-only" }, \
    { .name = "exe", .id = OPT_EXE, .arg = "NAME", \
      .help = "runs of this executable (its path or basename)" }, \
    { .name = "host", .id = OPT_HOST, .arg = "NAME", .help = "runs on this host" }, \
    { .name = "since", .id = OPT_SINCE, .arg = "TIME", \
      .help = "runs started at TIME or later: seconds since the epoch,\n" \
              "YYYY-MM-DD[ HH:MM[:SS]] (local time) or an age (30m, 2h, 7d)" }
#define OPTION_RUN(h)       { .name = "run", .id = OPT_RUN, .arg = "N|latest|all", .help = (h) }
#define OPTION_PID(h)       { .name = "pid", .id = OPT_PID, .arg = "PID", .help = (h) }
#define OPTION_THREAD(h)    { .name = "thread", .id = OPT_THREAD, .arg = "TID|RE", .help = (h) }
#define OPTION_SNAPSHOT(h)  { .name = "snapshot", .id = OPT_SNAPSHOT, .arg = "S", .help = (h) }
#define OPTION_LINES(h)     { .name = "lines", .id = OPT_LINES, .help = (h) }
#define OPTION_NO_INLINE(h) { .name = "no-inline", .id = OPT_NO_INLINE, .help = (h) }
#define OPTION_MODULE(h)    { .name = "module", .id = OPT_MODULE, .help = (h) }
#define HELP_RUN            "which run: N (its id, as info lists it), latest (default:\n" \
                            "each file's latest run) or all"
#define HELP_PID            "only this process"
/* selection (select.c): on one line, or each option with its own help */
#define OPTIONS_SELECT(h)   OPTION_RUN(NULL), OPTION_PID(NULL), OPTION_THREAD(NULL), OPTION_SNAPSHOT(h)
#define OPTIONS_SELECT_EACH \
    OPTION_RUN(HELP_RUN), OPTION_PID(HELP_PID), \
    OPTION_THREAD("only allocations made by this thread (a tid), or by the\n" \
                  "threads whose whole name matches RE (POSIX ERE)"), \
    OPTION_SNAPSHOT("last (default), peak (each process when its live bytes\n" \
                    "were highest), N (the last snapshot with seq <= N in\n" \
                    "each process), id:N (that snapshot's process only) or\n" \
                    "label:TEXT (each process's last snapshot with that label)")
/* frame display (view.c) */
#define OPTIONS_DISPLAY(h)  OPTION_LINES(NULL), OPTION_NO_INLINE(NULL), OPTION_MODULE(h)
/* --functions, --self, --inclusive (top, diff): functions instead of
 * stacks (*functions = 1), with self or inclusive values (*inclusive) */
#define OPTIONS_FUNCTIONS(functions, inclusive, h_functions, h_self, h_inclusive) \
    { .name = "functions", .flag = (functions), .value = 1, .help = (h_functions) }, \
    { .name = "self", .flag = (inclusive), .value = 0, .help = (h_self) }, \
    { .name = "inclusive", .flag = (inclusive), .value = 1, .help = (h_inclusive) }
/* --per-thread, --group-threads (tree, top) */
#define OPTIONS_PER_THREAD(h) \
    { .name = "per-thread", .id = OPT_PER_THREAD, .help = (h) }, \
    { .name = "group-threads", .id = OPT_GROUP_THREADS, .arg = "RE", \
      .help = "the threads whose whole name matches RE as one group,\n" \
              "named RE (repeatable; implies --per-thread)" }
/* text for people (commands with cmd_opts.readable) */
#define OPTIONS_READABLE \
    { .name = "full-names", .id = OPT_FULL_NAMES, \
      .help = "text: C++ names whole (the rules' collapse-templates\n" \
              "makes template argument lists <\xe2\x80\xa6>)" }, \
    { .name = "signatures", .id = OPT_SIGNATURES, \
      .help = "functions with their parameter lists (default: csv, json)" }, \
    { .name = "no-signatures", .id = OPT_NO_SIGNATURES, \
      .help = "functions without their parameter lists (default: text)" }, \
    { .name = "bytes", .id = OPT_BYTES, \
      .help = "text: sizes in bytes, times in ns (default: 1.21 MiB,\n" \
              "3.40 ms; csv and json always have raw numbers)" }, \
    { .name = "no-pager", .id = OPT_NO_PAGER, \
      .help = "on a terminal, write directly instead of through $PAGER\n" \
              "(default: less -SFRX)" }
/* rules (rules.c) */
#define OPTIONS_RULES(h) \
    { .name = "rules", .id = OPT_RULES, .arg = "FILE", .help = (h) }, \
    { .name = "no-default-rules", .id = OPT_NO_DEFAULT_RULES, .help = "do not apply filters/default.rules" }

/* A command's options and its --help around them. */
struct cmd_opts {
    const char *cmd;            /* the command, for messages */
    const char *usage, *more;   /* --help: the text before and after the options */
    const struct opt *opts;
    int operands;               /* how many operands it takes; 0: one or more */
    const char *missing;        /* the usage error when operands are missing */
    int in_order;               /* options end at the first operand (record) */
    int dashdash;               /* "--" splits the operands in two lists (diff: c->operands_a) */
    int readable;               /* takes OPTIONS_READABLE: set c->view's names, c->human,
                                   c->width and c->pager from them and the format */
    void (*help)(void);         /* writes --help instead (record) */
    int (*own)(void *ctx, const struct opt *o, const char *arg);  /* 0 or exit code */
    void *ctx;
};
enum { PARSE_OK = -1 };
/* Parses argv against the table: shared options into c (set to their
 * defaults first), the command's own as their entries say, then checks
 * the number of operands. Returns PARSE_OK with optind at the first
 * operand, or the exit code: 0 after --help, 2 for a usage error
 * (reported). */
int parse_options(struct common *c, const struct cmd_opts *d, int argc, char **argv);
/* What --help prints: the text, a man page section, or the words of the
 * completion script (main.c's --man, --bash-completion). */
enum { HELP_TEXT, HELP_MAN, HELP_WORDS };
extern int help_format;
/* Usage error "mpquery: CMD: what (see mpquery CMD --help)"; returns 2. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------------- common.c */
/* Loads path (errors reported: "mpquery: PATH: why"); peak_rows as
 * profile_load's; 0 or the exit code. */
int load_profile(const char *path, int peak_rows, struct profile **p);
/* The database files of one profile: one is loaded as it is, several are
 * merged into a temporary database (merge_temporary) that is loaded, its
 * runs' files in p->sources, each file's latest run selected by default
 * (p->latest_runs), p->path "FIRST (and N more)" for messages. */
struct dbfiles { char *const *paths; size_t n; };
struct dbfiles dbfiles_of(int argc, char **argv, int first);     /* argv[first..argc) */
int load_profiles(const struct dbfiles *f, int peak_rows, struct profile **p);
/* The profile a command reads: side's runs of the store with --server
 * (side -1: no diff), else the files (load_profiles). */
int load_selected(const struct common *c, const struct dbfiles *f, int side, int peak_rows, struct profile **p);
/* Whether a selection may name a peak snapshot (peak, N, id:N): its
 * profile must be loaded with the peak snapshots' rows. */
int select_wants_peak(const struct select_opts *o);
/* Applies the selection, reporting errors; 0 or the exit code. */
int select_or_report(const struct common *c, const struct profile *p, struct selection *s);
/* diff's per-side selection options: recorded while parsing, applied after. */
int side_option(struct common *c, int side, int id, const char *arg);
void sides_apply(struct common *c);
/* Builds the rule set from default.rules (unless disabled) and --rules. */
int load_rules(struct common *c, struct ruleset **out);
/* A profile loaded, selected and mapped onto a display tree. */
struct query { struct profile *p; struct selection sel; uint32_t *stack_node; };
/* What the filters (--filter, --exclude, suppressions) left out of one
 * profile: the paths with a value and their counters summed. */
struct left_out { int64_t stacks; counters c; };
/* The selected stacks cut at MP_DEPTH (their root is the [truncated]
 * frame) and their calls; depth: the largest MP_DEPTH of the selected
 * processes that recorded any. */
struct truncated { int64_t stacks, calls, depth; };
/* What top, fold, diff and leaks share: the rules loaded, each profile
 * queried into ONE display tree (diff matches paths through it), per
 * profile its counters summed per display node, the paths the filters
 * leave out taken out of them. */
struct listing {
    const struct common *c;
    struct dtree t;
    struct query q[2];
    counters *own[2];           /* per node of t, per profile; 0 where left out */
    size_t n;                   /* profiles */
    size_t nfilters;            /* --filter, --exclude and suppression rules */
    struct left_out left[2];    /* per profile */
    struct truncated trunc[2];  /* per profile */
};
/* The orders of listings for select_top (top, leaks, the report): nodes
 * of t with their counters c (per node), rep (per node: the stack shown,
 * node_stacks) and the counter sorted by. Larger values first; ties by the
 * lower stack id (order_stack), by name (order_function: t's labels);
 * order_leak: more bytes live, then more blocks, then the stack id. */
struct order_ctx { const counters *c; const struct profile *p; const uint32_t *rep; const struct dtree *t; int by; };
int order_stack(uint32_t a, uint32_t b, void *ctx);
int order_function(uint32_t a, uint32_t b, void *ctx);
int order_leak(uint32_t a, uint32_t b, void *ctx);
/* Runs that for profiles[0..n) (n <= 2), then print; 0 or the exit code. */
int listing_run(struct common *c, const struct dbfiles *profiles, size_t n,
                void (*print)(struct listing *l, void *ctx), void *ctx);
/* Prints a table of top or diff (through the pager with c->pager): with
 * filters, JSON is an object {"ignored": ..., "rows": [table]}, and text
 * (stdout) or csv (stderr) ends with the line of listing_ignored_line when
 * they left anything out. */
void listing_print(const struct listing *l, const struct table *tab);
/* "ignored M stacks (N calls, B bytes) with F filters" (diff: "... in a,
 * ... in b with F filters"), or nothing when nothing was left out; then
 * the truncated stacks' line (truncated_line). */
void listing_ignored_line(const struct listing *l, FILE *f);
/* The stacks of selection s deeper than MP_DEPTH (leaks: its live_only
 * selection, the leaking ones). */
void count_truncated(const struct profile *p, const struct selection *s, struct truncated *out);
/* "N stacks (C calls) were deeper than MP_DEPTH=D: inclusive figures of
 * outer functions are low; record with MP_DEPTH=4D" (side: " in a"...),
 * or nothing when none was. */
void truncated_line(const struct truncated *t, const char *side, FILE *f);
/* Per display node: rep, the stack shown for it (the largest by `by`, ties
 * the lowest id; NONE: none with a value), and nmerged, the stacks with a
 * value merged into it. Both arrays sized t->n, filled here. */
void node_stacks(const struct query *q, const struct dtree *t, int by, uint32_t *rep, uint32_t *nmerged);
/* A row's stack: text "ID" or "ID+N" (N more merged); csv and json the
 * two cells stack and stacks. */
void table_stack(struct table *tab, int format, int64_t id, uint32_t nmerged);
/* 0, or 2 (reported: "OUT: the output (-o) is the input IN: refusing to
 * overwrite it") when out (-o; NULL: stdout) is one of the files the
 * command reads: the databases of files[0..n), the rules and suppressions
 * files. */
int check_output(const struct common *c, const char *out, const struct dbfiles *files, size_t n);
/* Locates the filters directory next to the executable (malloc'd) or NULL. */
char *filters_dir(void);

/* ---------------------------------------------------------------- record_db.c */
/* Before record runs the program: the profile can be written there (an
 * existing file must be a mallocprof profile); 0 or the exit code, reported. */
int record_check_out(const char *path);
/* Processes and snapshots of the run with this MP_RUN token (0 without a
 * file); 0, or the exit code with the reason in err. */
int record_count(const char *path, const char *token, struct run_count *c, char *err, size_t errlen);
/* After the run: one line on stderr, what the run wrote beyond `before`, or
 * that nothing was written. */
void record_report(const char *path, const char *token, const struct run_count *before);

/* ---------------------------------------------------------------- merge.c */
/* What a merge wrote: per input, its runs (db_file: ids in the output),
 * and the output's runs (those in more than one input: runs_shared),
 * processes, stacks and sample rows. */
struct merge_stats {
    struct db_file *files; size_t nfiles;
    int64_t runs, runs_shared, processes, stacks, samples;
};
/* Writes the profile databases inputs[0..n) into out, an empty file, as
 * one database of the current format that answers every query as the
 * inputs taken together; without peak_rows, every query but those of a
 * peak snapshot's rows (profile_load's peak_rows: the sample rows of peak
 * snapshots are left out). 0, or the exit code with "FILE: why" in err. */
int merge_build(char *const *inputs, size_t n, const char *out, int peak_rows, struct merge_stats *st, char *err,
                size_t errlen);
void merge_stats_free(struct merge_stats *st);
/* merge_build into a new temporary file under $TMPDIR (or /tmp), removed
 * when mpquery exits; *path is its name. */
int merge_temporary(char *const *inputs, size_t n, int peak_rows, const char **path, struct merge_stats *st,
                    char *err, size_t errlen);
/* ---------------------------------------------------------------- tempfile.c */
/* A new empty file named prefix + 6 random characters, removed when
 * mpquery exits or a signal ends it, unless forgotten before; 0, or the
 * exit code with the reason in err. */
int temp_create(const char *prefix, const char **path, char *err, size_t errlen);
/* Stops removing path at exit (renamed), after removing it with remove. */
void temp_forget(const char *path, int remove);
/* out is the same file as input (device and inode: through a symbolic
 * or hard link too); common.c's check_output says so. */
int output_is(const char *out, const char *input);
/* An output file: -o PATH, written to a temporary file in its directory
 * (next to the file a symbolic link names) that output_close renames over
 * it once complete and on disk, with the old file's permissions; a path
 * that is not a regular file (/dev/stdout, a pipe) is written directly;
 * no path: stdout. */
struct outfile {
    const char *path;           /* as given, for messages; NULL: stdout */
    char *target;               /* the file replaced */
    const char *tmp;            /* the temporary file; NULL: target written directly */
    FILE *f;                    /* what to write to (OUTPUT_FILE): a stream on fd */
    int fd, err;                /* the file written; the first write error's errno */
    unsigned mode;              /* the permissions target gets */
};
enum { OUTPUT_FILE, OUTPUT_DB };
/* Opens o for path: OUTPUT_FILE opens o->f (a stream that refers to o:
 * o stays where it is until output_close); OUTPUT_DB (a database the
 * caller writes by the name o->tmp) takes regular files only. 0, or the
 * exit code (reported). */
int output_open(struct outfile *o, const char *path, int how);
/* Ends o: when rc is 0, flushed, synced and renamed over the target (0,
 * or 1 reported: "PATH: write error: why"); else the temporary file is
 * removed and the old file stays as it was. Returns the exit code. */
int output_close(struct outfile *o, int rc);

/* ---------------------------------------------------------------- commands */
int cmd_record(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_fold(int argc, char **argv);
/* fold's lines to out (a FILE *), for fold and export --format folded. */
void fold_print(struct listing *l, void *out);
int cmd_diff(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_leaks(int argc, char **argv);
int cmd_hist(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_push(int argc, char **argv);

/* ---------------------------------------------------------------- units.c */
/* v of a counter for people, into buf (returned): bytes in B, KiB, MiB...
 * (powers of 1024), time in ns, µs, ms, s, counts as 999, 1.23k, 45.6M;
 * at most three significant digits once scaled, exact below the first
 * step (1000 B, 999); negative values with '-'. */
char *fmt_human(int counter, int64_t v, char *buf, size_t n);
/* The counter is a size or a time (fmt_human gives it a unit). */
int counter_has_unit(int counter);

#endif
