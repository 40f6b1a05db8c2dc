/* The only SQL reader of mpquery: loads a profile database into arrays with
 * ONE sequential pass per table (no per-row queries), then translates every
 * database id into a dense array index and checks each reference, so the
 * rest of mpquery never sees an id it cannot index. The database is opened
 * SQLITE_OPEN_READONLY and never written (symbolize, the one command that
 * writes, opens it read-write with profile_open_db). Every sqlite return is checked: a
 * truncated or corrupted file is an error message, never a crash. A file is
 * untrusted: profile_open_db hardens the connection and accepts only
 * mallocprof's own schema objects (prof/dbguard.c), so no SQL that the file
 * brings (trigger, view) ever runs. */
#include "mpquery.h"
#include "dbguard.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char schema_sql[] =
#include "schema.h"
;

/* The version the compiled-in schema declares ("PRAGMA user_version = N"). */
static int schema_version(void)
{
    const char *s = strstr(schema_sql, "user_version = ");
    return s ? atoi(s + strlen("user_version = ")) : SCHEMA_VERSION;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return EXIT_BAD_INPUT;
}

/* The file itself: a regular, non-empty file that starts as SQLite does. */
static int check_file(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) return fail(err, errlen, "%s", strerror(errno));
    if (S_ISDIR(st.st_mode)) return fail(err, errlen, "is a directory, not a mallocprof profile");
    if (!S_ISREG(st.st_mode)) return fail(err, errlen, "not a regular file");
    if (st.st_size == 0) return fail(err, errlen, "empty file, not a mallocprof profile");
    int fd = open(path, O_RDONLY);
    if (fd < 0) return fail(err, errlen, "%s", strerror(errno));
    char magic[16] = { 0 };
    ssize_t n = read(fd, magic, sizeof magic);
    close(fd);
    if (n != (ssize_t)sizeof magic || memcmp(magic, "SQLite format 3", 16) != 0)
        return fail(err, errlen, "not a mallocprof profile (not an SQLite database)");
    return 0;
}

/* PRAGMA user_version is the schema version; then every object of the
 * file's schema must be mallocprof's own (prof/dbguard.c), so that no SQL
 * the file brings runs: not a trigger (symbolize writes), not a view. */
static int check_schema(sqlite3 *db, char *err, size_t errlen)
{
    sqlite3_stmt *st_v = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st_v, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(st_v);
    if (rc != SQLITE_ROW) {
        fail(err, errlen, "not a mallocprof profile (%s)", sqlite3_errmsg(db));
        sqlite3_finalize(st_v);
        return EXIT_BAD_INPUT;
    }
    int version = sqlite3_column_int(st_v, 0);
    sqlite3_finalize(st_v);
    if (version == 0) return fail(err, errlen, "not a mallocprof profile (schema version 0)");
    if (version != schema_version())
        return fail(err, errlen, "schema version %d, this mpquery reads version %d", version, schema_version());
    return db_schema_check(db, err, errlen) ? EXIT_BAD_INPUT : 0;
}

