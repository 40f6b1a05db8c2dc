/* --server URL: the runs a ClickHouse store holds (mpquery push,
 * schema/clickhouse.sql) read as one profile. ClickHouse does all the work
 * that grows with the number of runs: for every (run, process, stack,
 * thread) the row at the selected snapshot (argMax over seq), summed per
 * stack (GROUP BY its frame path); only the distinct paths come back, with
 * the frames they use (arrayJoin over the paths). mpquery makes of them a
 * profile of one process whose samples are those sums, and rules, tables
 * and outputs run on it as on a file: the rules see each distinct name once,
 * and the answers equal those of the same runs in SQLite files. info reads
 * the runs' small tables whole (processes, threads, snapshots, totals).
 *
 * Every query goes with readonly=1, so the server refuses anything that
 * writes, sets or reads outside its tables (table functions), whatever
 * --where holds; --where is also checked to be one expression (chselect.c:
 * the selection, the queries and their answers). */
#include "chquery.h"
#include "chstore.h"
#include "profile_link.h"
#include "schema_version.h"
#include "select.h"
#include "server.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- the aggregate profile */
#define NCOLS CH_NCOUNTERS
#define counter_of_col ch_counter_of_col

/* Parses "[1,2,3]" into ids. */
static int parse_array(const char *s, uint64_t **ids, size_t *n, size_t *cap)
{
    *n = 0;
    if (*s++ != '[') return -1;
    while (*s && *s != ']') {
        char *end;
        uint64_t v = strtoull(s, &end, 10);
        if (end == s) return -1;
        *ids = array_grow(*ids, *n, cap, sizeof **ids);
        (*ids)[(*n)++] = v;
        s = *end == ',' ? end + 1 : end;
    }
    return *s == ']' ? 0 : -1;
}

/* The loader's rows as profile.c would have read them from a file, so
 * that the profile links (profile_link.c) and is checked as any other. */
struct build {
    struct loader l;
    struct strtab modules, names, files;   /* module key "path\0build_id"; names; files */
    struct idmap frame_index;               /* frame hash → index in l.rframes */
    struct idmap nodes;                     /* (parent id << 32 | frame id) → stack id */
    struct idmap run_index, proc_id, thread_id, snapshot_id;
    struct strtab home_key;                 /* per --group key (one, "", without) where its */
    int64_t *home_snapshot, *home_thread;   /* sums hang (pick_homes) */
    struct { size_t runs, procs, threads, snapshots, totals, frames, stacks, modules, hists, homes; } cap;
    const struct server_opts *fast;         /* the window from the rollups (chwindow.c) */
};

static const char *keep(struct profile *p, const char *s) { return arena_strndup(&p->text, s, strlen(s)); }

/* One frame row of frames_sql. */
static void add_frame(struct build *b, const struct rows *r)
{
    struct profile *p = b->l.p;
    struct strbuf key = { 0 };
    sb_add(&key, r->f[1].s, r->f[1].len + 1);
    sb_add(&key, r->f[2].s, r->f[2].len);
    uint32_t m = strtab_intern(&b->modules, key.s, key.len);
    sb_free(&key);
    if (m == p->nmodules) {
        p->modules = array_grow(p->modules, p->nmodules, &b->cap.modules, sizeof *p->modules);
        p->modules[p->nmodules++] = (struct module){ .id = m + 1, .path = keep(p, r->f[1].s),
                                                      .build_id = keep(p, r->f[2].s) };
    }
    struct raw_frame *f = array_grow(b->l.rframes, b->l.nframes, &b->cap.frames, sizeof *f);
    b->l.rframes = f;
    f += b->l.nframes;
    *f = (struct raw_frame){ .id = (int64_t)b->l.nframes + 1, .module = m + 1, .offset = i64(r, 3),
                             .inline_depth = (int32_t)i64(r, 4), .line = (int32_t)i64(r, 7),
                             .function = -1, .file = -1 };
    if (r->f[5].len) f->function = strtab_intern(&b->names, r->f[5].s, r->f[5].len) + 1;
    if (r->f[6].len) f->file = strtab_intern(&b->files, r->f[6].s, r->f[6].len) + 1;
    int created;
    *idmap_put(&b->frame_index, u64(r, 0), &created) = (uint32_t)b->l.nframes++;
}

