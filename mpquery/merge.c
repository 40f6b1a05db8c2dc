/* The mechanism of mpquery merge and of several databases read as one:
 * profile databases into one new database of the current format that
 * answers every query as the inputs taken together (merge_build). Each
 * input is read once, in one read transaction, by profile.c's loader (so
 * every format version reads with its defaults, and untrusted files are
 * checked as everywhere), with its hist, stack_hist and tick rows; ids
 * are mapped with arrays per input and with tables by content across
 * inputs, and rows are written with prepared statements in ONE
 * transaction of an output file the caller created empty. What must stay
 * true:
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
 *    largest id is the latest started.
 * merge_out.c writes the output. */
#include "merge_impl.h"
#include "ledger.h"         /* the ledger rows (PROFILE_LEDGER) */
#include "hash.h"           /* tag_offset: a [tag] frame's offset, as the recorder writes it */
#include "merge.h"
#include "tempfile.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* Interns key into t; *created when it is new. Returns its id (0-based). */
uint32_t merge_intern(struct strtab *t, const void *key, size_t len, int *created)
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
    uint32_t id = merge_intern(&m->proc_keys, k.s, k.len, created);
    sb_free(&k);
    if (*created) {
        m->kept = array_grow(m->kept, id, &m->kept_cap, sizeof *m->kept);
        m->kept[id].input = -1;
    }
    return id;
}

/* The first pass: per process key, the copy with the most non-peak
 * snapshots. Also proves every input readable before anything is written. */
static int merge_choose_copies(struct merge *m, size_t input)
{
    static const char sql[] =
        "SELECT r.token, p.pid, p.start_time, p.id,"
        " (SELECT count(*) FROM snapshot s WHERE s.process = p.id AND s.reason != 'peak')"
        " FROM process p JOIN run r ON r.id = p.run";
    const char *path = m->inputs[input];
    char why[4400];
    sqlite3 *db;
    int rc = profile_open_db(path, &db, 0, why, sizeof why);
    if (rc) return merge_fail(m, rc, "%s: %s", path, why);
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
    if (rc != SQLITE_DONE) merge_fail(m, EXIT_BAD_INPUT, "%s: not a mallocprof profile (%s)", path, sqlite3_errmsg(db));
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
        uint32_t g = merge_intern(&m->tokens, p->runs[r].token, strlen(p->runs[r].token), &created);
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
            PUT(m, snapshot, [C(snapshot, id)] = I(in->snapshot[j]), [C(snapshot, process)] = I(in->proc[i]),
                [C(snapshot, seq)] = I(sn->seq), [C(snapshot, time)] = R(sn->time),
                [C(snapshot, reason)] = S(sn->reason), [C(snapshot, label)] = S(sn->label),
                [C(snapshot, profiler_memory)] = I(sn->profiler_memory));
        }
        for (uint32_t j = pr->first_tick; j < pr->first_tick + pr->nticks; j++) {
            const struct tick *tk = &p->ticks[j];
            PUT(m, tick, [C(tick, process)] = I(in->proc[i]), [C(tick, time)] = R(tk->time),
                [C(tick, ncalls)] = I(tk->ncalls), [C(tick, memtot)] = I(tk->memtot),
                [C(tick, memlive)] = I(tk->memlive), [C(tick, rss)] = I(tk->rss), [C(tick, mapped)] = I(tk->mapped));
        }
    }
    for (size_t t = 0; t < p->nthreads; t++) {
        const struct thread *th = &p->threads[t];
        if (!in->proc[th->process]) continue;
        in->thread[t] = ++m->nthreads;
        PUT(m, thread, [C(thread, id)] = I(in->thread[t]), [C(thread, process)] = I(in->proc[th->process]),
            [C(thread, seq)] = I(th->seq), [C(thread, tid)] = I(th->tid), [C(thread, name)] = S(th->name));
    }
}