int profile_open_db(const char *path, sqlite3 **out, int writable, char *err, size_t errlen)
{
    *out = NULL;
    int rc = check_file(path, err, errlen);
    if (rc) return rc;
    sqlite3 *db = NULL;
    rc = sqlite3_open_v2(path, &db, (writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        fail(err, errlen, "cannot open (%s)", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return EXIT_BAD_INPUT;
    }
    sqlite3_busy_timeout(db, 10000);
    /* views stay on: mpquery's own queries use them, and the schema check
     * proves they are mallocprof's */
    if (db_harden(db, 1)) rc = fail(err, errlen, "cannot open safely (%s)", sqlite3_errmsg(db));
    else rc = check_schema(db, err, errlen);
    if (rc) {
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

/* ---------------------------------------------------------------- loading */
struct idindex;
struct loader {
    sqlite3 *db;
    struct profile *p;
    char *err; size_t errlen;
    /* samples are converted as they are read (no raw copy of the largest
     * table): these index the tables they refer to */
    const struct idindex *ix_snap, *ix_stack, *ix_thread;
    int bad_ref;                /* first dangling reference seen */
};

/* Id → index for one table: direct when ids are 1..n in order (the usual
 * case), a hash map otherwise. */
struct idindex { size_t n; int dense; struct idmap map; };

static void idindex_build(struct idindex *ix, size_t n, const void *rows, size_t stride)
{
    ix->n = n;
    ix->dense = 1;
    for (size_t i = 0; i < n && ix->dense; i++)
        if (*(const int64_t *)((const char *)rows + i * stride) != (int64_t)i + 1) ix->dense = 0;
    if (ix->dense) return;
    idmap_init(&ix->map, n);
    for (size_t i = 0; i < n; i++) {
        int created;
        uint32_t *v = idmap_put(&ix->map, (uint64_t)*(const int64_t *)((const char *)rows + i * stride), &created);
        *v = (uint32_t)i;   /* duplicates cannot happen: ids are primary keys */
    }
}

static uint32_t idindex_get(const struct idindex *ix, int64_t id)
{
    if (ix->dense) return id >= 1 && (uint64_t)id <= ix->n ? (uint32_t)(id - 1) : NONE;
    return idmap_get(&ix->map, (uint64_t)id);
}

static void idindex_free(struct idindex *ix)
{
    if (!ix->dense) idmap_free(&ix->map);
}

static const char *text_col(struct loader *l, sqlite3_stmt *st, int col)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    size_t n = (size_t)sqlite3_column_bytes(st, col);
    if (!s) return "";
    if (n > NAME_MAX_BYTES) {
        char *d = arena_strndup(&l->p->text, s, NAME_MAX_BYTES + 3);
        memcpy(d + NAME_MAX_BYTES, "...", 3);
        return d;
    }
    return arena_strndup(&l->p->text, s, n);
}

/* Grows an array by doubling; returns the new element's address. */
static void *push(void **arr, size_t *n, size_t *cap, size_t size)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 256;
        *arr = xrealloc(*arr, *cap * size);
    }
    return (char *)*arr + (*n)++ * size;
}

typedef void (*row_fn)(struct loader *l, sqlite3_stmt *st, void *arr, size_t *n, size_t *cap);

/* Runs one full-table query; each row is appended by `fn`. The array is
 * sized from count(*) first (cheap) so that large tables are not copied
 * while growing. */
static int load_table(struct loader *l, const char *sql, row_fn fn, void *arr, size_t *n, size_t size)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    const char *from = strstr(sql, " FROM ");
    char count_sql[128];
    const char *order = from ? strstr(from, " ORDER BY") : NULL;
    int from_len = from ? (order ? (int)(order - from) : (int)strlen(from)) : 0;
    if (from && snprintf(count_sql, sizeof count_sql, "SELECT count(*)%.*s", from_len, from)
                < (int)sizeof count_sql
        && sqlite3_prepare_v2(l->db, count_sql, -1, &st, NULL) == SQLITE_OK
        && sqlite3_step(st) == SQLITE_ROW) {
        sqlite3_int64 rows = sqlite3_column_int64(st, 0);
        if (rows > 0 && (uint64_t)rows < SIZE_MAX / size / 2) {
            cap = (size_t)rows;
            *(void **)arr = xrealloc(*(void **)arr, cap * size);
        }
    }
    sqlite3_finalize(st);
    st = NULL;
    int rc = sqlite3_prepare_v2(l->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) fn(l, st, arr, n, &cap);
    }
    if (rc != SQLITE_DONE) {
        fail(l->err, l->errlen, "not a mallocprof profile (%s)", sqlite3_errmsg(l->db));
        sqlite3_finalize(st);
        return EXIT_BAD_INPUT;
    }
    sqlite3_finalize(st);
    return 0;
}

#define I64(c) sqlite3_column_int64(st, c)
#define DBL(c) sqlite3_column_double(st, c)

static void row_run(struct loader *l, sqlite3_stmt *st, void *arr, size_t *n, size_t *cap)
{
    struct run *r = push(arr, n, cap, sizeof *r);
    r->id = I64(0);
    r->token = text_col(l, st, 1);
    r->start_time = DBL(2);
}

static void row_process(struct loader *l, sqlite3_stmt *st, void *arr, size_t *n, size_t *cap)
{
    struct process *p = push(arr, n, cap, sizeof *p);
    p->id = I64(0);
    p->run = NONE;
    p->start_time = DBL(1);
    p->end_time = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : DBL(2);
    p->pid = I64(3);
    p->ppid = I64(4);
    p->exe = text_col(l, st, 5);
    p->cmdline = text_col(l, st, 6);
    p->host = text_col(l, st, 7);
    p->settings = text_col(l, st, 8);
    p->run_id = I64(9);
}