static void names_out(struct build *b, struct strtab *t, struct raw_name **out, size_t *n)
{
    *out = xmalloc(t->n * sizeof **out);
    for (size_t i = 0; i < t->n; i++)
        (*out)[i] = (struct raw_name){ (int64_t)i + 1, arena_strndup(&b->l.p->text, t->str[i], t->len[i]) };
    *n = t->n;
}

/* The stack node of (parent, frame index), made when new; its id. */
static int64_t stack_node(struct build *b, int64_t parent, uint32_t frame)
{
    int created;
    uint32_t *v = idmap_put(&b->nodes, (uint64_t)parent << 32 | (frame + 1), &created);
    if (!created) return *v;
    b->l.rstacks = array_grow(b->l.rstacks, b->l.nstacks, &b->cap.stacks, sizeof *b->l.rstacks);
    int64_t id = (int64_t)b->l.nstacks + 1;
    b->l.rstacks[b->l.nstacks++] = (struct raw_stack){ id, parent, frame + 1 };
    *v = (uint32_t)id;
    return id;
}

/* ---------------------------------------------------------------- the runs' small tables */
/* A load's id → its run's index (its position in the selection). */
static uint32_t run_index(const struct build *b, uint64_t run) { return idmap_get(&b->run_index, run); }

/* (run index, number within the load) as one key. */
static uint64_t in_run(uint32_t run, int64_t n) { return (uint64_t)run << 32 | (uint32_t)n; }

/* Runs a query and hands each row of nfields fields to row; 0, or the
 * exit code (a row of another shape: malformed, naming what). */
static int each_row(struct server *s, struct build *b, const struct strbuf *q, size_t nfields, const char *what,
                    void (*row)(struct build *b, const struct rows *r))
{
    int rc = ch_ask(s, q), got;
    if (rc) return rc;
    while ((got = ch_next_row(&s->rows, nfields)) == 1) row(b, &s->rows);
    return got < 0 ? ch_malformed(s, what) : 0;
}

/* The query of one of the runs' tables (CH_*): SELECT its columns, in the
 * order push writes them, FROM table of the selected runs. */
static int each_run_row(struct server *s, struct build *b, int table, void (*row)(struct build *b, const struct rows *r))
{
    struct strbuf q = { 0 };
    sb_puts(&q, "SELECT ");
    ch_columns(table, 0, &q);
    sb_printf(&q, " FROM %s WHERE run IN (%s)", ch_table_name[table], s->runs.s);
    if (b->fast && (table == CH_SNAPSHOT || table == CH_TOTALS)) ch_window_snapshots_sql(b->fast, s->runs.s, &q);
    sb_puts(&q, " FORMAT TabSeparated");
    int rc = each_row(s, b, &q, (size_t)ch_ncolumns(table), ch_table_name[table], row);
    sb_free(&q);
    return rc;
}

static void *push_row(void **arr, size_t *n, size_t *cap, size_t size)
{
    *arr = array_grow(*arr, *n, cap, size);
    return (char *)*arr + (*n)++ * size;
}

/* Runs in order of start: the profile's run ids, as a merge numbers them. */
static void run_row(struct build *b, const struct rows *r)
{
    struct profile *p = b->l.p;
    int created;
    *idmap_put(&b->run_index, u64(r, 0), &created) = (uint32_t)p->nruns;
    struct run *run = push_row((void **)&p->runs, &p->nruns, &b->cap.runs, sizeof *run);
    *run = (struct run){ (int64_t)p->nruns, keep(p, r->f[1].s), f64(r, 2) };
}

/* Processes and threads get their ids in (run, number) order once all
 * are read (number_rows): ClickHouse's row order changes as parts merge,
 * the ids must not. Until then id holds the number within the load and
 * run_id / the raw process field the run's index. */
