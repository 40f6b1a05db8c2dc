/* What mpquery's files share: the in-memory profile (profile.c), the
 * selection of samples (select.c), the rules (rules.c), the display tree of
 * rewritten paths (view.c), output writers (output.c), common options
 * (common.c) and small containers (util.c).
 *
 * Invariant: after profile_load every cross reference is a dense array index
 * (never a database id), checked once at load time, so commands index arrays
 * without further validation. Database ids are kept only for printing. */
#ifndef MPQUERY_H
#define MPQUERY_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE         /* qsort_r, memmem, REG_STARTEND: every .c includes this first */
#endif

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#define MPQ_VERSION "1.0"
#define SCHEMA_VERSION 1
#define NONE UINT32_MAX            /* "no index" in uint32_t index arrays */
#define NAME_MAX_BYTES 65536       /* longer names are cut on load (with "...") */

/* Exit codes (STYLE.md): 2 bad input or usage, 1 failed operation. */
enum { EXIT_BAD_INPUT = 2, EXIT_FAILED = 1 };

/* ---------------------------------------------------------------- util.c */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
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
enum { NCALLS, MEMTOT, NFREE, MEMLIVE, MAXLIVE, NCOUNTERS };
typedef struct { int64_t v[NCOUNTERS]; } counters;
extern const char *const counter_name[NCOUNTERS];
int counter_parse(const char *name);     /* -1 when unknown */
static inline void counters_add(counters *a, const counters *b)
{
    for (int i = 0; i < NCOUNTERS; i++) a->v[i] += b->v[i];
}
static inline int counters_zero(const counters *a)
{
    for (int i = 0; i < NCOUNTERS; i++) if (a->v[i]) return 0;
    return 1;
}

/* ---------------------------------------------------------------- profile.c */
struct run { int64_t id; const char *token; double start_time; };
struct process {
    int64_t id, pid, ppid, run_id;
    uint32_t run;                       /* index into profile.runs */
    const char *exe, *cmdline, *host, *settings;
    double start_time, end_time;        /* end_time < 0: none yet */
    uint32_t first_snapshot, nsnapshots; /* range in profile.snapshots (by seq) */
};
struct thread { int64_t id, seq, tid; uint32_t process; const char *name; };
struct module { int64_t id; const char *path, *build_id, *base; int special; };
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
};
struct sample { uint32_t snapshot, stack, thread; counters c; };
struct total {
    uint32_t snapshot, thread;          /* thread NONE = whole process */
    counters c;
    int64_t ncalls_nostack, memtot_nostack, nfree_unknown;
};

struct profile {
    const char *path;
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
};
/* Loads the whole database (one pass per table). On failure returns the
 * exit code and writes the reason (without the path) into err. */
int profile_load(const char *path, struct profile **out, char *err, size_t errlen);
void profile_free(struct profile *p);
/* Index of the stack with this database id, or NONE. */
uint32_t profile_stack_index(const struct profile *p, int64_t id);
/* Opens a database (read-only unless writable: symbolize) and checks that
 * it is a version-1 profile; shared by profile_load, sql and symbolize. */
struct sqlite3;
int profile_open_db(const char *path, struct sqlite3 **db, int writable, char *err, size_t errlen);

/* ---------------------------------------------------------------- select.c */
enum { SNAP_LAST, SNAP_SEQ, SNAP_ID, SNAP_LABEL };
struct select_opts {
    int run_all, has_run; int64_t run_id;
    int has_pid; int64_t pid;
    int has_tid; int64_t tid;
    int snap_kind; int64_t snap_value; const char *snap_label;
};
struct selection {
    uint32_t run;               /* run index, NONE = all runs */
    uint32_t *proc_snapshot;    /* per process: selected snapshot index, NONE = not selected */
    size_t nselected;           /* selected processes */
    counters *stack_c;          /* per stack: counters summed over threads/processes */
};
int select_parse_snapshot(const char *arg, struct select_opts *o);
int select_apply(const struct profile *p, const struct select_opts *o,
                 struct selection *s, char *err, size_t errlen);
void selection_free(struct selection *s);
/* The process totals row (thread = whole process) of a snapshot, or NULL. */
const struct total *snapshot_total(const struct profile *p, uint32_t snapshot);

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
/* Runs the rules in order on name; the rewritten name goes to out, the
 * stack flags (RULE_*) are returned. */
unsigned rules_apply(const struct ruleset *rs, const char *name, size_t len,
                     struct strbuf *out);
void rules_free(struct ruleset *rs);

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
};
struct view_opts {
    const struct ruleset *rules;
    int no_inline, lines, module;
    const char **filter; size_t nfilter;    /* fold --filter / --exclude */
    const char **exclude; size_t nexclude;
};
void dtree_init(struct dtree *t);
void dtree_free(struct dtree *t);
/* Maps every stack of p to a display node (out: per stack index). Returns
 * 0, or 2 with err set (bad --filter regex). */