struct raw_thread { struct thread t; int64_t process; };
static void row_thread(struct loader *l, sqlite3_stmt *st, void *arr, size_t *n, size_t *cap)
{
    struct raw_thread *t = push(arr, n, cap, sizeof *t);
    t->t.id = I64(0);
    t->process = I64(1);
    t->t.seq = I64(2);
    t->t.tid = I64(3);
    t->t.name = text_col(l, st, 4);
}

static void row_module(struct loader *l, sqlite3_stmt *st, void *arr, size_t *n, size_t *cap)
{
    struct module *m = push(arr, n, cap, sizeof *m);
    m->id = I64(0);
    m->path = text_col(l, st, 1);
    m->build_id = text_col(l, st, 2);
    m->base = path_basename(m->path);
    m->special = m->path[0] == '[';
}

struct raw_name { int64_t id; const char *name; };
static void row_name(struct loader *l, sqlite3_stmt *st, void *arr, size_t *n, size_t *cap)
{
    struct raw_name *r = push(arr, n, cap, sizeof *r);
    r->id = I64(0);
    r->name = text_col(l, st, 1);
}

struct raw_frame { int64_t id, offset, module, function, file; int32_t inline_depth, line; };
static void row_frame(struct loader *l, sqlite3_stmt *st, void *arr, size_t *n, size_t *cap)
{
    (void)l;
    struct raw_frame *f = push(arr, n, cap, sizeof *f);
    f->id = I64(0);
    f->module = I64(1);
    f->offset = I64(2);
    f->inline_depth = (int32_t)I64(3);
    f->function = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : I64(4);
    f->file = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : I64(5);
    f->line = (int32_t)I64(6);
}

struct raw_stack { int64_t id, parent, frame; };
static void row_stack(struct loader *l, sqlite3_stmt *st, void *arr, size_t *n, size_t *cap)
{
    (void)l;
    struct raw_stack *s = push(arr, n, cap, sizeof *s);
    s->id = I64(0);
    s->parent = I64(1);
    s->frame = I64(2);
}

struct raw_snapshot { struct snapshot s; int64_t process; };
static void row_snapshot(struct loader *l, sqlite3_stmt *st, void *arr, size_t *n, size_t *cap)
{
    struct raw_snapshot *s = push(arr, n, cap, sizeof *s);
    s->s.id = I64(0);
    s->process = I64(1);
    s->s.seq = I64(2);
    s->s.time = DBL(3);
    s->s.reason = text_col(l, st, 4);
    s->s.label = text_col(l, st, 5);
    s->s.profiler_memory = I64(6);
}

static uint32_t idindex_get(const struct idindex *ix, int64_t id);

static void row_sample(struct loader *l, sqlite3_stmt *st, void *arr, size_t *n, size_t *cap)
{
    if (l->bad_ref) return;
    struct sample *s = push(arr, n, cap, sizeof *s);
    int64_t snapshot = I64(0), stack = I64(1), thread = I64(2);
    s->snapshot = idindex_get(l->ix_snap, snapshot);
    s->stack = idindex_get(l->ix_stack, stack);
    s->thread = idindex_get(l->ix_thread, thread);
    for (int i = 0; i < NCOUNTERS; i++) s->c.v[i] = I64(3 + i);
    if (s->snapshot == NONE || s->stack == NONE || s->thread == NONE) {
        l->bad_ref = 1;
        fail(l->err, l->errlen, "inconsistent profile (sample refers to missing %s %lld)",
             s->snapshot == NONE ? "snapshot" : s->stack == NONE ? "stack" : "thread",
             (long long)(s->snapshot == NONE ? snapshot : s->stack == NONE ? stack : thread));
    }
}

struct raw_total { int64_t snapshot, thread; struct total t; };
static void row_total(struct loader *l, sqlite3_stmt *st, void *arr, size_t *n, size_t *cap)
{
    (void)l;
    struct raw_total *t = push(arr, n, cap, sizeof *t);
    t->snapshot = I64(0);
    t->thread = I64(1);
    for (int i = 0; i < NCOUNTERS; i++) t->t.c.v[i] = I64(2 + i);
    t->t.ncalls_nostack = I64(7);
    t->t.memtot_nostack = I64(8);
    t->t.nfree_unknown = I64(9);
}

#define BAD(...) do { rc = fail(l->err, l->errlen, __VA_ARGS__); goto out; } while (0)

/* Computes stack depths (root = 0) and an order with parents first,
 * rejecting parent cycles (possible only in a corrupted file). */
