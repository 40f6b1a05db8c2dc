/* push --follow, one profile (follow.h): its last committed state read
 * from a copy (profile_copy_committed: the recorder is never held up),
 * the snapshots past its position sent in batches (chstore.c's rows, of
 * a load whose id comes from the run's token), the position kept in a
 * state file replaced atomically, and, once the file is stored whole and
 * its processes ended, the rows that change at the end (mp_process's end,
 * mp_run's counts) updated, and the file removed with --remove-shipped. */
#include "follow.h"
#include "hash.h"
#include "hists.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A batch's rows in mp_sample and mp_stack_hist (each table's INSERT is
 * then one block: ClickHouse's max_insert_block_size is 1,048,576 rows). */
enum { BATCH_ROWS = 400000 };

uint64_t follow_run_id(const struct profile *p, uint32_t r)
{
    static const char what[] = "mpquery push --follow";
    const struct process *first = NULL;
    for (size_t i = 0; i < p->nprocs && !first; i++)
        if (p->procs[i].run == r) first = &p->procs[i];
    char pid[32];
    snprintf(pid, sizeof pid, "%lld", first ? (long long)first->pid : -1LL);
    uint64_t h = fnv1a_more(FNV_BASIS, what, sizeof what);
    h = fnv1a_more(h, p->runs[r].token, strlen(p->runs[r].token) + 1);
    h = fnv1a_more(h, first ? first->host : "", strlen(first ? first->host : "") + 1);
    return ch_day_run(fnv1a_more(h, pid, strlen(pid)), p->runs[r].start_time);
}

/* The key of a load's process (kind 1, its number), thread (2) or mp_run row (0) in ffile.stored. */
static uint64_t follow_key(uint64_t load, int kind, uint32_t num)
{
    uint64_t k[2] = { load, (uint64_t)kind << 32 | num };
    return fnv1a(k, sizeof k);
}

static int is_stored(const struct ffile *f, uint64_t key) { return idmap_get(&f->stored, key) != NONE; }

/* ---------------------------------------------------------------- the batch */
/* The snapshots to send now: those past f->shipped, in id order, up to
 * BATCH_ROWS rows (at least one); skip marks the others as stored. */
struct batch {
    uint16_t *skip;                     /* per snapshot: ch_source.skip_snapshot */
    unsigned char *skip_process, *skip_thread;
    uint8_t *in_run;                    /* per run: it has snapshots in the batch */
    uint64_t *load;                     /* per run: its load (follow_run_id) */
    int64_t last;                       /* the largest id sent */
    size_t n, more;                     /* snapshots sent; past the batch */
};

