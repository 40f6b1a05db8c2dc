/* The mechanism of mpquery merge and of several databases read as one:
 * profile databases into one new database of the current format that
 * answers every query as the inputs taken together (merge_build). Each
 * input is read once, in one read transaction, by profile.c's loader (so
 * every format version reads with its defaults, and untrusted files are
 * checked as everywhere), plus its hist and stack_hist rows; ids are mapped
 * with arrays per input and with tables by content across inputs, and
 * rows are written with prepared statements in ONE transaction of an
 * output file the caller created empty. What must stay true:
 *  - dictionaries are shared by content, never by id: module (path,
 *    build_id), function (name), file (path), frame (module, offset,
 *    inline_depth), a [tag] frame by its name (offset tag_offset(name), as
 *    the recorder now writes it; older files had a per-process index
 *    there), stack (parent, frame). Two stacks of one input that become
 *    the same content stay two stacks (the input's k-th stack of a
 *    content is the k-th stack of it), so that rows never collide and a
 *    merge of a merge maps alike;
 *  - a process is (run token, pid, start time), stored once: the copy with
 *    the most non-peak snapshots (ties: the first input), chosen by a first
 *    pass over the inputs' process tables;
 *  - a process's snapshots get ids in seq order: the chain rule of sample
 *    and stack_hist rows compares snapshot ids within a process;
 *  - a run is its token, numbered by start time (then token), so that the
 *    largest id is the latest started. */
#include "mpquery.h"
#include "hash.h"           /* tag_offset: a [tag] frame's offset, as the recorder writes it */
#include "merge.h"
#include "tempfile.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char schema_sql[] =
#include "schema.h"
;

enum { T_RUN, T_PROCESS, T_THREAD, T_MODULE, T_FUNCTION, T_FILE, T_FRAME, T_STACK, T_SNAPSHOT, T_SAMPLE,
       T_TOTALS, T_HIST, T_STACK_HIST, NTABLES };
static const struct { const char *name, *cols; int ncols; } tables[NTABLES] = {
    { "run", "id, token, start_time", 3 },
    { "process", "id, run, pid, ppid, exe, cmdline, host, start_time, end_time, settings, ended", 11 },
    { "thread", "id, process, seq, tid, name", 5 },
    { "module", "id, path, build_id", 3 },
    { "function", "id, name", 2 },
    { "file", "id, path", 2 },
    { "frame", "id, module, offset, inline_depth, function, file, line", 7 },
    { "stack", "id, parent, frame", 3 },
    { "snapshot", "id, process, seq, time, reason, label, profiler_memory", 7 },
    { "sample", "snapshot, stack, thread, ncalls, memtot, nfree, memlive, maxlive, ntemp, time", 10 },
    { "totals", "snapshot, thread, ncalls, memtot, nfree, memlive, maxlive, ncalls_nostack, memtot_nostack,"
                " nfree_unknown", 10 },
    { "hist", "snapshot, lo, ncalls, memtot, nlive, memlive", 6 },
    { "stack_hist", "snapshot, stack, thread, lo, ncalls, memtot, nlive, memlive", 8 },
};
#define MAX_COLS 11

/* A value of a row to insert: an integer, a real, text, or NULL. */
enum { V_INT, V_REAL, V_TEXT, V_NULL };
struct val { int type; int64_t i; double d; const char *s; };
#define I(x) ((struct val){ .type = V_INT, .i = (x) })
#define R(x) ((struct val){ .type = V_REAL, .d = (x) })
#define S(x) ((struct val){ .type = V_TEXT, .s = (x) })
#define NUL ((struct val){ .type = V_NULL })
#define PUT(m, table, ...) \
    put(m, table, (struct val[]){ __VA_ARGS__ }, sizeof (struct val[]){ __VA_ARGS__ } / sizeof (struct val))

/* Rows are inserted BATCH_ROWS at a time by one statement (a third less
 * time than one row a statement); the rest of a table's rows one by one
 * (batch_flush), before the strings they point to are freed. */
#define BATCH_ROWS 64
struct batch { sqlite3_stmt *many, *one; int n; struct val v[BATCH_ROWS * MAX_COLS]; };