static int order_stacks(struct loader *l)
{
    struct profile *p = l->p;
    size_t n = p->nstacks;
    uint8_t *state = xcalloc(n, 1);      /* 0 new, 1 on the walk, 2 done */
    uint32_t *walk = xmalloc((n ? n : 1) * sizeof *walk);
    uint32_t maxdepth = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t w = 0;
        uint32_t cur = (uint32_t)i;
        while (cur != NONE && state[cur] == 0) {
            state[cur] = 1;
            walk[w++] = cur;
            cur = p->stacks[cur].parent;
        }
        if (cur != NONE && state[cur] == 1)
            BAD("inconsistent profile (stack %lld is its own ancestor)", (long long)p->stacks[cur].id);
        uint32_t d = cur == NONE ? 0 : p->stacks[cur].depth + 1;
        while (w-- > 0) {
            p->stacks[walk[w]].depth = d++;
            state[walk[w]] = 2;
        }
        if (d > maxdepth) maxdepth = d;
    }
    uint32_t *count = xcalloc((size_t)maxdepth + 2, sizeof *count);
    for (size_t i = 0; i < n; i++) count[p->stacks[i].depth + 1]++;
    for (size_t d = 1; d <= maxdepth + 1; d++) count[d] += count[d - 1];
    p->stack_order = xmalloc((n ? n : 1) * sizeof *p->stack_order);
    for (size_t i = 0; i < n; i++) p->stack_order[count[p->stacks[i].depth]++] = (uint32_t)i;
    free(count);
out:
    free(state);
    free(walk);
    return rc;
}

#define Q(sql, fn, arr, n) load_table(l, sql, fn, arr, n, sizeof **(arr))