static int cmp_id(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static void choose(const struct profile *p, const struct ffile *f, struct batch *b)
{
    size_t *rows = xcalloc(p->nsnapshots + 1, sizeof *rows), npend = 0;
    int64_t *pend = xmalloc((p->nsnapshots + 1) * sizeof *pend);
    for (size_t i = 0; i < p->nsamples; i++) rows[p->samples[i].snapshot]++;
    for (size_t i = 0; i < p->nstack_hists; i++)
        if (p->stack_hists[i].snapshot != NONE) rows[p->stack_hists[i].snapshot]++;
    /* ids to indexes: an id and its index in one int64 would not fit; sort ids, then pick */
    for (size_t i = 0; i < p->nsnapshots; i++)
        if (p->snapshots[i].id > f->shipped) pend[npend++] = p->snapshots[i].id;
    qsort(pend, npend, sizeof *pend, cmp_id);
    struct idmap at;
    idmap_init(&at, p->nsnapshots + 1);
    int created;
    for (size_t i = 0; i < p->nsnapshots; i++) *idmap_put(&at, (uint64_t)p->snapshots[i].id, &created) = (uint32_t)i;
    size_t total = 0, k = 0;
    b->last = f->shipped;
    for (; k < npend; k++) {
        size_t r = rows[idmap_get(&at, (uint64_t)pend[k])];
        if (k && total + r > BATCH_ROWS) break;
        total += r;
        b->last = pend[k];
    }
    b->n = k, b->more = npend - k;
    b->skip = xmalloc((p->nsnapshots + 1) * sizeof *b->skip);
    b->in_run = xcalloc(p->nruns + 1, 1);
    b->load = xmalloc((p->nruns + 1) * sizeof *b->load);
    for (uint32_t r = 0; r < p->nruns; r++) b->load[r] = follow_run_id(p, r);
    for (size_t i = 0; i < p->nsnapshots; i++) {
        int64_t id = p->snapshots[i].id;
        b->skip[i] = id > f->shipped && id <= b->last ? 0 : 0xffff;
        if (!b->skip[i]) b->in_run[p->procs[p->snapshots[i].process].run] = 1;
    }
    idmap_free(&at);
    free(rows);
    free(pend);
}

/* Processes and threads whose rows go: not stored yet, of a process with
 * a snapshot in the batch or stored before. */
static void choose_rows(const struct profile *p, const struct ffile *f, const struct ch_source *s, struct batch *b)
{
    b->skip_process = xmalloc(p->nprocs + 1);
    b->skip_thread = xmalloc(p->nthreads + 1);
    unsigned char *alive = xcalloc(p->nprocs + 1, 1);
    for (size_t i = 0; i < p->nsnapshots; i++)
        if (!b->skip[i]) alive[p->snapshots[i].process] = 1;
    for (size_t i = 0; i < p->nprocs; i++) {
        uint64_t load = b->load[p->procs[i].run];
        int stored = is_stored(f, follow_key(load, 1, s->pnum[i]));
        b->skip_process[i] = stored || !alive[i];
        alive[i] |= (unsigned char)stored;
    }
    for (size_t i = 0; i < p->nthreads; i++) {
        uint32_t pr = p->threads[i].process;
        uint64_t load = b->load[p->procs[pr].run];
        b->skip_thread[i] = !alive[pr] || is_stored(f, follow_key(load, 2, s->tnum[i]));
    }
    free(alive);
}

/* ---------------------------------------------------------------- asking the store */
/* The rows of sql, each as its first two numbers to row(ctx, x, y). */
static int ask(struct agent *a, const char *sql, void (*row)(void *ctx, uint64_t x, uint64_t y), void *ctx)
{
    struct strbuf out = { 0 }, field = { 0 };
    int rc = ch_query(&a->c, sql, 1, &out, a->err, sizeof a->err);
    const char *cur = out.s, *end = out.s + out.len;
    while (!rc && cur < end) {
        int sep = tsv_field(&cur, end, &field);
        uint64_t x = strtoull(field.s, NULL, 10), y = 0;
        if (sep == '\t') {
            tsv_field(&cur, end, &field);
            y = strtoull(field.s, NULL, 10);
        }
        row(ctx, x, y);
    }
    sb_free(&out);
    sb_free(&field);
    return rc;
}

struct asked { struct ffile *f; uint64_t load; int kind; struct idmap *at; uint16_t *skip; };

static void stored_row(void *ctx, uint64_t x, uint64_t y)
{
    struct asked *q = ctx;
    (void)y;
    if (q->kind != 0 || x) follow_set_stored(q->f, follow_key(q->load, q->kind, q->kind ? (uint32_t)x : 0));
}

static void snapshot_row(void *ctx, uint64_t x, uint64_t y)
{
    struct asked *q = ctx;
    uint32_t i = idmap_get(q->at, x << 32 | (uint32_t)y);
    if (i != NONE) q->skip[i] |= (uint16_t)(1u << q->kind);
}

/* What the store holds of run r's load: its mp_run row, processes,
 * threads, and per table the batch's snapshots it has. */
static int ask_load(struct agent *a, struct ffile *f, const struct ch_source *s, uint32_t r, struct batch *b)
{
    const struct profile *p = s->p;
    struct asked q = { .f = f, .load = b->load[r], .skip = b->skip };
    struct idmap at;
    idmap_init(&at, 64);
    struct strbuf cond = { 0 }, sql = { 0 };
    sb_puts(&cond, "0");
    for (size_t i = 0; i < p->nprocs; i++) {
        const struct process *pr = &p->procs[i];
        int64_t min = -1;
        for (uint32_t j = pr->first_snapshot; pr->run == r && j < pr->first_snapshot + pr->nsnapshots; j++) {
            int created;
            if (b->skip[j]) continue;
            *idmap_put(&at, (uint64_t)s->pnum[i] << 32 | (uint32_t)p->snapshots[j].seq, &created) = j;
            if (min < 0 || p->snapshots[j].seq < min) min = p->snapshots[j].seq;
        }
        if (min >= 0) sb_printf(&cond, " OR (process = %u AND seq >= %lld)", s->pnum[i], (long long)min);
    }
    q.at = &at;
    static const char *const whole[3] = { "SELECT count() FROM mp_run", "SELECT process FROM mp_process",
                                          "SELECT thread FROM mp_thread" };
    int rc = 0;
    for (q.kind = 0; q.kind < 3 && !rc; q.kind++) {
        sql.len = 0;
        sb_printf(&sql, "%s WHERE run = %llu", whole[q.kind], (unsigned long long)q.load);
        rc = ask(a, sql.s, stored_row, &q);
    }
    static const int tables[] = { CH_SNAPSHOT, CH_TOTALS, CH_SAMPLE, CH_HIST, CH_STACK_HIST, CH_GROWTH };
    for (size_t t = 0; t < sizeof tables / sizeof *tables && !rc; t++) {
        q.kind = tables[t];
        sql.len = 0;
        /* mp_growth keeps no rows: its view mp_growth_seen notes which snapshots it had */
        sb_printf(&sql, "SELECT process, seq FROM %s WHERE run = %llu AND (%s) GROUP BY process, seq",
                  q.kind == CH_GROWTH ? "mp_growth_seen" : ch_table_name[q.kind], (unsigned long long)q.load, cond.s);
        rc = ask(a, sql.s, snapshot_row, &q);
    }
    idmap_free(&at);
    sb_free(&cond);
    sb_free(&sql);
    return rc;
}

/* ---------------------------------------------------------------- sending */
/* The batch's rows built into the round's writer (follow_round.c): stored
 * by its commit, with what is then known stored (follow_key). */
static int send_batch(struct agent *a, struct ffile *f, struct ch_source *s, struct batch *b,
                      struct follow_pending *pd)
{
    const struct profile *p = s->p;
    s->skip_snapshot = b->skip, s->skip_process = b->skip_process, s->skip_thread = b->skip_thread;
    int rc = 0;
    for (uint32_t r = 0; r < p->nruns && !rc; r++) {
        if (!b->in_run[r]) continue;
        struct ch_load load;
        s->run_id = b->load[r];
        s->no_run_row = is_stored(f, follow_key(s->run_id, 0, 0));
        rc = ch_write_run(&a->w, s, r, &load, a->err, sizeof a->err);
        pd->rows += load.rows + load.dict_rows;
    }
    if (rc) return rc;
    for (size_t i = 0; i < p->nprocs; i++) {
        uint64_t load = b->load[p->procs[i].run];
        if (b->in_run[p->procs[i].run]) follow_pending_key(pd, follow_key(load, 0, 0));
        if (!b->skip_process[i]) follow_pending_key(pd, follow_key(load, 1, s->pnum[i]));
    }
    for (size_t i = 0; i < p->nthreads; i++)
        if (!b->skip_thread[i])
            follow_pending_key(pd, follow_key(b->load[p->procs[p->threads[i].process].run], 2, s->tnum[i]));
    return 0;
}

/* ---------------------------------------------------------------- the end */
/* Every process ended: its last snapshot says how, or it ran on this host
 * and its pid is gone (killed; *by_pid set); the others of this host into
 * f->pids. */
static int ended(const struct profile *p, struct ffile *f, int *by_pid)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    int all = 1;
    f->npids = 0;
    for (size_t i = 0; i < p->nprocs; i++) {
        const struct process *pr = &p->procs[i];
        if (*pr->ended) continue;
        int here = !strcmp(pr->host, host);
        if (here && kill((pid_t)pr->pid, 0) != 0 && errno == ESRCH) { *by_pid = 1; continue; }
        all = 0;
        if (here) {
            f->pids = xrealloc(f->pids, (f->npids + 1) * sizeof *f->pids);
            f->pids[f->npids++] = pr->pid;
        }
    }
    return all;
}