/* The copy of a process that is kept: its input and id there. */
struct copy { int input; int64_t id, nsnapshots; };
struct out_run { const char *token; double start_time; int last_input, ninputs; int64_t id; };
struct out_process { struct process pr; uint32_t run; };
struct out_frame { uint32_t module, function, file; int32_t inline_depth, line; int64_t offset; };

struct merge {
    sqlite3 *out;
    const char *out_path;
    struct batch *ins;                  /* per table */
    int rc;                             /* the first error (err says it): later writes do nothing */
    char *err; size_t errlen;
    char *const *inputs; size_t ninputs, cur;
    struct strtab proc_keys;            /* (token, pid, start time) */
    struct copy *kept; size_t kept_cap; /* per process key */
    struct strtab tokens;               /* per run token: its index in runs */
    struct out_run *runs; size_t runs_cap;
    struct out_process *procs; size_t nprocs, procs_cap;  /* written last: their runs' ids wait for every run */
    struct arena text;                  /* the processes' strings */
    struct strtab modules, functions, paths, frame_keys;
    struct out_frame *frames; size_t frames_cap;  /* per frame id - 1; written last (a later input may name one) */
    struct idmap tag_frames;            /* function << 32 | inline_depth -> frame id - 1 */
    struct idmap stacks;                /* parent << 32 | frame -> the first stack of that content */
    struct idmap stack_dups;            /* stack -> the next stack of the same content */
    int32_t *stack_input; size_t stacks_cap;  /* per stack id: the last input that mapped a stack to it */
    uint32_t nstacks;
    int64_t nthreads, nsnapshots, nsamples;
    struct db_file *files;
};

/* One input's ids in the output, per index of its profile; 0: not copied. */
struct input {
    const struct profile *p;
    uint32_t *run;                      /* index in m->runs */
    int64_t *proc, *thread, *snapshot;
    uint32_t *module, *function, *file, *frame, *stack;
};

static int fail(struct merge *m, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct merge *m, int code, const char *fmt, ...)
{
    if (m->rc) return m->rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err, m->errlen, fmt, ap);
    va_end(ap);
    return m->rc = code;
}

static int out_fail(struct merge *m)
{
    return fail(m, EXIT_FAILED, "%s: cannot write (%s)", m->out_path, sqlite3_errmsg(m->out));
}

static void bind_row(sqlite3_stmt *st, int first, const struct val *v, int n)
{
    for (int i = 0; i < n; i++) {
        int k = first + i + 1;
        switch (v[i].type) {
        case V_INT: sqlite3_bind_int64(st, k, v[i].i); break;
        case V_REAL: sqlite3_bind_double(st, k, v[i].d); break;
        case V_TEXT: sqlite3_bind_text(st, k, v[i].s, -1, SQLITE_STATIC); break;
        default: sqlite3_bind_null(st, k);
        }
    }
}

static void step(struct merge *m, sqlite3_stmt *st)
{
    if (!m->rc && sqlite3_step(st) != SQLITE_DONE) out_fail(m);
    sqlite3_reset(st);
}

/* The rows of a table collected so far: a full batch with its statement,
 * fewer one by one. */
static void batch_flush(struct merge *m, int table)
{
    struct batch *b = &m->ins[table];
    int ncols = tables[table].ncols;
    if (b->n == BATCH_ROWS) {
        bind_row(b->many, 0, b->v, BATCH_ROWS * ncols);
        step(m, b->many);
    } else {
        for (int r = 0; r < b->n; r++) {
            bind_row(b->one, 0, &b->v[r * ncols], ncols);
            step(m, b->one);
        }
    }
    b->n = 0;
}

static void flush_all(struct merge *m)
{
    for (int t = 0; t < NTABLES; t++) batch_flush(m, t);
}

static void put(struct merge *m, int table, const struct val *v, size_t n)
{
    struct batch *b = &m->ins[table];
    memcpy(&b->v[b->n++ * n], v, n * sizeof *v);
    if (b->n == BATCH_ROWS) batch_flush(m, table);
}

/* Interns key into t; *created when it is new. Returns its id (0-based). */
static uint32_t intern(struct strtab *t, const void *key, size_t len, int *created)
{
    size_t before = t->n;
    uint32_t id = strtab_intern(t, key, len);
    *created = t->n != before;
    return id;
}

