/* The writing side of mallocprof's ClickHouse store (schema/clickhouse.sql;
 * its statements and the tables' columns: chschema.c): frames and stacks get content addresses (FNV-1a 64) so that
 * every run and file shares them, and a run becomes rows (RowBinary),
 * table by table, sent in INSERTs of a few MB. Invariant: a run's mp_run row
 * is sent only by ch_commit, after every other row built before it, so a
 * reader that starts from mp_runs never sees part of a run. */
#include "chstore.h"
#include "hash.h"
#include "hists.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- content addresses */
/* v as `bytes` bytes, little-endian */
static inline uint64_t fnv_le(uint64_t h, uint64_t v, int bytes)
{
    unsigned char le[8];
    for (int i = 0; i < bytes; i++, v >>= 8) le[i] = (unsigned char)(v & 0xff);
    return fnv1a_more(h, le, (size_t)bytes);
}

/* The hash of a module's part of its frames' ids: path, NUL, build id, NUL. */
static uint64_t module_prefix(const struct module *m)
{
    uint64_t h = fnv1a_more(FNV_BASIS, m->path, strlen(m->path) + 1);
    return fnv1a_more(h, m->build_id, strlen(m->build_id) + 1);
}

/* A frame's id from its module's prefix (module_prefix, or unused for a tag). */
static uint64_t frame_id(const struct profile *p, const struct frame *f, uint64_t prefix)
{
    if (module_is_tag(&p->modules[f->module])) {
        const char *name = f->function == NONE ? "" : p->functions[f->function];
        return fnv1a_more(fnv1a_more(FNV_BASIS, "[tag]", 6), name, strlen(name));
    }
    return fnv_le(fnv_le(prefix, (uint64_t)f->offset, 8), (uint32_t)f->inline_depth, 4);
}

uint64_t ch_frame_id(const struct profile *p, uint32_t frame)
{
    const struct frame *f = &p->frames[frame];
    return frame_id(p, f, module_prefix(&p->modules[f->module]));
}

uint64_t ch_stack_id(const uint64_t *frames, size_t n)
{
    uint64_t h = FNV_BASIS;
    for (size_t i = 0; i < n; i++) h = fnv_le(h, frames[i], 8);
    return h;
}

/* 64 random bits (getrandom; /dev/urandom when it is missing) */
static uint64_t random_run_id(void)
{
    uint64_t v = 0;
    ssize_t n;
    while ((n = getrandom(&v, sizeof v, 0)) < 0 && errno == EINTR) {}
    if (n == (ssize_t)sizeof v) return v;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &v, sizeof v) != (ssize_t)sizeof v) v = 0;
        close(fd);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return v ? v : hash_bytes(&ts, sizeof ts) ^ ((uint64_t)getpid() << 32);
}

/* ---------------------------------------------------------------- a profile's sources */
/* Indexes 0..n grouped by key (< nkeys), stable: order[start[k] .. start[k+1]) */
static void group_by(size_t n, size_t nkeys, uint32_t (*key)(const struct profile *, size_t),
                     const struct profile *p, uint32_t **order, uint32_t **start)
{
    uint32_t *s = xcalloc(nkeys + 2, sizeof *s), *o = xmalloc(n * sizeof *o);
    for (size_t i = 0; i < n; i++) s[key(p, i) + 2]++;
    for (size_t k = 2; k < nkeys + 2; k++) s[k] += s[k - 1];
    for (size_t i = 0; i < n; i++) o[s[key(p, i) + 1]++] = (uint32_t)i;
    *order = o;
    *start = s;
}

static uint32_t sample_run(const struct profile *p, size_t i)
{
    return p->procs[p->snapshots[p->samples[i].snapshot].process].run;
}

static uint32_t total_run(const struct profile *p, size_t i)
{
    return p->procs[p->snapshots[p->totals[i].snapshot].process].run;
}

static uint32_t hist_run(const struct profile *p, size_t i)
{
    uint32_t sn = p->hists[i].snapshot;
    return sn == NONE ? (uint32_t)p->nruns : p->procs[p->snapshots[sn].process].run;
}