/* ---------------------------------------------------------------- dictionaries */
/* A name of a dictionary (function, file): its id, inserted when new. */
_Static_assert(FC_function_N == 2 && FC_file_N == 2 && (int)C(file, id) == (int)C(function, id) &&
               (int)C(file, path) == (int)C(function, name),
               "function and file rows are alike: (id, text)");
static uint32_t name_id(struct merge *m, struct strtab *t, int table, const char *name)
{
    int created;
    uint32_t id = merge_intern(t, name, strlen(name), &created) + 1;
    if (created) merge_put(m, table, (const struct val[FC_function_N]){ [C(function, id)] = I(id), [C(function, name)] = S(name) });
    return id;
}

static uint32_t module_id(struct merge *m, const struct module *mod)
{
    struct strbuf k = { 0 };
    sb_add(&k, mod->path, strlen(mod->path) + 1);
    sb_puts(&k, mod->build_id);
    int created;
    uint32_t id = merge_intern(&m->modules, k.s, k.len, &created) + 1;
    sb_free(&k);
    if (created) PUT(m, module, [C(module, id)] = I(id), [C(module, path)] = S(mod->path),
                     [C(module, build_id)] = S(mod->build_id));
    return id;
}

/* The frame (module, offset, inline_depth); *created when new. */
static uint32_t frame_id(struct merge *m, uint32_t module, int64_t offset, int32_t depth, int *created)
{
    struct { uint32_t module; int32_t depth; int64_t offset; } k = { module, depth, offset };
    uint32_t id = merge_intern(&m->frame_keys, &k, sizeof k, created);
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
        merge_fail(m, EXIT_FAILED, "%s: more than %u stacks", m->out_path, UINT32_MAX - 3);
        return 0;
    }
    uint32_t id = ++m->nstacks;
    m->stack_input = array_grow(m->stack_input, id, &m->stacks_cap, sizeof *m->stack_input);
    m->stack_input[id] = (int32_t)m->cur;
    merge_stack_node(m, id, parent, frame);
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
    for (size_t i = 0; i < p->nfunctions; i++) in->function[i] = name_id(m, &m->functions, FT_function, p->functions[i]);
    for (size_t i = 0; i < p->nfiles; i++) in->file[i] = name_id(m, &m->paths, FT_file, p->files[i]);
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
        PUT(m, sample, [C(sample, snapshot)] = I(snapshot), [C(sample, stack)] = I(in->stack[sa->stack]),
            [C(sample, thread)] = I(thread), [C(sample, ncalls)] = I(v[NCALLS]), [C(sample, memtot)] = I(v[MEMTOT]),
            [C(sample, nfree)] = I(v[NFREE]), [C(sample, memlive)] = I(v[MEMLIVE]),
            [C(sample, maxlive)] = I(v[MAXLIVE]), [C(sample, ntemp)] = I(v[NTEMP]), [C(sample, time)] = I(v[TIME]),
            [C(sample, nmap)] = I(v[NMAP]), [C(sample, mapped)] = I(v[MAPPED]),
            [C(sample, maxmapped)] = I(v[MAXMAPPED]), [C(sample, rss)] = I(v[RSS]),
            [C(sample, memcold)] = I(v[MEMCOLD]), [C(sample, coldage)] = I(v[COLDAGE]));
        m->nsamples++;
    }
    free(rows);
    for (size_t i = 0; i < p->ntotals && !m->rc; i++) {
        const struct total *t = &p->totals[i];
        int64_t snapshot = in->snapshot[t->snapshot], thread = t->thread == NONE ? 0 : in->thread[t->thread];
        if (!snapshot || (t->thread != NONE && !thread)) continue;
        PUT(m, totals, [C(totals, snapshot)] = I(snapshot), [C(totals, thread)] = I(thread),
            [C(totals, ncalls)] = I(t->c.v[NCALLS]), [C(totals, memtot)] = I(t->c.v[MEMTOT]),
            [C(totals, nfree)] = I(t->c.v[NFREE]), [C(totals, memlive)] = I(t->c.v[MEMLIVE]),
            [C(totals, maxlive)] = I(t->c.v[MAXLIVE]), [C(totals, ncalls_nostack)] = I(t->ncalls_nostack),
            [C(totals, memtot_nostack)] = I(t->memtot_nostack), [C(totals, nfree_unknown)] = I(t->nfree_unknown));
    }
}