/* The rows that change at the end: each stored process's end, each
 * load's counts in mp_run (its rows as a push of the file writes them). */
static int final_rows(struct agent *a, const struct ffile *f, const struct ch_source *s, const struct batch *b)
{
    const struct profile *p = s->p;
    struct strbuf sql = { 0 }, out = { 0 };
    int rc = 0;
    for (size_t i = 0; i < p->nprocs && !rc; i++) {
        const struct process *pr = &p->procs[i];
        uint64_t load = b->load[pr->run];
        if (!is_stored(f, follow_key(load, 1, s->pnum[i]))) continue;
        sql.len = 0;
        sb_printf(&sql, "ALTER TABLE mp_process UPDATE end_time = %.17g, ended = ", pr->end_time < 0 ? -1 : pr->end_time);
        ch_quote(&sql, pr->ended);
        sb_printf(&sql, " WHERE run = %llu AND process = %u", (unsigned long long)load, s->pnum[i]);
        rc = ch_query(&a->c, sql.s, 0, &out, a->err, sizeof a->err);
    }
    for (uint32_t r = 0; r < p->nruns && !rc; r++) {
        uint64_t load = b->load[r], procs = 0, snaps = 0, rows = 0;
        if (!is_stored(f, follow_key(load, 0, 0))) continue;
        for (size_t i = 0; i < p->nprocs; i++) procs += p->procs[i].run == r;
        for (size_t i = 0; i < p->nthreads; i++) rows += p->procs[p->threads[i].process].run == r;
        for (size_t i = 0; i < p->nsnapshots; i++)
            if (p->procs[p->snapshots[i].process].run == r) snaps += !p->snapshots[i].peak, rows++;
        rows += procs + s->sample_start[r + 1] - s->sample_start[r] + s->total_start[r + 1] - s->total_start[r];
        sql.len = 0;
        sb_printf(&sql, "ALTER TABLE mp_run UPDATE processes = %llu, snapshots = %llu, rows = %llu WHERE run = %llu",
                  (unsigned long long)procs, (unsigned long long)snaps, (unsigned long long)rows,
                  (unsigned long long)load);
        rc = ch_query(&a->c, sql.s, 0, &out, a->err, sizeof a->err);
    }
    sb_free(&sql);
    sb_free(&out);
    return rc;
}