int view_build(const struct profile *p, const struct view_opts *o,
               struct dtree *t, uint32_t *stack_node, char *err, size_t errlen);
/* Adds per-stack counters into per-node counters (node_c sized t->n). */
void view_accumulate(const struct profile *p, const struct selection *s,
                     const uint32_t *stack_node, counters *node_c);
/* Per-node subtree sums (sub sized t->n). */
void dtree_subtotals(const struct dtree *t, const counters *own, counters *sub);
/* Self (leaf) and inclusive (stack counted once per function) per label. */
void dtree_functions(struct dtree *t, const counters *own, counters *self, counters *incl);
void dtree_children(struct dtree *t, int sorted);
/* Leaf-first labels of a node joined by sep, at most depth frames
 * (0 = all), " < ..." style ellipsis when cut. */
void dtree_short_path(const struct dtree *t, uint32_t node, size_t depth,
                      const char *sep, struct strbuf *out);
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
    const char **cols;
    struct cell *cells;         /* nrows * ncols */
};
void table_init(struct table *t, size_t ncols, const char *const *cols);
void table_str(struct table *t, const char *s);    /* append cells row-major */
void table_strn(struct table *t, const char *s, size_t n);
void table_int(struct table *t, int64_t v);
void table_num(struct table *t, double v, int decimals);
void table_double(struct table *t, double v);  /* shortest form; NaN/inf: null */
void table_null(struct table *t);
void table_json(struct table *t, const char *json);  /* raw JSON value */
/* Text: aligned columns, numbers right-aligned, last column unpadded.
 * CSV: RFC 4180. JSON: array of objects; a column "a.b" nests b in a. */
void table_print(const struct table *t, int format, FILE *f);
void table_free(struct table *t);
void json_string(FILE *f, const char *s, size_t n);
void json_string_sb(struct strbuf *sb, const char *s, size_t n);
/* Text output: control characters shown as spaces. */
void text_clean(FILE *f, const char *s, size_t n);
void csv_field(FILE *f, const char *s, size_t n);

/* ---------------------------------------------------------------- common.c */
/* Options shared by the listing commands (long-only values >= 256). */
enum {
    OPT_RUN = 256, OPT_PID, OPT_THREAD, OPT_SNAPSHOT, OPT_RULES, OPT_NO_DEFAULT_RULES,
    OPT_FORMAT, OPT_BY, OPT_NO_INLINE, OPT_LINES, OPT_MODULE, OPT_DEPTH,
    OPT_FUNCTIONS, OPT_SELF, OPT_INCLUSIVE, OPT_FILTER, OPT_EXCLUDE, OPT_FOLD,
    OPT_HELP, OPT_THRESHOLD, OPT_DEBUGINFO, OPT_RAW,
};
struct common {
    const char *cmd;
    struct select_opts sel;
    const char *rules_files[64]; size_t nrules_files;
    int no_default_rules;
    int format, by, depth, limit;
    struct view_opts view;
    const char *filters[64], *excludes[64];
};
void common_init(struct common *c, const char *cmd);
/* Handles an option shared by several commands: 1 handled, 0 not shared,
 * or -2 bad value (message printed). */
int common_option(struct common *c, int opt, const char *arg);
/* Usage error "mpquery: CMD: what (see mpquery CMD --help)"; returns 2. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports what getopt_long returned for opt (':' missing value, '?' or an
 * option the command does not take); returns 2. */
int bad_option(const char *cmd, int opt, char **argv);
/* Loads a profile and reports "mpquery: PATH: why"; 0 or the exit code. */
int load_profile(const char *path, struct profile **p);
/* Applies the selection, reporting errors; 0 or the exit code. */
int select_or_report(const struct common *c, const struct profile *p, struct selection *s);
/* Builds the rule set from default.rules (unless disabled) and --rules. */
int load_rules(struct common *c, struct ruleset **out);
/* A profile loaded, selected and mapped onto a display tree. */
struct query { struct profile *p; struct selection sel; uint32_t *stack_node; };
int query_run(const struct common *c, const char *path, struct dtree *t, struct query *q);
void query_free(struct query *q);
/* Locates the filters directory next to the executable (malloc'd) or NULL. */
char *filters_dir(void);

/* ---------------------------------------------------------------- record_db.c */
/* Before record runs the program: the profile can be written there (an
 * existing file must be a mallocprof profile); 0 or the exit code, reported. */
int record_check_out(const char *path);
struct run_count { int64_t processes, snapshots; };
/* Processes and snapshots of the run with this MP_RUN token (0 without a
 * file); 0, or the exit code with the reason in err. */
int record_count(const char *path, const char *token, struct run_count *c, char *err, size_t errlen);
/* After the run: one line on stderr, what the run wrote beyond `before`, or
 * that nothing was written. */
void record_report(const char *path, const char *token, const struct run_count *before);

/* ---------------------------------------------------------------- commands */
int cmd_record(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_fold(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_show(int argc, char **argv);

#endif