/* The hist and stack_hist rows (loaded with PROFILE_HISTS) and the ledger
 * (PROFILE_LEDGER). Rows of snapshots, stacks or threads the file does not
 * have are never read by a query: left out. */
static void copy_hists(struct merge *m, const struct input *in)
{
    const struct profile *p = in->p;
    for (size_t i = 0; i < p->nledger && !m->rc; i++) {
        const struct ledger_row *r = &p->ledger[i];
        if (r->snapshot == NONE || !in->snapshot[r->snapshot]) continue;
        PUT(m, ledger, [C(ledger, snapshot)] = I(in->snapshot[r->snapshot]), [C(ledger, line)] = S(r->line),
            [C(ledger, bytes)] = I(r->bytes), [C(ledger, size)] = I(r->size));
    }
    for (size_t i = 0; i < p->nhists && !m->rc; i++) {
        const struct hist_row *h = &p->hists[i];
        if (h->snapshot == NONE || !in->snapshot[h->snapshot]) continue;
        PUT(m, hist, [C(hist, snapshot)] = I(in->snapshot[h->snapshot]), [C(hist, lo)] = I(h->lo),
            [C(hist, ncalls)] = I(h->v[H_NCALLS]), [C(hist, memtot)] = I(h->v[H_MEMTOT]),
            [C(hist, nlive)] = I(h->v[H_NLIVE]), [C(hist, memlive)] = I(h->v[H_MEMLIVE]));
    }
    for (size_t i = 0; i < p->nstack_hists && !m->rc; i++) {
        const struct stack_hist_row *h = &p->stack_hists[i];
        if (h->snapshot == NONE || h->stack == NONE || h->thread == NONE || !in->snapshot[h->snapshot] ||
            !in->thread[h->thread])
            continue;
        PUT(m, stack_hist, [C(stack_hist, snapshot)] = I(in->snapshot[h->snapshot]),
            [C(stack_hist, stack)] = I(in->stack[h->stack]), [C(stack_hist, thread)] = I(in->thread[h->thread]),
            [C(stack_hist, lo)] = I(h->lo), [C(stack_hist, ncalls)] = I(h->v[H_NCALLS]),
            [C(stack_hist, memtot)] = I(h->v[H_MEMTOT]), [C(stack_hist, nlive)] = I(h->v[H_NLIVE]),
            [C(stack_hist, memlive)] = I(h->v[H_MEMLIVE]));
    }
}

/* profile_load_more's callback: the input, loaded, into the output. */
static int merge_copy_input(void *ctx, sqlite3 *db, struct profile *p)
{
    (void)db;
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
    if (!m->rc) copy_hists(m, &in);
    merge_flush_all(m);                       /* the rows point into the profile */
    free(in.run); free(in.proc); free(in.thread); free(in.snapshot); free(in.module); free(in.function);
    free(in.file); free(in.frame); free(in.stack);
    return m->rc;
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
    for (size_t i = 0; i < n && !m.rc; i++) merge_choose_copies(&m, i);
    if (!m.rc) merge_open_output(&m);
    for (m.cur = 0; m.cur < n && !m.rc; m.cur++) {
        struct profile *p;
        char why[4400];
        int rc = profile_load_more(inputs[m.cur], (peak_rows & PROFILE_PEAK_ROWS) | PROFILE_HISTS | PROFILE_LEDGER, &p, merge_copy_input, &m,
                                   why, sizeof why);
        if (rc) merge_fail(&m, rc, "%s: %s", inputs[m.cur], why);
        profile_free(p);
    }
    if (!m.rc) merge_finish(&m, st);
    merge_free(&m);
    st->files = m.files;
    st->nfiles = n;
    if (m.rc) merge_stats_free(st);
    return m.rc;
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