/* A finished file: removed with --remove-shipped, with its state. */
static void remove_finished(struct agent *a, struct ffile *f)
{
    if (!a->o->remove_shipped) return;
    if (unlink(f->path) != 0 && errno != ENOENT) {
        if (!f->said) warning("push: %s: stored whole, but cannot remove it (%s)", f->path, strerror(errno));
        f->said = 1;
        return;
    }
    unlink(f->state);
    if (!a->o->quiet) fprintf(stderr, "mpquery: push: %s: removed (stored whole)\n", f->path);
}

/* The file is as it was (st) before it was copied. */
static int unchanged(const char *path, const struct stat *st)
{
    struct stat now;
    return stat(path, &now) == 0 && now.st_ino == st->st_ino && now.st_size == st->st_size &&
           now.st_mtim.tv_sec == st->st_mtim.tv_sec && now.st_mtim.tv_nsec == st->st_mtim.tv_nsec;
}

/* Stored whole: when its processes ended, the final rows, then f is
 * finished. A pid gone counts once the file is still as it was copied (st):
 * a process commits its last snapshot, then exits, maybe after the copy. */
static int finish(struct agent *a, struct ffile *f, const struct ch_source *s, const struct batch *b,
                  const struct stat *st)
{
    const struct profile *p = s->p;
    int by_pid = 0;
    f->waiting = !ended(p, f, &by_pid) || (by_pid && !unchanged(f->path, st));
    if (f->waiting) return 0;
    int rc = final_rows(a, f, s, b);
    if (rc) return rc;
    f->finished = 1;
    follow_state_save(f);
    if (!a->o->quiet)
        fprintf(stderr, "mpquery: push: %s: stored whole: %zu snapshots of %zu processes\n", f->path,
                p->nsnapshots, p->nprocs);
    remove_finished(a, f);
    return 0;
}