static int load_all(struct loader *l)
{
    struct profile *p = l->p;
    struct raw_thread *rth = NULL; struct raw_name *rfn = NULL, *rfl = NULL;
    struct raw_frame *rfr = NULL; struct raw_stack *rst = NULL;
    struct raw_snapshot *rsn = NULL; struct raw_total *rto = NULL;
    size_t nth = 0, nfn = 0, nfl = 0, nfr = 0, nst = 0, nsn = 0, nto = 0;
    struct idindex ix_run = { 0 }, ix_proc = { 0 }, ix_thread = { 0 }, ix_module = { 0 },
                   ix_fn = { 0 }, ix_file = { 0 }, ix_frame = { 0 }, ix_snap = { 0 }, ix_stack = { 0 };
    int rc;

    /* dictionaries first: samples are resolved against them as they are read */
    if ((rc = Q("SELECT id, token, start_time FROM run ORDER BY id", row_run, &p->runs, &p->nruns))
        || (rc = Q("SELECT id, start_time, end_time, pid, ppid, exe, cmdline, host, settings, run"
                   " FROM process ORDER BY id", row_process, &p->procs, &p->nprocs))
        || (rc = Q("SELECT id, process, seq, tid, name FROM thread ORDER BY id", row_thread, &rth, &nth))
        || (rc = Q("SELECT id, path, build_id FROM module ORDER BY id", row_module, &p->modules, &p->nmodules))
        || (rc = Q("SELECT id, name FROM function ORDER BY id", row_name, &rfn, &nfn))
        || (rc = Q("SELECT id, path FROM file ORDER BY id", row_name, &rfl, &nfl))
        || (rc = Q("SELECT id, module, offset, inline_depth, function, file, line FROM frame ORDER BY id",
                   row_frame, &rfr, &nfr))
        || (rc = Q("SELECT id, parent, frame FROM stack ORDER BY id", row_stack, &rst, &nst))
        || (rc = Q("SELECT id, process, seq, time, reason, label, profiler_memory FROM snapshot"
                   " ORDER BY process, seq", row_snapshot, &rsn, &nsn))
        || (rc = Q("SELECT snapshot, thread, ncalls, memtot, nfree, memlive, maxlive, ncalls_nostack,"
                   " memtot_nostack, nfree_unknown FROM totals", row_total, &rto, &nto)))
        goto out;

    idindex_build(&ix_run, p->nruns, p->runs, sizeof *p->runs);
    idindex_build(&ix_proc, p->nprocs, p->procs, sizeof *p->procs);
    idindex_build(&ix_thread, nth, rth, sizeof *rth);
    idindex_build(&ix_module, p->nmodules, p->modules, sizeof *p->modules);
    idindex_build(&ix_fn, nfn, rfn, sizeof *rfn);
    idindex_build(&ix_file, nfl, rfl, sizeof *rfl);
    idindex_build(&ix_frame, nfr, rfr, sizeof *rfr);

    for (size_t i = 0; i < p->nprocs; i++) {
        int64_t run = p->procs[i].run_id;
        p->procs[i].run = idindex_get(&ix_run, run);
        p->procs[i].first_snapshot = p->procs[i].nsnapshots = 0;
        if (p->procs[i].run == NONE)
            BAD("inconsistent profile (process %lld refers to missing run %lld)",
                (long long)p->procs[i].id, (long long)run);
    }

    p->nthreads = nth;
    p->threads = xmalloc((nth ? nth : 1) * sizeof *p->threads);
    for (size_t i = 0; i < nth; i++) {
        p->threads[i] = rth[i].t;
        p->threads[i].process = idindex_get(&ix_proc, rth[i].process);
        if (p->threads[i].process == NONE)
            BAD("inconsistent profile (thread %lld refers to missing process %lld)",
                (long long)rth[i].t.id, (long long)rth[i].process);
    }

    /* function and file names: dense arrays by index (ids via ix_fn/ix_file) */
    p->nfunctions = nfn;
    p->functions = xmalloc((nfn ? nfn : 1) * sizeof *p->functions);
    for (size_t i = 0; i < nfn; i++) p->functions[i] = rfn[i].name;
    p->nfiles = nfl;
    p->files = xmalloc((nfl ? nfl : 1) * sizeof *p->files);
    for (size_t i = 0; i < nfl; i++) p->files[i] = rfl[i].name;

    p->nframes = nfr;
    p->frames = xmalloc((nfr ? nfr : 1) * sizeof *p->frames);
    for (size_t i = 0; i < nfr; i++) {
        struct frame *f = &p->frames[i];
        f->id = rfr[i].id;
        f->offset = rfr[i].offset;
        f->inline_depth = rfr[i].inline_depth;
        f->line = rfr[i].line;
        f->module = idindex_get(&ix_module, rfr[i].module);
        f->function = rfr[i].function < 0 ? NONE : idindex_get(&ix_fn, rfr[i].function);
        f->file = rfr[i].file < 0 ? NONE : idindex_get(&ix_file, rfr[i].file);
        if (f->module == NONE)
            BAD("inconsistent profile (frame %lld refers to missing module %lld)",
                (long long)f->id, (long long)rfr[i].module);
        if (rfr[i].function >= 0 && f->function == NONE)
            BAD("inconsistent profile (frame %lld refers to missing function %lld)",
                (long long)f->id, (long long)rfr[i].function);
        if (rfr[i].file >= 0 && f->file == NONE)
            BAD("inconsistent profile (frame %lld refers to missing file %lld)",
                (long long)f->id, (long long)rfr[i].file);
    }

    p->nstacks = nst;
    p->stacks = xmalloc((nst ? nst : 1) * sizeof *p->stacks);
    for (size_t i = 0; i < nst; i++) p->stacks[i].id = rst[i].id;
    idindex_build(&ix_stack, nst, p->stacks, sizeof *p->stacks);
    for (size_t i = 0; i < nst; i++) {
        struct stack *s = &p->stacks[i];
        s->frame = idindex_get(&ix_frame, rst[i].frame);
        s->parent = rst[i].parent == 0 ? NONE : idindex_get(&ix_stack, rst[i].parent);
        s->depth = 0;
        if (s->frame == NONE || (rst[i].parent != 0 && s->parent == NONE))
            BAD("inconsistent profile (stack %lld refers to missing %s %lld)", (long long)s->id,
                s->frame == NONE ? "frame" : "stack",
                (long long)(s->frame == NONE ? rst[i].frame : rst[i].parent));
    }
    if ((rc = order_stacks(l))) goto out;

    /* snapshots arrive sorted by (process, seq): each process owns a range */
    p->nsnapshots = nsn;
    p->snapshots = xmalloc((nsn ? nsn : 1) * sizeof *p->snapshots);
    for (size_t i = 0; i < nsn; i++) {
        p->snapshots[i] = rsn[i].s;
        uint32_t pi = idindex_get(&ix_proc, rsn[i].process);
        if (pi == NONE)
            BAD("inconsistent profile (snapshot %lld refers to missing process %lld)",
                (long long)rsn[i].s.id, (long long)rsn[i].process);
        p->snapshots[i].process = pi;
        if (p->procs[pi].nsnapshots++ == 0) p->procs[pi].first_snapshot = (uint32_t)i;
    }
    /* snapshot ids are not in index order (sorted by process): hash them */
    ix_snap.n = nsn;
    idmap_init(&ix_snap.map, nsn);
    for (size_t i = 0; i < nsn; i++) {
        int created;
        *idmap_put(&ix_snap.map, (uint64_t)p->snapshots[i].id, &created) = (uint32_t)i;
    }

    /* the largest table last, converted row by row */
    l->ix_snap = &ix_snap;
    l->ix_stack = &ix_stack;
    l->ix_thread = &ix_thread;
    if ((rc = Q("SELECT snapshot, stack, thread, ncalls, memtot, nfree, memlive, maxlive FROM sample",
                row_sample, &p->samples, &p->nsamples)))
        goto out;
    if (l->bad_ref) { rc = EXIT_BAD_INPUT; goto out; }

    /* totals of unknown threads are skipped (they only feed per-thread lines) */
    p->totals = xmalloc((nto ? nto : 1) * sizeof *p->totals);
    for (size_t i = 0; i < nto; i++) {
        struct total t = rto[i].t;
        t.snapshot = idindex_get(&ix_snap, rto[i].snapshot);
        t.thread = rto[i].thread == 0 ? NONE : idindex_get(&ix_thread, rto[i].thread);
        if (t.snapshot == NONE)
            BAD("inconsistent profile (totals refer to missing snapshot %lld)",
                (long long)rto[i].snapshot);
        if (rto[i].thread != 0 && t.thread == NONE) continue;
        p->totals[p->ntotals++] = t;
    }
    p->snapshot_total = xmalloc((nsn ? nsn : 1) * sizeof *p->snapshot_total);
    memset(p->snapshot_total, 0xff, (nsn ? nsn : 1) * sizeof *p->snapshot_total);
    for (size_t i = 0; i < p->ntotals; i++)
        if (p->totals[i].thread == NONE) p->snapshot_total[p->totals[i].snapshot] = (uint32_t)i;
    rc = 0;
out:
    idindex_free(&ix_run); idindex_free(&ix_proc); idindex_free(&ix_thread);
    idindex_free(&ix_module); idindex_free(&ix_fn); idindex_free(&ix_file);
    idindex_free(&ix_frame); idindex_free(&ix_stack);
    if (ix_snap.map.keys) idmap_free(&ix_snap.map);
    free(rth); free(rfn); free(rfl); free(rfr); free(rst); free(rsn); free(rto);
    return rc;
}