/* ---------------------------------------------------------------- processes */
/* A process's key: its run's token, its pid and its start time. */
static uint32_t proc_key(struct merge *m, const char *token, int64_t pid, double start, int *created)
{
    struct strbuf k = { 0 };
    sb_add(&k, token, strlen(token) + 1);
    sb_add(&k, (const char *)&pid, sizeof pid);
    sb_add(&k, (const char *)&start, sizeof start);
    uint32_t id = intern(&m->proc_keys, k.s, k.len, created);
    sb_free(&k);
    if (*created) {
        m->kept = array_grow(m->kept, id, &m->kept_cap, sizeof *m->kept);
        m->kept[id].input = -1;
    }
    return id;
}

/* The first pass: per process key, the copy with the most non-peak
 * snapshots. Also proves every input readable before anything is written. */
static int choose_copies(struct merge *m, size_t input)
{
    static const char sql[] =
        "SELECT r.token, p.pid, p.start_time, p.id,"
        " (SELECT count(*) FROM snapshot s WHERE s.process = p.id AND s.reason != 'peak')"
        " FROM process p JOIN run r ON r.id = p.run";
    const char *path = m->inputs[input];
    char why[4400];
    sqlite3 *db;
    int rc = profile_open_db(path, &db, 0, why, sizeof why);
    if (rc) return fail(m, rc, "%s: %s", path, why);
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *token = (const char *)sqlite3_column_text(st, 0);
        int created;
        uint32_t k = proc_key(m, token ? token : "", sqlite3_column_int64(st, 1), sqlite3_column_double(st, 2),
                              &created);
        int64_t n = sqlite3_column_int64(st, 4);
        if (m->kept[k].input < 0 || n > m->kept[k].nsnapshots)
            m->kept[k] = (struct copy){ (int)input, sqlite3_column_int64(st, 3), n };
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE) fail(m, EXIT_BAD_INPUT, "%s: not a mallocprof profile (%s)", path, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return m->rc;
}

/* The input's runs, by token; the file's record (db_file) with run indexes
 * for now (ids once every run is known). */
static void map_runs(struct merge *m, struct input *in)
{
    const struct profile *p = in->p;
    struct db_file *f = &m->files[m->cur];
    f->nruns = p->nruns;
    f->runs = xmalloc(p->nruns * sizeof *f->runs);
    f->nprocs = xcalloc(p->nruns, sizeof *f->nprocs);
    for (size_t r = 0; r < p->nruns; r++) {
        int created;
        uint32_t g = intern(&m->tokens, p->runs[r].token, strlen(p->runs[r].token), &created);
        if (created) {
            m->runs = array_grow(m->runs, g, &m->runs_cap, sizeof *m->runs);
            m->runs[g] = (struct out_run){ m->tokens.str[g], p->runs[r].start_time, -1, 0, 0 };
        }
        struct out_run *o = &m->runs[g];
        if (p->runs[r].start_time < o->start_time) o->start_time = p->runs[r].start_time;
        if (o->last_input != (int)m->cur) o->ninputs++;
        o->last_input = (int)m->cur;
        in->run[r] = g;
        f->runs[r] = g;
    }
    f->latest = p->nruns ? (int64_t)in->run[p->nruns - 1] : -1;     /* runs are loaded by id */
    for (size_t i = 0; i < p->nprocs; i++) f->nprocs[p->procs[i].run]++;
}

static const char *keep_text(struct merge *m, const char *s) { return arena_strndup(&m->text, s, strlen(s)); }

/* The processes whose copy this is, their threads and snapshots (in seq
 * order: profile.c loads them by process and seq). */