static uint32_t stack_hist_run(const struct profile *p, size_t i)
{
    const struct stack_hist_row *h = &p->stack_hists[i];
    if (h->snapshot == NONE || h->stack == NONE || h->thread == NONE) return (uint32_t)p->nruns;
    return p->procs[p->snapshots[h->snapshot].process].run;
}

void ch_source_init(struct ch_source *s, const struct profile *p, const char *source)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    s->source = source;
    uint64_t *prefix = xmalloc(p->nmodules * sizeof *prefix);
    for (size_t m = 0; m < p->nmodules; m++) prefix[m] = module_prefix(&p->modules[m]);
    s->frame_id = xmalloc(p->nframes * sizeof *s->frame_id);
    for (size_t f = 0; f < p->nframes; f++)
        s->frame_id[f] = frame_id(p, &p->frames[f], prefix[p->frames[f].module]);
    free(prefix);
    /* FNV-1a runs through the frames root first: a stack's hash continues
     * its parent's (parents come first in stack_order) */
    s->stack_id = xmalloc(p->nstacks * sizeof *s->stack_id);
    for (size_t k = 0; k < p->nstacks; k++) {
        uint32_t i = p->stack_order[k];
        const struct stack *st = &p->stacks[i];
        uint64_t h = st->parent == NONE ? FNV_BASIS : s->stack_id[st->parent];
        s->stack_id[i] = fnv_le(h, s->frame_id[st->frame], 8);
    }
    group_by(p->nsamples, p->nruns, sample_run, p, &s->sample_order, &s->sample_start);
    group_by(p->ntotals, p->nruns, total_run, p, &s->total_order, &s->total_start);
    group_by(p->nhists, p->nruns + 1, hist_run, p, &s->hist_order, &s->hist_start);
    group_by(p->nstack_hists, p->nruns + 1, stack_hist_run, p, &s->shist_order, &s->shist_start);
    uint32_t *count = xcalloc(p->nruns, sizeof *count);
    s->pnum = xmalloc(p->nprocs * sizeof *s->pnum);
    for (size_t i = 0; i < p->nprocs; i++) s->pnum[i] = ++count[p->procs[i].run];
    memset(count, 0, p->nruns * sizeof *count);
    s->tnum = xmalloc(p->nthreads * sizeof *s->tnum);
    for (size_t i = 0; i < p->nthreads; i++) s->tnum[i] = ++count[p->procs[p->threads[i].process].run];
    free(count);
    s->stack_mark = xcalloc(p->nstacks, sizeof *s->stack_mark);
}

