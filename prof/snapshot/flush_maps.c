/* The rows of the program's own mappings in a snapshot (maps.c keeps
 * them): sample rows of stacks whose leaf is a '[mmap]' frame, with nmap,
 * mapped, maxmapped and rss, the heap counters 0. As for the heap's rows,
 * a snapshot stores only the (stack, thread) rows that changed since the
 * process's previous snapshot; peak snapshots hold none (rss is measured
 * at the snapshot, and the table has no copy as at the peak). Recorder
 * stacks that are one database stack (an object loaded twice) make one
 * row, their values summed. What is kept here is this process's own: a
 * fork child, or another database, starts anew (maps_rows_forget). */
#include "flush.h"
#include "maps.h"

#include <stdlib.h>
#include <string.h>

struct map_values { uint64_t nmap, mapped, maxmapped, rss; };
struct map_key { int64_t stack, thread; };

static struct {
    struct maps_row *now;           /* maps.c's rows, copied */
    size_t cap_now;
    struct node_map keys;           /* (database stack, thread seq) → index (1..) of the arrays below */
    struct map_key *key;
    struct map_values *sum, *prev;  /* this snapshot's; the values last written */
    size_t nkey, nsum, nprev;
} fm;

void maps_rows_forget(void)
{
    node_clear(&fm.keys);
    free(fm.key), fm.key = NULL, fm.nkey = 0;
    free(fm.sum), fm.sum = NULL, fm.nsum = 0;
    free(fm.prev), fm.prev = NULL, fm.nprev = 0;
}

/* maps.c's rows now (rss measured as they are copied). -1: no memory. */
static int copy_rows(size_t *n)
{
    while ((*n = maps_rows(fm.now, fm.cap_now)) > fm.cap_now)
        if (grow_array(&fm.now, &fm.cap_now, *n + 64, sizeof *fm.now)) return -1;
    return 0;
}

/* The index of row's database (stack, thread), made when new; 0: failed. */
static uint32_t key_of(struct writer *w, const struct maps_row *row)
{
    int64_t stack = mirror_stack(w, row->stack_id);
    struct mp_thread *t = thread_by_seq(row->thread_seq);
    int64_t thread = !t ? 0 : t->seq < flush_ids.nthreads && flush_ids.threads[t->seq] ? flush_ids.threads[t->seq]
                   : process_rows_thread(w, t);
    if (!stack || !thread) return fail(w, "cannot write a stack"), 0;
    uint32_t k = node_get(&fm.keys, (uint32_t)stack, row->thread_seq);
    if (k) return k;
    k = (uint32_t)fm.keys.count + 1;
    if (grow_array(&fm.key, &fm.nkey, k + 1, sizeof *fm.key) || grow_array(&fm.sum, &fm.nsum, k + 1, sizeof *fm.sum) ||
        grow_array(&fm.prev, &fm.nprev, k + 1, sizeof *fm.prev) || node_put(&fm.keys, (uint32_t)stack, row->thread_seq, k))
        return fail(w, "out of memory"), 0;
    fm.key[k] = (struct map_key){ stack, thread };
    return k;
}

int maps_rows_write(struct writer *w, int64_t snapshot, int64_t *nrows)
{
    size_t n;
    if (!mp_opt.mmap) return 0;
    if (copy_rows(&n) || mirror_reserve()) return fail(w, "out of memory");
    if (fm.sum) memset(fm.sum, 0, fm.nsum * sizeof *fm.sum);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = key_of(w, &fm.now[i]);
        if (!k) return -1;
        struct map_values *s = &fm.sum[k];
        s->nmap += fm.now[i].nmap, s->mapped += fm.now[i].mapped;
        s->maxmapped += fm.now[i].maxmapped, s->rss += fm.now[i].rss;
    }
    for (uint32_t k = 1; k <= fm.keys.count; k++) {
        const struct map_values *v = &fm.sum[k];
        if (!memcmp(v, &fm.prev[k], sizeof *v)) continue;
        const int64_t row[FC_sample_N] = {
            [FC_sample_snapshot] = snapshot, [FC_sample_stack] = fm.key[k].stack, [FC_sample_thread] = fm.key[k].thread,
            [FC_sample_nmap] = (int64_t)v->nmap, [FC_sample_mapped] = (int64_t)v->mapped,
            [FC_sample_maxmapped] = (int64_t)v->maxmapped, [FC_sample_rss] = (int64_t)v->rss,
        };
        if (batch_add(w, &w->samples, row)) return -1;
        fm.prev[k] = *v;
        ++*nrows;
    }
    return mirror_write_run(w) || batch_flush(w, &w->samples) ? -1 : 0;
}