static void map_processes(struct merge *m, struct input *in)
{
    const struct profile *p = in->p;
    for (size_t i = 0; i < p->nprocs; i++) {
        const struct process *pr = &p->procs[i];
        int created;
        uint32_t k = proc_key(m, p->runs[pr->run].token, pr->pid, pr->start_time, &created);
        if (m->kept[k].input < 0)       /* new since the first pass: the file grew */
            m->kept[k] = (struct copy){ (int)m->cur, pr->id, pr->nsnapshots };
        if (m->kept[k].input != (int)m->cur || m->kept[k].id != pr->id) continue;
        m->procs = array_grow(m->procs, m->nprocs, &m->procs_cap, sizeof *m->procs);
        struct out_process *o = &m->procs[m->nprocs++];
        o->pr = *pr;
        o->pr.id = in->proc[i] = (int64_t)m->nprocs;
        o->pr.exe = keep_text(m, pr->exe), o->pr.cmdline = keep_text(m, pr->cmdline);
        o->pr.host = keep_text(m, pr->host), o->pr.settings = keep_text(m, pr->settings);
        o->pr.ended = keep_text(m, pr->ended);
        o->run = in->run[pr->run];
        for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++) {
            const struct snapshot *sn = &p->snapshots[j];
            in->snapshot[j] = ++m->nsnapshots;
            PUT(m, T_SNAPSHOT, I(in->snapshot[j]), I(in->proc[i]), I(sn->seq), R(sn->time), S(sn->reason),
                S(sn->label), I(sn->profiler_memory));
        }
    }
    for (size_t t = 0; t < p->nthreads; t++) {
        const struct thread *th = &p->threads[t];
        if (!in->proc[th->process]) continue;
        in->thread[t] = ++m->nthreads;
        PUT(m, T_THREAD, I(in->thread[t]), I(in->proc[th->process]), I(th->seq), I(th->tid), S(th->name));
    }
}

/* ---------------------------------------------------------------- dictionaries */
/* A name of a dictionary (function, file): its id, inserted when new. */
static uint32_t name_id(struct merge *m, struct strtab *t, int table, const char *name)
{
    int created;
    uint32_t id = intern(t, name, strlen(name), &created) + 1;
    if (created) PUT(m, table, I(id), S(name));
    return id;
}

static uint32_t module_id(struct merge *m, const struct module *mod)
{
    struct strbuf k = { 0 };
    sb_add(&k, mod->path, strlen(mod->path) + 1);
    sb_puts(&k, mod->build_id);
    int created;
    uint32_t id = intern(&m->modules, k.s, k.len, &created) + 1;
    sb_free(&k);
    if (created) PUT(m, T_MODULE, I(id), S(mod->path), S(mod->build_id));
    return id;
}

/* The frame (module, offset, inline_depth); *created when new. */
static uint32_t frame_id(struct merge *m, uint32_t module, int64_t offset, int32_t depth, int *created)
{
    struct { uint32_t module; int32_t depth; int64_t offset; } k = { module, depth, offset };
    uint32_t id = intern(&m->frame_keys, &k, sizeof k, created);
    if (*created) {
        m->frames = array_grow(m->frames, id, &m->frames_cap, sizeof *m->frames);
        m->frames[id] = (struct out_frame){ .module = module, .offset = offset, .inline_depth = depth };
    }
    return id + 1;
}

/* A tag scope's frame, by its name: offset tag_offset(name), or the next
 * free one in the (never seen) case of two names of one hash. */
static uint32_t tag_frame_id(struct merge *m, uint32_t module, uint32_t function, int32_t depth, const char *name,
                             int *created)
{
    uint64_t key = (uint64_t)function << 32 | (uint32_t)depth;
    uint32_t found = idmap_get(&m->tag_frames, key);
    *created = 0;
    if (found != NONE) return found + 1;
    uint32_t id;
    for (int64_t offset = tag_offset(name); !*created; offset = (offset + 1) & 0xffffffffffffll)
        id = frame_id(m, module, offset, depth, created);
    *idmap_put(&m->tag_frames, key, created) = id - 1;
    return id;
}

/* Frames keep what the first input that named them said (function, file,
 * line): a frame without a function takes them from a later input. */
static void map_frames(struct merge *m, struct input *in)
{
    const struct profile *p = in->p;
    for (size_t f = 0; f < p->nframes; f++) {
        const struct frame *fr = &p->frames[f];
        uint32_t module = in->module[fr->module];
        uint32_t function = fr->function == NONE ? 0 : in->function[fr->function];
        uint32_t file = fr->file == NONE ? 0 : in->file[fr->file];
        int created;
        if (function && module_is_tag(&p->modules[fr->module]))
            in->frame[f] = tag_frame_id(m, module, function, fr->inline_depth, p->functions[fr->function], &created);
        else
            in->frame[f] = frame_id(m, module, fr->offset, fr->inline_depth, &created);
        struct out_frame *o = &m->frames[in->frame[f] - 1];
        if (created || (!o->function && function)) {
            o->function = function;
            o->file = file;
            o->line = fr->line;
        }
    }
}