void ch_source_free(struct ch_source *s)
{
    free(s->frame_id); free(s->stack_id);
    free(s->sample_order); free(s->sample_start);
    free(s->total_order); free(s->total_start);
    free(s->hist_order); free(s->hist_start); free(s->shist_order); free(s->shist_start);
    free(s->pnum); free(s->tnum); free(s->stack_mark);
    memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------- a run's rows */
/* The store has snapshot sn's rows in table t (ch_source.skip_snapshot). */
#define stored(s, sn, t) ((s)->skip_snapshot && ((s)->skip_snapshot[sn] & (1u << (t))))

/* Bytes built so far, sent or not. */
static uint64_t built(const struct ch_writer *w)
{
    uint64_t n = w->bytes;
    for (int t = 0; t < CH_NTABLES; t++) n += w->buf[t].len;
    return n;
}

/* mp_process, mp_thread and mp_snapshot rows; *first: the run's first
 * process (the lowest id: process 1), NONE without one. */
static int process_rows(struct ch_writer *w, const struct ch_source *s, uint32_t r, struct ch_load *load,
                        uint32_t *first, char *err, size_t errlen)
{
    const struct profile *p = s->p;
    struct ch_row *o = &w->row;
    int rc = 0;
    for (size_t i = 0; i < p->nprocs && !rc; i++) {
        const struct process *pr = &p->procs[i];
        if (pr->run != r) continue;
        if (*first == NONE) *first = (uint32_t)i;
        load->processes++;
        if (s->skip_process && s->skip_process[i]) continue;
        ch_u64(o, load->run); ch_u32(o, s->pnum[i]); ch_i64(o, pr->pid); ch_i64(o, pr->ppid);
        ch_str(o, pr->exe); ch_str(o, pr->cmdline); ch_str(o, pr->host);
        ch_f64(o, pr->start_time); ch_f64(o, pr->end_time < 0 ? -1 : pr->end_time);
        ch_str(o, pr->settings); ch_str(o, pr->ended);
        rc = ch_row_done(w, CH_PROCESS, err, errlen);
    }
    for (size_t i = 0; i < p->nthreads && !rc; i++) {
        const struct thread *t = &p->threads[i];
        if (p->procs[t->process].run != r || (s->skip_thread && s->skip_thread[i])) continue;
        ch_u64(o, load->run); ch_u32(o, s->pnum[t->process]); ch_u32(o, s->tnum[i]);
        ch_i64(o, t->seq); ch_i64(o, t->tid); ch_str(o, t->name);
        rc = ch_row_done(w, CH_THREAD, err, errlen);
    }
    for (size_t i = 0; i < p->nsnapshots && !rc; i++) {
        const struct snapshot *sn = &p->snapshots[i];
        if (p->procs[sn->process].run != r) continue;
        load->snapshots += !sn->peak;
        if (stored(s, (uint32_t)i, CH_SNAPSHOT)) continue;
        ch_u64(o, load->run); ch_u32(o, s->pnum[sn->process]); ch_u32(o, (uint64_t)sn->seq);
        ch_f64(o, sn->time); ch_str(o, sn->reason); ch_str(o, sn->label); ch_i64(o, sn->profiler_memory);
        rc = ch_row_done(w, CH_SNAPSHOT, err, errlen);
    }
    return rc;
}

static int totals_rows(struct ch_writer *w, const struct ch_source *s, uint32_t r, uint64_t run,
                       char *err, size_t errlen)
{
    const struct profile *p = s->p;
    struct ch_row *o = &w->row;
    int rc = 0;
    for (uint32_t k = s->total_start[r]; k < s->total_start[r + 1] && !rc; k++) {
        const struct total *t = &p->totals[s->total_order[k]];
        if (stored(s, t->snapshot, CH_TOTALS)) continue;
        const struct snapshot *sn = &p->snapshots[t->snapshot];
        ch_u64(o, run); ch_u32(o, s->pnum[sn->process]); ch_u32(o, (uint64_t)sn->seq);
        ch_u32(o, t->thread == NONE ? 0 : s->tnum[t->thread]);
        ch_i64(o, t->c.v[NCALLS]); ch_i64(o, t->c.v[MEMTOT]); ch_i64(o, t->c.v[NFREE]);
        ch_i64(o, t->c.v[MEMLIVE]); ch_i64(o, t->c.v[MAXLIVE]);
        ch_i64(o, t->ncalls_nostack); ch_i64(o, t->memtot_nostack); ch_i64(o, t->nfree_unknown);
        rc = ch_row_done(w, CH_TOTALS, err, errlen);
    }
    return rc;
}

/* The stacks a run's rows use, each once (first use in the run). */
struct used { uint32_t *stacks; size_t n, cap; };

static void use_stack(struct ch_source *s, uint32_t r, uint32_t stack, struct used *u)
{
    if (s->stack_mark[stack] == r + 1) return;
    s->stack_mark[stack] = r + 1;
    u->stacks = array_grow(u->stacks, u->n, &u->cap, sizeof *u->stacks);
    u->stacks[u->n++] = stack;
}

/* The run's samples; the stacks they use into *u. */
static int sample_rows(struct ch_writer *w, struct ch_source *s, uint32_t r, uint64_t run, struct used *u,
                       char *err, size_t errlen)
{
    const struct profile *p = s->p;
    struct ch_row *o = &w->row;
    int rc = 0;
    for (uint32_t k = s->sample_start[r]; k < s->sample_start[r + 1] && !rc; k++) {
        const struct sample *sa = &p->samples[s->sample_order[k]];
        if (stored(s, sa->snapshot, CH_SAMPLE)) continue;
        const struct snapshot *sn = &p->snapshots[sa->snapshot];
        use_stack(s, r, sa->stack, u);
        ch_u64(o, run); ch_u32(o, s->pnum[sn->process]); ch_u32(o, (uint64_t)sn->seq);
        ch_u64(o, s->stack_id[sa->stack]); ch_u32(o, s->tnum[sa->thread]);
        ch_i64(o, sa->c.v[NCALLS]); ch_i64(o, sa->c.v[MEMTOT]); ch_i64(o, sa->c.v[NFREE]); ch_i64(o, sa->c.v[MEMLIVE]);
        ch_i64(o, sa->c.v[MAXLIVE]); ch_i64(o, sa->c.v[NTEMP]); ch_i64(o, sa->c.v[TIME]);
        ch_i64(o, sa->c.v[NMAP]); ch_i64(o, sa->c.v[MAPPED]); ch_i64(o, sa->c.v[MAXMAPPED]); ch_i64(o, sa->c.v[RSS]);
        ch_i64(o, sa->c.v[MEMCOLD]); ch_i64(o, sa->c.v[COLDAGE]);
        rc = ch_row_done(w, CH_SAMPLE, err, errlen);
    }
    return rc;
}

/* The run's size histograms: mp_hist rows, and mp_stack_hist rows (their
 * stacks into *u). */
static int hist_rows(struct ch_writer *w, struct ch_source *s, uint32_t r, uint64_t run, struct used *u,
                     char *err, size_t errlen)
{
    const struct profile *p = s->p;
    struct ch_row *o = &w->row;
    int rc = 0;
    for (uint32_t k = s->hist_start[r]; k < s->hist_start[r + 1] && !rc; k++) {
        const struct hist_row *h = &p->hists[s->hist_order[k]];
        if (stored(s, h->snapshot, CH_HIST)) continue;
        const struct snapshot *sn = &p->snapshots[h->snapshot];
        ch_u64(o, run); ch_u32(o, s->pnum[sn->process]); ch_u32(o, (uint64_t)sn->seq); ch_i64(o, h->lo);
        for (int c = 0; c < NH; c++) ch_i64(o, h->v[c]);
        rc = ch_row_done(w, CH_HIST, err, errlen);
    }
    for (uint32_t k = s->shist_start[r]; k < s->shist_start[r + 1] && !rc; k++) {
        const struct stack_hist_row *h = &p->stack_hists[s->shist_order[k]];
        if (stored(s, h->snapshot, CH_STACK_HIST)) continue;
        const struct snapshot *sn = &p->snapshots[h->snapshot];
        use_stack(s, r, h->stack, u);
        ch_u64(o, run); ch_u32(o, s->pnum[sn->process]); ch_u32(o, (uint64_t)sn->seq);
        ch_u64(o, s->stack_id[h->stack]); ch_u32(o, s->tnum[h->thread]); ch_i64(o, h->lo);
        for (int c = 0; c < NH; c++) ch_i64(o, h->v[c]);
        rc = ch_row_done(w, CH_STACK_HIST, err, errlen);
    }
    return rc;
}

static int frame_row(struct ch_writer *w, const struct ch_source *s, uint32_t f, struct ch_load *load,
                     char *err, size_t errlen)
{
    const struct profile *p = s->p;
    const struct frame *fr = &p->frames[f];
    const struct module *m = &p->modules[fr->module];
    struct ch_row *o = &w->row;
    ch_u64(o, s->frame_id[f]); ch_str(o, m->path); ch_str(o, m->build_id); ch_i64(o, fr->offset);
    ch_u32(o, fr->inline_depth < 0 ? 0 : (uint64_t)fr->inline_depth);
    ch_str(o, fr->function == NONE ? "" : p->functions[fr->function]);
    ch_str(o, fr->file == NONE ? "" : p->files[fr->file]);
    ch_u32(o, fr->line < 0 ? 0 : (uint64_t)fr->line);
    load->dict_rows++;
    return ch_row_done(w, CH_FRAME, err, errlen);
}

/* Whether key is in the set; adds it. */
static int seen(struct idmap *set, uint64_t key)
{
    int created;
    uint32_t *v = idmap_put(set, key, &created);
    *v = 0;
    return !created;
}

/* mp_stack rows of the used stacks this writer has not built yet, and
 * mp_frame rows of their frames not built yet. */
static int dictionary_rows(struct ch_writer *w, const struct ch_source *s, const uint32_t *used, size_t nused,
                           struct ch_load *load, char *err, size_t errlen)
{
    const struct profile *p = s->p;
    struct ch_row *o = &w->row;
    uint32_t *path = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t u = 0; u < nused && !rc; u++) {
        if (seen(&w->stacks_sent, s->stack_id[used[u]])) continue;
        size_t depth = 0;
        for (uint32_t i = used[u]; i != NONE; i = p->stacks[i].parent) {
            if (depth == cap) path = xrealloc(path, (cap = cap ? 2 * cap : 256) * sizeof *path);
            path[depth++] = p->stacks[i].frame;
        }
        ch_u64(o, s->stack_id[used[u]]);
        ch_leb128(o, depth);
        for (size_t d = depth; d-- > 0;) ch_u64(o, s->frame_id[path[d]]);    /* root first */
        load->dict_rows++;
        rc = ch_row_done(w, CH_STACK, err, errlen);
        for (size_t d = 0; d < depth && !rc; d++)
            if (!seen(&w->frames_sent, s->frame_id[path[d]])) rc = frame_row(w, s, path[d], load, err, errlen);
    }
    free(path);
    return rc;
}