/* p, the committed state of f: its next batch sent, or its end. */
static int ship_profile(struct agent *a, struct ffile *f, const struct profile *p, const struct stat *st)
{
    struct ch_source s;
    ch_source_init(&s, p, f->path);
    struct batch b = { 0 };
    choose(p, f, &b);
    choose_rows(p, f, &s, &b);
    int rc = 0;
    /* in doubt, what the store has: of the batch's runs, or of every run
     * when nothing is left to send (the end needs the rows stored) */
    for (uint32_t r = 0; r < p->nruns && f->doubt && !rc; r++)
        if (b.in_run[r] || !b.n) rc = ask_load(a, f, &s, r, &b);
    if (!rc && b.n) {
        free(b.skip_process), free(b.skip_thread);
        choose_rows(p, f, &s, &b);      /* with what the store said */
        struct follow_pending *pd = follow_pending_add(a, f, b.last, b.n);
        rc = send_batch(a, f, &s, &b, pd);
        /* stored whole once committed: its end then, when its processes ended (else waiting for them) */
        if (!rc && !b.more) {
            int by_pid = 0;
            pd->again = ended(p, f, &by_pid);
            f->waiting = !pd->again;
        }
    }
    if (rc) {
        f->doubt = 1;
    } else if (!b.n) {
        f->doubt = 0;
        if (!b.more) rc = finish(a, f, &s, &b, st);
    }
    free(b.skip); free(b.skip_process); free(b.skip_thread); free(b.in_run); free(b.load);
    ch_source_free(&s);
    return rc ? rc : b.more ? FOLLOW_MORE : 0;
}

/* A file of this host's process that was running is gone: its end is due. */
int follow_pid_gone(const struct ffile *f)
{
    for (size_t i = 0; i < f->npids; i++)
        if (kill((pid_t)f->pids[i], 0) != 0 && errno == ESRCH) return 1;
    return 0;
}

int follow_ship(struct agent *a, struct ffile *f)
{
    struct stat st;
    if (stat(f->path, &st) != 0) return 0;     /* gone: the next scan forgets it */
    if ((uint64_t)st.st_dev != f->dev || (uint64_t)st.st_ino != f->ino) {
        f->dev = st.st_dev, f->ino = st.st_ino, f->shipped = 0, f->finished = 0, f->doubt = 1;
        f->size = f->mtime_ns = -1;
    }
    if (f->finished) {
        remove_finished(a, f);
        return 0;
    }
    int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    /* unchanged: nothing to read, unless a process it waits for is gone
     * (every rescan finds every file of a directory) */
    if (!f->doubt && st.st_size == f->size && mtime == f->mtime_ns && !(f->waiting && follow_pid_gone(f))) return 0;
    char err[1024];
    struct profile *p = NULL;
    int rc = profile_copy_committed(f->path, a->copy, err, sizeof err);
    if (!rc) rc = profile_load(a->copy, &p, PROFILE_PEAK_ROWS | PROFILE_HISTS, err, sizeof err);
    if (rc) {
        /* a file the recorder is creating is not a profile yet: said once it is 2 s old */
        if (time(NULL) - st.st_mtim.tv_sec < 2) return 0;
        if (!f->said) warning("push: %s: %s (skipped until it changes)", f->path, err);
        f->said = 1, f->size = st.st_size, f->mtime_ns = mtime;
        return EXIT_BAD_INPUT;
    }
    f->said = 0;
    rc = ship_profile(a, f, p, &st);
    if (!rc) f->size = st.st_size, f->mtime_ns = mtime;
    profile_free(p);
    return rc;
}