static uint32_t new_stack(struct merge *m, uint32_t parent, uint32_t frame)
{
    if (m->nstacks >= UINT32_MAX - 3) {
        fail(m, EXIT_FAILED, "%s: more than %u stacks", m->out_path, UINT32_MAX - 3);
        return 0;
    }
    uint32_t id = ++m->nstacks;
    m->stack_input = array_grow(m->stack_input, id, &m->stacks_cap, sizeof *m->stack_input);
    m->stack_input[id] = (int32_t)m->cur;
    PUT(m, T_STACK, I(id), I(parent), I(frame));
    return id;
}

/* The stack (parent, frame) for the input's next stack of that content. */
static uint32_t stack_id(struct merge *m, uint32_t parent, uint32_t frame)
{
    int created;
    uint32_t *first = idmap_put(&m->stacks, (uint64_t)parent << 32 | frame, &created);
    if (created) return *first = new_stack(m, parent, frame);
    uint32_t id = *first;
    while (m->stack_input[id] == (int32_t)m->cur) {    /* one of the input's stacks has it already */
        uint32_t next = idmap_get(&m->stack_dups, id);
        if (next == NONE) {
            next = new_stack(m, parent, frame);
            *idmap_put(&m->stack_dups, id, &created) = next;
            return next;
        }
        id = next;
    }
    m->stack_input[id] = (int32_t)m->cur;
    return id;
}

static void map_dictionaries(struct merge *m, struct input *in)
{
    const struct profile *p = in->p;
    for (size_t i = 0; i < p->nmodules; i++) in->module[i] = module_id(m, &p->modules[i]);
    for (size_t i = 0; i < p->nfunctions; i++) in->function[i] = name_id(m, &m->functions, T_FUNCTION, p->functions[i]);
    for (size_t i = 0; i < p->nfiles; i++) in->file[i] = name_id(m, &m->paths, T_FILE, p->files[i]);
    map_frames(m, in);
    /* parents first: in id order when the file has them so (the recorder
     * does), which keeps its sample rows in the order of the new ids */
    int by_id = 1;
    for (uint32_t s = 0; s < p->nstacks && by_id; s++) by_id = p->stacks[s].parent == NONE || p->stacks[s].parent < s;
    idmap_reserve(&m->stacks, p->nstacks);
    for (uint32_t k = 0; k < p->nstacks && !m->rc; k++) {
        uint32_t s = by_id ? k : p->stack_order[k];
        const struct stack *st = &p->stacks[s];
        in->stack[s] = stack_id(m, st->parent == NONE ? 0 : in->stack[st->parent], in->frame[st->frame]);
    }
}

/* ---------------------------------------------------------------- rows */
/* Sample rows in the order of their primary key (snapshot, stack,
 * thread) in the output: appended to the table's B-tree, not scattered. */
static int cmp_sample(const void *a, const void *b, void *ctx)
{
    const struct input *in = ctx;
    const struct sample *x = &in->p->samples[*(const uint32_t *)a], *y = &in->p->samples[*(const uint32_t *)b];
    int64_t k[2][3] = { { in->snapshot[x->snapshot], in->stack[x->stack], in->thread[x->thread] },
                        { in->snapshot[y->snapshot], in->stack[y->stack], in->thread[y->thread] } };
    for (int i = 0; i < 3; i++)
        if (k[0][i] != k[1][i]) return k[0][i] < k[1][i] ? -1 : 1;
    return 0;
}