uint32_t profile_stack_index(const struct profile *p, int64_t id)
{
    /* stacks are loaded ORDER BY id: direct when dense, else binary search */
    if (id >= 1 && (uint64_t)id <= p->nstacks && p->stacks[id - 1].id == id) return (uint32_t)(id - 1);
    size_t lo = 0, hi = p->nstacks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->stacks[mid].id < id) lo = mid + 1; else hi = mid;
    }
    return lo < p->nstacks && p->stacks[lo].id == id ? (uint32_t)lo : NONE;
}

int profile_load(const char *path, struct profile **out, char *err, size_t errlen)
{
    sqlite3 *db;
    *out = NULL;
    int rc = profile_open_db(path, &db, 0, err, errlen);
    if (rc) return rc;
    struct profile *p = xcalloc(1, sizeof *p);
    p->path = path;
    /* one read transaction: a recorder flushing meanwhile cannot make the
     * tables disagree with each other */
    struct loader l = { .db = db, .p = p, .err = err, .errlen = errlen };
    char *msg = NULL;
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK) {
        rc = fail(err, errlen, "not a mallocprof profile (%s)", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
    } else {
        rc = load_all(&l);
        sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    }
    if (sqlite3_close(db) != SQLITE_OK && !rc)
        rc = fail(err, errlen, "cannot close (%s)", sqlite3_errmsg(db));
    if (rc) { profile_free(p); return rc; }
    *out = p;
    return 0;
}

void profile_free(struct profile *p)
{
    if (!p) return;
    arena_free(&p->text);
    free(p->runs); free(p->procs); free(p->threads); free(p->modules);
    free(p->functions); free(p->files); free(p->frames); free(p->stacks);
    free(p->stack_order); free(p->snapshots); free(p->samples); free(p->totals); free(p->snapshot_total);
    free(p);
}