static void process_row(struct build *b, const struct rows *r)
{
    struct profile *p = b->l.p;
    uint32_t run = run_index(b, u64(r, 0));
    if (run == NONE) return;
    struct process *pr = push_row((void **)&p->procs, &p->nprocs, &b->cap.procs, sizeof *pr);
    *pr = (struct process){
        .id = i64(r, 1), .run_id = run, .pid = i64(r, 2), .ppid = i64(r, 3),
        .exe = keep(p, r->f[4].s), .cmdline = keep(p, r->f[5].s), .host = keep(p, r->f[6].s),
        .start_time = f64(r, 7), .end_time = f64(r, 8), .settings = keep(p, r->f[9].s),
        .ended = keep(p, r->f[10].s) };
}

static void thread_row(struct build *b, const struct rows *r)
{
    uint32_t run = run_index(b, u64(r, 0));
    if (run == NONE) return;
    struct raw_thread *t = push_row((void **)&b->l.rthreads, &b->l.nthreads, &b->cap.threads, sizeof *t);
    *t = (struct raw_thread){
        .t = { .id = i64(r, 2), .seq = i64(r, 3), .tid = i64(r, 4), .name = keep(b->l.p, r->f[5].s),
               .process = run },
        .process = i64(r, 1) };
}

static int cmp_process(const void *x, const void *y)
{
    const struct process *a = x, *b = y;
    if (a->run_id != b->run_id) return a->run_id < b->run_id ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int cmp_thread(const void *x, const void *y)
{
    const struct raw_thread *a = x, *b = y;
    if (a->t.process != b->t.process) return a->t.process < b->t.process ? -1 : 1;
    return (a->t.id > b->t.id) - (a->t.id < b->t.id);
}

/* Ids 1..n in (run, number) order, and the maps from (run, number) to them. */
static void number_rows(struct build *b)
{
    struct profile *p = b->l.p;
    int created;
    if (p->nprocs) qsort(p->procs, p->nprocs, sizeof *p->procs, cmp_process);
    for (size_t i = 0; i < p->nprocs; i++) {
        struct process *pr = &p->procs[i];
        *idmap_put(&b->proc_id, in_run((uint32_t)pr->run_id, pr->id), &created) = (uint32_t)i + 1;
        pr->id = (int64_t)i + 1;
        pr->run_id++;
    }
    if (b->l.nthreads) qsort(b->l.rthreads, b->l.nthreads, sizeof *b->l.rthreads, cmp_thread);
    for (size_t i = 0; i < b->l.nthreads; i++) {
        struct raw_thread *t = &b->l.rthreads[i];
        uint32_t run = t->t.process;
        *idmap_put(&b->thread_id, in_run(run, t->t.id), &created) = (uint32_t)i + 1;
        t->t.id = (int64_t)i + 1;
        uint32_t proc = idmap_get(&b->proc_id, in_run(run, t->process));
        t->process = proc == NONE ? -1 : (int64_t)proc;
    }
}

static void snapshot_row(struct build *b, const struct rows *r)
{
    uint32_t run = run_index(b, u64(r, 0));
    if (run == NONE) return;
    struct raw_snapshot *sn = push_row((void **)&b->l.rsnapshots, &b->l.nsnapshots, &b->cap.snapshots, sizeof *sn);
    *sn = (struct raw_snapshot){
        .s = { .seq = i64(r, 2), .time = f64(r, 3), .reason = keep(b->l.p, r->f[4].s),
               .label = keep(b->l.p, r->f[5].s), .profiler_memory = i64(r, 6) },
        .process = idmap_get(&b->proc_id, in_run(run, i64(r, 1))) };
}

static int cmp_snapshot(const void *x, const void *y)
{
    const struct raw_snapshot *a = x, *b = y;
    if (a->process != b->process) return a->process < b->process ? -1 : 1;
    return (a->s.seq > b->s.seq) - (a->s.seq < b->s.seq);
}

/* Snapshots in (process, seq) order, ids in that order too: the chain
 * rule needs ids that grow with seq within a process. */
static void number_snapshots(struct build *b)
{
    if (b->l.nsnapshots) qsort(b->l.rsnapshots, b->l.nsnapshots, sizeof *b->l.rsnapshots, cmp_snapshot);
    for (size_t i = 0; i < b->l.nsnapshots; i++) {
        struct raw_snapshot *sn = &b->l.rsnapshots[i];
        sn->s.id = (int64_t)i + 1;
        int created;
        *idmap_put(&b->snapshot_id, (uint64_t)sn->process << 32 | (uint32_t)sn->s.seq, &created) = (uint32_t)i + 1;
    }
}

/* A reference that does not resolve stays NONE: link_totals reports a
 * missing snapshot, and skips a missing thread (as for a file). */
static void total_row(struct build *b, const struct rows *r)
{
    uint32_t run = run_index(b, u64(r, 0));
    if (run == NONE) return;
    uint32_t proc = idmap_get(&b->proc_id, in_run(run, i64(r, 1)));
    uint32_t snapshot = proc == NONE ? NONE : idmap_get(&b->snapshot_id, (uint64_t)proc << 32 | (uint32_t)i64(r, 2));
    uint32_t thread = i64(r, 3) == 0 ? 0 : idmap_get(&b->thread_id, in_run(run, i64(r, 3)));
    struct raw_total *t = push_row((void **)&b->l.rtotals, &b->l.ntotals, &b->cap.totals, sizeof *t);
    *t = (struct raw_total){ .snapshot = snapshot == NONE ? 0 : snapshot, .thread = thread == NONE ? -1 : (int64_t)thread };
    static const int cols[] = { NCALLS, MEMTOT, NFREE, MEMLIVE, MAXLIVE };
    for (int i = 0; i < 5; i++) t->t.c.v[cols[i]] = i64(r, 4 + (size_t)i);
    t->t.ncalls_nostack = i64(r, 9);
    t->t.memtot_nostack = i64(r, 10);
    t->t.nfree_unknown = i64(r, 11);
}

/* A size histogram row at its snapshot: snapshots are numbered 1..n in
 * the order of the profile's (number_snapshots). */
static void hist_row(struct build *b, const struct rows *r)
{
    struct profile *p = b->l.p;
    uint32_t run = run_index(b, u64(r, 0));
    uint32_t proc = run == NONE ? NONE : idmap_get(&b->proc_id, in_run(run, i64(r, 1)));
    uint32_t snapshot = proc == NONE ? NONE : idmap_get(&b->snapshot_id, (uint64_t)proc << 32 | (uint32_t)i64(r, 2));
    if (snapshot == NONE) return;
    struct hist_row *h = push_row((void **)&p->hists, &p->nhists, &b->cap.hists, sizeof *h);
    *h = (struct hist_row){ snapshot - 1, i64(r, 3), { i64(r, 4), i64(r, 5), i64(r, 6), i64(r, 7) } };
}

/* The runs' small tables as they are, in the loader's raw rows. */
static int load_runs(struct server *s, struct build *b)
{
    struct strbuf q = { 0 };
    sb_printf(&q, "SELECT run, token, start_time FROM mp_runs WHERE run IN (%s) ORDER BY start_time, token"
                  " FORMAT TabSeparated", s->runs.s);
    int rc = each_row(s, b, &q, 3, "mp_runs", run_row);
    sb_free(&q);
    if (!rc && !b->l.p->nruns) {
        snprintf(s->err, s->errlen, "%s: no run in the store matches %s (see mpquery info --server %s)",
                 s->ch.url, s->what, s->ch.url);
        return EXIT_BAD_INPUT;
    }
    if (!rc) rc = each_run_row(s, b, CH_PROCESS, process_row);
    if (!rc) rc = each_run_row(s, b, CH_THREAD, thread_row);
    if (rc) return rc;
    number_rows(b);
    rc = each_run_row(s, b, CH_SNAPSHOT, snapshot_row);
    if (rc) return rc;
    number_snapshots(b);
    return each_run_row(s, b, CH_TOTALS, total_row);
}

/* Where the sums hang: per --group key (without: for all), the first
 * process of it that has the selected kind of snapshot (its last, or its
 * peak), at that snapshot, on its first thread. Selections then take them
 * as they take a file's rows, and --group's views find them in their
 * group. */
static int64_t last_of_kind(const struct loader *l, size_t i, int peak)
{
    size_t j = i;
    for (size_t k = i + 1; k < l->nsnapshots && l->rsnapshots[k].process == l->rsnapshots[i].process; k++)
        if ((strcmp(l->rsnapshots[k].s.reason, "peak") == 0) == peak) j = k;
    return l->rsnapshots[j].s.id;
}

static int pick_homes(struct build *b, int peak, int by, char *err, size_t errlen)
{
    const struct loader *l = &b->l;
    struct strbuf key = { 0 };
    sb_puts(&key, "");
    for (size_t i = 0; i < l->nsnapshots; i++) {
        const struct raw_snapshot *sn = &l->rsnapshots[i];
        if ((strcmp(sn->s.reason, "peak") == 0) != peak || sn->process == NONE) continue;
        if (by) group_key(&b->l.p->procs[sn->process - 1], by, &key);
        if (strtab_find(&b->home_key, key.s, key.len) != NONE) continue;
        int64_t thread = 0;
        for (size_t t = 0; t < l->nthreads && !thread; t++)
            if (l->rthreads[t].process == sn->process) thread = l->rthreads[t].t.id;
        if (!thread) continue;
        size_t k = strtab_intern(&b->home_key, key.s, key.len);
        b->home_snapshot = array_grow(b->home_snapshot, k, &b->cap.homes, sizeof *b->home_snapshot);
        b->home_thread = xrealloc(b->home_thread, b->cap.homes * sizeof *b->home_thread);
        b->home_snapshot[k] = last_of_kind(l, i, peak);
        b->home_thread[k] = thread;
    }
    sb_free(&key);
    if (b->home_key.n) return 0;
    snprintf(err, errlen, "%s: no %s in the selected runs", b->l.p->path, peak ? "peak snapshot (recorded before format version 3?)"
                                                             : "process with a snapshot and a thread");
    return EXIT_BAD_INPUT;
}

static int load_frames(struct server *s, struct build *b)
{
    struct strbuf q = { 0 };
    ch_frames_sql(s, b->fast != NULL, &q);
    int rc = each_row(s, b, &q, 8, "frames", add_frame);
    sb_free(&q);
    if (rc) return rc;
    names_out(b, &b->names, &b->l.rfunctions, &b->l.nfunctions);
    names_out(b, &b->files, &b->l.rfiles, &b->l.nfiles);
    return 0;
}

/* The stacks' rows: their paths into the stack tree, their sums into
 * raw samples of their home's thread (converted once the tree is linked). */
static int load_stacks(struct server *s, const struct server_opts *o, struct build *b, int peak,
                       struct raw_sample **raws, size_t *nraws)
{
    struct strbuf q = { 0 };
    if (b->fast) ch_window_stacks_sql(o, &q);
    else ch_stacks_sql(s, o, peak, &q);
    int rc = ch_ask(s, &q), got;
    sb_free(&q);
    if (rc) return rc;
    uint64_t *path = NULL;
    size_t n, cap = 0, cap_raws = 0, g = o->group_by != 0;
    while ((got = ch_next_row(&s->rows, 2 + g + NCOLS)) == 1) {
        if (parse_array(s->rows.f[1 + g + NCOLS].s, &path, &n, &cap) || n == 0) { got = -1; break; }
        uint32_t home = strtab_find(&b->home_key, g ? s->rows.f[1].s : "", g ? s->rows.f[1].len : 0);
        int64_t node = home == NONE ? -1 : 0;
        for (size_t i = 0; i < n && node >= 0; i++) {
            uint32_t f = idmap_get(&b->frame_index, path[i]);
            node = f == NONE ? -1 : stack_node(b, node, f);
        }
        if (node < 0) { got = -1; break; }
        *raws = array_grow(*raws, *nraws, &cap_raws, sizeof **raws);
        struct raw_sample *raw = &(*raws)[(*nraws)++];
        *raw = (struct raw_sample){ .snapshot = b->home_snapshot[home], .stack = node, .thread = b->home_thread[home] };
        for (int i = 0; i < NCOLS; i++) raw->c.v[counter_of_col[i]] = i64(&s->rows, 1 + g + (size_t)i);
    }
    free(path);
    return got < 0 ? ch_malformed(s, "stacks") : 0;
}

/* The rows as a file would hold them, linked as profile.c links a file's. */
static int link_rows(struct build *b, const struct raw_sample *raws, size_t nraws)
{
    struct profile *p = b->l.p;
    int rc = link_dictionaries(&b->l);
    if (rc) return rc;
    p->samples = xmalloc(nraws * sizeof *p->samples);
    for (size_t i = 0; i < nraws && !b->l.bad_ref; i++) convert_sample(&b->l, &raws[i], &p->samples[p->nsamples++]);
    if (b->l.bad_ref) return EXIT_FAILED;
    link_recorded(p);
    return link_totals(&b->l);
}

/* flags: PROFILE_PEAK_ROWS: the sums at each process's peak (else its
 * last snapshot); PROFILE_HISTS: the size histograms of the runs' processes
 * too (table mp_hist). */
int server_load(const struct server_opts *o, int side, int flags, struct profile **out, char *err, size_t errlen)
{
    int peak = flags & PROFILE_PEAK_ROWS;
    struct server s;
    *out = NULL;
    int rc = ch_server_open(&s, o, side, err, errlen);
    struct profile *p = xcalloc(1, sizeof *p);
    p->path = keep(p, s.ch.url ? s.ch.url : o->url);    /* with the password masked (ch_open) */
    p->version = SCHEMA_VERSION;
    p->aggregate = 1;
    struct build b = { .l = { .p = p, .err = err, .errlen = errlen, .window = o->win_since || o->win_until } };
    strtab_init(&b.modules);
    strtab_init(&b.names);
    strtab_init(&b.files);
    strtab_init(&b.home_key);
    idmap_init(&b.frame_index, 1024);
    idmap_init(&b.nodes, 1024);
    idmap_init(&b.run_index, 64);
    idmap_init(&b.proc_id, 64);
    idmap_init(&b.thread_id, 64);
    idmap_init(&b.snapshot_id, 64);
    struct raw_sample *raws = NULL;
    size_t nraws = 0;
    if (!rc && ch_window_fast(&s, o, side, peak)) b.fast = o;
    if (!rc) rc = load_runs(&s, &b);
    if (!rc) rc = pick_homes(&b, peak, o->group_by, err, errlen);
    if (!rc) rc = load_frames(&s, &b);
    if (!rc) rc = load_stacks(&s, o, &b, peak, &raws, &nraws);
    if (!rc) rc = link_rows(&b, raws, nraws);
    if (!rc && (flags & PROFILE_HISTS)) rc = each_run_row(&s, &b, CH_HIST, hist_row);
    free(raws);
    ch_server_close(&s);
    strtab_free(&b.modules);
    strtab_free(&b.names);
    strtab_free(&b.files);
    strtab_free(&b.home_key);
    free(b.home_snapshot);
    free(b.home_thread);
    idmap_free(&b.frame_index);
    idmap_free(&b.nodes);
    idmap_free(&b.run_index);
    idmap_free(&b.proc_id);
    idmap_free(&b.thread_id);
    idmap_free(&b.snapshot_id);
    loader_free(&b.l);
    if (rc) { profile_free(p); return rc; }
    p->latest_runs = xmalloc(p->nruns);
    memset(p->latest_runs, 1, p->nruns);     /* every run, unless --where... chose fewer */
    *out = p;
    return 0;
}