static void copy_samples(struct merge *m, const struct input *in)
{
    const struct profile *p = in->p;
    uint32_t *rows = xmalloc(p->nsamples * sizeof *rows);
    size_t n = 0, sorted = 1;
    for (uint32_t i = 0; i < p->nsamples; i++) {
        const struct sample *sa = &p->samples[i];
        if (!in->snapshot[sa->snapshot] || !in->thread[sa->thread]) continue;
        rows[n++] = i;
        if (sorted && n > 1 && cmp_sample(&rows[n - 2], &rows[n - 1], (void *)in) > 0) sorted = 0;
    }
    if (!sorted) qsort_r(rows, n, sizeof *rows, cmp_sample, (void *)in);
    for (size_t r = 0; r < n && !m->rc; r++) {
        const struct sample *sa = &p->samples[rows[r]];
        int64_t snapshot = in->snapshot[sa->snapshot], thread = in->thread[sa->thread];
        const int64_t *v = sa->c.v;
        PUT(m, T_SAMPLE, I(snapshot), I(in->stack[sa->stack]), I(thread), I(v[NCALLS]), I(v[MEMTOT]), I(v[NFREE]),
            I(v[MEMLIVE]), I(v[MAXLIVE]), I(v[NTEMP]), I(v[TIME]));
        m->nsamples++;
    }
    free(rows);
    for (size_t i = 0; i < p->ntotals && !m->rc; i++) {
        const struct total *t = &p->totals[i];
        int64_t snapshot = in->snapshot[t->snapshot], thread = t->thread == NONE ? 0 : in->thread[t->thread];
        if (!snapshot || (t->thread != NONE && !thread)) continue;
        PUT(m, T_TOTALS, I(snapshot), I(thread), I(t->c.v[NCALLS]), I(t->c.v[MEMTOT]), I(t->c.v[NFREE]),
            I(t->c.v[MEMLIVE]), I(t->c.v[MAXLIVE]), I(t->ncalls_nostack), I(t->memtot_nostack), I(t->nfree_unknown));
    }
}

/* Database id -> index, for the rows the profile does not hold. */
static void index_ids(struct idmap *map, const void *rows, size_t n, size_t stride)
{
    idmap_init(map, n);
    for (size_t i = 0; i < n; i++) {
        int created;
        *idmap_put(map, (uint64_t)*(const int64_t *)((const char *)rows + i * stride), &created) = (uint32_t)i;
    }
}

/* The hist (version 2) and stack_hist (version 3) rows, read here: the
 * profile does not hold them. Rows of snapshots, stacks or threads the
 * file does not have are never read by a query: left out. */
static void copy_hists(struct merge *m, const struct input *in, sqlite3 *db)
{
    static const char *const sql[] = {
        "SELECT snapshot, 0, 0, lo, ncalls, memtot, nlive, memlive FROM hist",
        "SELECT snapshot, stack, thread, lo, ncalls, memtot, nlive, memlive FROM stack_hist",
    };
    const struct profile *p = in->p;
    struct idmap snapshots, threads;
    index_ids(&snapshots, p->snapshots, p->nsnapshots, sizeof *p->snapshots);
    index_ids(&threads, p->threads, p->nthreads, sizeof *p->threads);
    for (int k = 0; k < 2 && !m->rc && p->version >= 2 + k; k++) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(db, sql[k], -1, &st, NULL);
        while (rc == SQLITE_OK && !m->rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t v[8];
            for (int c = 0; c < 8; c++) v[c] = sqlite3_column_int64(st, c);
            rc = SQLITE_OK;
            uint32_t sn = idmap_get(&snapshots, (uint64_t)v[0]);
            if (sn == NONE || !in->snapshot[sn]) continue;
            if (k == 0) {
                PUT(m, T_HIST, I(in->snapshot[sn]), I(v[3]), I(v[4]), I(v[5]), I(v[6]), I(v[7]));
                continue;
            }
            uint32_t s = profile_stack_index(p, v[1]), t = idmap_get(&threads, (uint64_t)v[2]);
            if (s == NONE || t == NONE || !in->thread[t]) continue;
            PUT(m, T_STACK_HIST, I(in->snapshot[sn]), I(in->stack[s]), I(in->thread[t]), I(v[3]), I(v[4]), I(v[5]),
                I(v[6]), I(v[7]));
        }
        if (rc != SQLITE_OK && rc != SQLITE_DONE)
            fail(m, EXIT_BAD_INPUT, "%s: not a mallocprof profile (%s)", m->inputs[m->cur], sqlite3_errmsg(db));
        sqlite3_finalize(st);
    }
    idmap_free(&snapshots);
    idmap_free(&threads);
}