int ch_write_run(struct ch_writer *w, struct ch_source *s, uint32_t r, struct ch_load *load,
                 char *err, size_t errlen)
{
    const struct profile *p = s->p;
    uint64_t before = built(w), rows_before = 0, rows_after = 0;
    for (int t = CH_PROCESS; t <= CH_SAMPLE; t++) rows_before += w->sent[t] + w->buffered[t];
    *load = (struct ch_load){ .run = s->run_id ? s->run_id : ch_day_run(random_run_id(), p->runs[r].start_time) };
    uint32_t first = NONE;
    struct used used = { 0 };
    int rc = process_rows(w, s, r, load, &first, err, errlen);
    if (!rc) rc = totals_rows(w, s, r, load->run, err, errlen);
    if (!rc) rc = sample_rows(w, s, r, load->run, &used, err, errlen);
    if (!rc) rc = ch_growth_rows(w, s, r, load->run, err, errlen);
    if (!rc) rc = hist_rows(w, s, r, load->run, &used, err, errlen);
    if (!rc) rc = dictionary_rows(w, s, used.stacks, used.n, load, err, errlen);
    free(used.stacks);
    if (rc) return rc;
    for (int t = CH_PROCESS; t <= CH_SAMPLE; t++) rows_after += w->sent[t] + w->buffered[t];
    load->rows = rows_after - rows_before;
    if (s->no_run_row) {
        w->uncommitted += built(w) - before;
        return 0;
    }
    /* the commit marker, held until ch_commit */
    const struct process *pr = first == NONE ? NULL : &p->procs[first];
    struct ch_row *o = &w->row;
    ch_u64(o, load->run);           /* its growth rows are stored (mp_growth_run: the fast windows') */
    if ((rc = ch_row_done(w, CH_GROWTH_RUN, err, errlen))) return rc;
    ch_u64(o, load->run); ch_str(o, p->runs[r].token); ch_f64(o, p->runs[r].start_time); ch_u32(o, w->pushed);
    ch_str(o, s->source); ch_str(o, pr ? pr->host : ""); ch_str(o, pr ? pr->exe : ""); ch_str(o, pr ? pr->cmdline : "");
    ch_u32(o, load->processes); ch_u32(o, load->snapshots); ch_u64(o, load->rows);
    rc = ch_row_done(w, CH_RUN, err, errlen);
    w->uncommitted += built(w) - before;
    return rc;
}
