/* A run's growth rows for the store (chstore.h ch_growth_rows; table
 * mp_growth of schema/clickhouse.sql): the rows of the process's chain
 * (peak snapshots aside) in seq order, each less the one before it of the
 * same (process, stack, thread) (a first row less nothing), summed per
 * (snapshot, stack). The sum of a
 * (process, stack, thread)'s growth up to a snapshot is then its value
 * there, and a window's change the sum of the growth inside it: what
 * mpquery/chwindow.c reads from the rollups of these rows. */
#include "chstore.h"
#include "select.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The counters of mp_growth (and mp_sample), in the order of its columns. */
static const int growth_counter[] = { NCALLS, MEMTOT, NFREE, MEMLIVE, MAXLIVE, NTEMP, TIME, NMAP, MAPPED, MAXMAPPED,
                                      RSS, MEMCOLD, COLDAGE };
#define NGROWTH (sizeof growth_counter / sizeof *growth_counter)

/* Run r's chain rows in chain order: by snapshot index (a process's
 * snapshots are a range of profile.snapshots in seq order), by a
 * counting sort; how many. */
static size_t chain_rows(const struct ch_source *s, uint32_t r, uint32_t **out)
{
    const struct profile *p = s->p;
    uint32_t *start = xcalloc(p->nsnapshots + 1, sizeof *start), n = 0;
    for (uint32_t k = s->sample_start[r]; k < s->sample_start[r + 1]; k++) {
        const struct sample *sa = &p->samples[s->sample_order[k]];
        if (!p->snapshots[sa->snapshot].peak) start[sa->snapshot + 1]++, n++;
    }
    for (size_t i = 0; i < p->nsnapshots; i++) start[i + 1] += start[i];
    uint32_t *idx = xmalloc((n + 1) * sizeof *idx);
    for (uint32_t k = s->sample_start[r]; k < s->sample_start[r + 1]; k++) {
        uint32_t i = s->sample_order[k];
        if (!p->snapshots[p->samples[i].snapshot].peak) idx[start[p->samples[i].snapshot]++] = i;
    }
    free(start);
    *out = idx;
    return n;
}

/* Per (snapshot, stack) of the snapshots not stored: the growth summed. */
struct sums {
    struct idmap at;                    /* snapshot << 32 | stack → index */
    uint32_t (*key)[2];                 /* per index: snapshot, stack */
    int64_t (*v)[NGROWTH];
    size_t n, cap;
};

static int64_t *sum_of(struct sums *g, uint32_t snapshot, uint32_t stack)
{
    int created;
    uint32_t *i = idmap_put(&g->at, (uint64_t)snapshot << 32 | stack, &created);
    if (created) {
        if (g->n == g->cap) {
            g->cap = g->cap ? 2 * g->cap : 1024;
            g->key = xrealloc(g->key, g->cap * sizeof *g->key);
            g->v = xrealloc(g->v, g->cap * sizeof *g->v);
        }
        *i = (uint32_t)g->n++;
        g->key[*i][0] = snapshot, g->key[*i][1] = stack;
        memset(g->v[*i], 0, sizeof g->v[*i]);
    }
    return g->v[*i];
}

/* The rows in chain order, each (stack, thread)'s previous row at hand
 * (a thread is of one process): O(rows), no sort. */
static void growth_sums(const struct ch_source *s, uint32_t r, struct sums *g)
{
    const struct profile *p = s->p;
    uint32_t *idx;
    size_t n = chain_rows(s, r, &idx);
    struct idmap last;                  /* stack << 32 | thread → its latest row so far */
    idmap_init(&last, 1024);
    idmap_init(&g->at, 1024);
    for (size_t j = 0; j < n; j++) {
        const struct sample *sa = &p->samples[idx[j]], *prev = NULL;
        int created;
        uint32_t *at = idmap_put(&last, (uint64_t)sa->stack << 32 | sa->thread, &created);
        if (!created) prev = &p->samples[*at];
        *at = idx[j];
        if (s->skip_snapshot && (s->skip_snapshot[sa->snapshot] & (1u << CH_GROWTH))) continue;
        int64_t *v = sum_of(g, sa->snapshot, sa->stack);
        for (size_t c = 0; c < NGROWTH; c++)
            v[c] += sa->c.v[growth_counter[c]] - (prev ? prev->c.v[growth_counter[c]] : 0);
    }
    idmap_free(&last);
    free(idx);
}

int ch_growth_rows(struct ch_writer *w, const struct ch_source *s, uint32_t r, uint64_t run, char *err,
                   size_t errlen)
{
    const struct profile *p = s->p;
    struct sums g = { 0 };
    growth_sums(s, r, &g);
    struct strbuf key = { 0 };
    uint32_t keyed = NONE;              /* the process whose key is in `key` */
    struct ch_row *o = &w->row;
    int rc = 0;
    for (size_t i = 0; i < g.n && !rc; i++) {
        const struct snapshot *sn = &p->snapshots[g.key[i][0]];
        if (sn->process != keyed) group_key(&p->procs[sn->process], GROUP_EXE, &key), keyed = sn->process;
        double at = ceil(sn->time);
        ch_u64(o, run); ch_u32(o, s->pnum[sn->process]); ch_u32(o, (uint64_t)sn->seq);
        ch_u32(o, at > 0 ? (uint64_t)at : 0); ch_str(o, key.s); ch_u64(o, s->stack_id[g.key[i][1]]);
        for (size_t c = 0; c < NGROWTH; c++) ch_i64(o, g.v[i][c]);
        rc = ch_row_done(w, CH_GROWTH, err, errlen);
    }
    sb_free(&key);
    idmap_free(&g.at);
    free(g.key);
    free(g.v);
    return rc;
}