/* profile_load_more's callback: the input, loaded, into the output. */
static int copy_input(void *ctx, sqlite3 *db, struct profile *p)
{
    struct merge *m = ctx;
    struct input in = {
        .p = p, .run = xmalloc(p->nruns * sizeof *in.run),
        .proc = xcalloc(p->nprocs, sizeof *in.proc), .thread = xcalloc(p->nthreads, sizeof *in.thread),
        .snapshot = xcalloc(p->nsnapshots, sizeof *in.snapshot),
        .module = xmalloc(p->nmodules * sizeof *in.module), .function = xmalloc(p->nfunctions * sizeof *in.function),
        .file = xmalloc(p->nfiles * sizeof *in.file), .frame = xmalloc(p->nframes * sizeof *in.frame),
        .stack = xmalloc(p->nstacks * sizeof *in.stack),
    };
    map_runs(m, &in);
    map_processes(m, &in);
    map_dictionaries(m, &in);
    copy_samples(m, &in);
    if (!m->rc) copy_hists(m, &in, db);
    flush_all(m);                       /* the rows point into the profile */
    free(in.run); free(in.proc); free(in.thread); free(in.snapshot); free(in.module); free(in.function);
    free(in.file); free(in.frame); free(in.stack);
    return m->rc;
}

/* ---------------------------------------------------------------- the output */
static int exec_out(struct merge *m, const char *sql)
{
    if (!m->rc && sqlite3_exec(m->out, sql, NULL, NULL, NULL) != SQLITE_OK) out_fail(m);
    return m->rc;
}

/* INSERT INTO table (cols) VALUES (?, ...), ... for `rows` rows. */
static sqlite3_stmt *prepare_insert(struct merge *m, int table, int rows)
{
    struct strbuf sql = { 0 };
    sb_printf(&sql, "INSERT INTO %s (%s) VALUES ", tables[table].name, tables[table].cols);
    for (int r = 0; r < rows; r++) {
        sb_puts(&sql, r ? ", (?" : "(?");
        for (int c = 1; c < tables[table].ncols; c++) sb_puts(&sql, ", ?");
        sb_putc(&sql, ')');
    }
    sqlite3_stmt *st = NULL;
    if (!m->rc && sqlite3_prepare_v2(m->out, sql.s, -1, &st, NULL) != SQLITE_OK) out_fail(m);
    sb_free(&sql);
    return st;
}

/* The schema compiled in, written as the recorder writes it. (Rows arrive
 * mostly in the order of their keys: keeping the indexes as they come is
 * faster than building them at the end.) */
static int open_output(struct merge *m)
{
    if (sqlite3_open_v2(m->out_path, &m->out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        return out_fail(m);
    exec_out(m, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -65536");
    exec_out(m, schema_sql);
    exec_out(m, "BEGIN");
    m->ins = xcalloc(NTABLES, sizeof *m->ins);
    for (int t = 0; t < NTABLES && !m->rc; t++) {
        m->ins[t].many = prepare_insert(m, t, BATCH_ROWS);
        m->ins[t].one = prepare_insert(m, t, 1);
    }
    return m->rc;
}

static int cmp_run(const void *a, const void *b, void *ctx)
{
    const struct out_run *runs = ctx, *x = &runs[*(const uint32_t *)a], *y = &runs[*(const uint32_t *)b];
    if (x->start_time != y->start_time) return x->start_time < y->start_time ? -1 : 1;
    return strcmp(x->token, y->token);
}

/* Runs numbered by start time, then what waited for them: processes,
 * frames; the files' run ids. */
static int finish(struct merge *m, struct merge_stats *st)
{
    size_t nruns = m->tokens.n;
    uint32_t *order = xmalloc(nruns * sizeof *order);
    for (uint32_t i = 0; i < nruns; i++) order[i] = i;
    qsort_r(order, nruns, sizeof *order, cmp_run, m->runs);
    for (size_t k = 0; k < nruns; k++) {
        struct out_run *r = &m->runs[order[k]];
        r->id = (int64_t)k + 1;
        PUT(m, T_RUN, I(r->id), S(r->token), R(r->start_time));
        st->runs_shared += r->ninputs > 1;
    }
    free(order);
    for (size_t i = 0; i < m->nprocs; i++) {
        const struct process *pr = &m->procs[i].pr;
        PUT(m, T_PROCESS, I(pr->id), I(m->runs[m->procs[i].run].id), I(pr->pid), I(pr->ppid), S(pr->exe),
            S(pr->cmdline), S(pr->host), R(pr->start_time), pr->end_time < 0 ? NUL : R(pr->end_time), S(pr->settings),
            S(pr->ended));
    }
    for (size_t i = 0; i < m->frame_keys.n; i++) {
        const struct out_frame *f = &m->frames[i];
        PUT(m, T_FRAME, I((int64_t)i + 1), I(f->module), I(f->offset), I(f->inline_depth),
            f->function ? I(f->function) : NUL, f->file ? I(f->file) : NUL, I(f->line));
    }
    flush_all(m);
    exec_out(m, "COMMIT");
    for (size_t i = 0; i < m->ninputs; i++) {
        struct db_file *f = &m->files[i];
        for (size_t r = 0; r < f->nruns; r++) f->runs[r] = m->runs[f->runs[r]].id;
        if (f->latest >= 0) f->latest = m->runs[f->latest].id;
    }
    st->runs = (int64_t)nruns;
    st->processes = (int64_t)m->nprocs;
    st->stacks = m->nstacks;
    st->samples = m->nsamples;
    return m->rc;
}

static void merge_free(struct merge *m)
{
    for (int t = 0; m->ins && t < NTABLES; t++) {
        sqlite3_finalize(m->ins[t].many);
        sqlite3_finalize(m->ins[t].one);
    }
    free(m->ins);
    if (m->out && sqlite3_close(m->out) != SQLITE_OK) out_fail(m);
    strtab_free(&m->proc_keys); strtab_free(&m->tokens); strtab_free(&m->modules);
    strtab_free(&m->functions); strtab_free(&m->paths); strtab_free(&m->frame_keys);
    idmap_free(&m->tag_frames); idmap_free(&m->stacks); idmap_free(&m->stack_dups);
    free(m->kept); free(m->runs); free(m->procs); free(m->frames); free(m->stack_input);
    arena_free(&m->text);
}

int merge_build(char *const *inputs, size_t n, const char *out, int peak_rows, struct merge_stats *st, char *err,
                size_t errlen)
{
    struct merge m = { .out_path = out, .err = err, .errlen = errlen, .inputs = inputs, .ninputs = n };
    memset(st, 0, sizeof *st);
    strtab_init(&m.proc_keys); strtab_init(&m.tokens); strtab_init(&m.modules);
    strtab_init(&m.functions); strtab_init(&m.paths); strtab_init(&m.frame_keys);
    idmap_init(&m.tag_frames, 16); idmap_init(&m.stacks, 1024); idmap_init(&m.stack_dups, 16);
    m.files = xcalloc(n, sizeof *m.files);
    for (size_t i = 0; i < n; i++) m.files[i].path = inputs[i];
    for (size_t i = 0; i < n && !m.rc; i++) choose_copies(&m, i);
    if (!m.rc) open_output(&m);
    for (m.cur = 0; m.cur < n && !m.rc; m.cur++) {
        struct profile *p;
        char why[4400];
        int rc = profile_load_more(inputs[m.cur], peak_rows, &p, copy_input, &m, why, sizeof why);
        if (rc) fail(&m, rc, "%s: %s", inputs[m.cur], why);
        profile_free(p);
    }
    if (!m.rc) finish(&m, st);
    merge_free(&m);
    st->files = m.files;
    st->nfiles = n;
    if (m.rc) merge_stats_free(st);
    return m.rc;
}

void merge_stats_free(struct merge_stats *st)
{
    for (size_t i = 0; i < st->nfiles; i++) {
        free(st->files[i].runs);
        free(st->files[i].nprocs);
    }
    free(st->files);
    st->files = NULL;
    st->nfiles = 0;
}

int merge_temporary(char *const *inputs, size_t n, int peak_rows, const char **path, struct merge_stats *st,
                    char *err, size_t errlen)
{
    const char *dir = getenv("TMPDIR");
    struct strbuf prefix = { 0 };
    sb_printf(&prefix, "%s/mpquery-", dir && *dir ? dir : "/tmp");
    int rc = temp_create(prefix.s, path, err, errlen);
    sb_free(&prefix);
    if (rc) return rc;
    rc = merge_build(inputs, n, *path, peak_rows, st, err, errlen);
    if (rc) temp_forget(*path, 1);
    return rc;
}
