/* --group in the tables of diff and leaks:
 * the groups of every profile of a listing matched by name (one group per
 * host, executable or pid, select.h's thread_groups_by_key), in name
 * order, and per group each profile's counters per display node, from
 * the selection's rows of that group's threads (keep_rows), the paths the
 * filters leave out left out. A group one profile lacks is zero there.
 * top and tree split their tables by the same groups (their per-thread
 * views). */
#include "listing.h"

#include <stdlib.h>
#include <string.h>

static int cmp_name(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

void listing_groups_make(const struct listing *l, struct listing_groups *lg)
{
    memset(lg, 0, sizeof *lg);
    struct strtab names;
    strtab_init(&names);
    for (size_t i = 0; i < l->n; i++) {
        const struct query *q = &l->q[i];
        thread_groups_by_key(q->p, &q->sel, l->c->sel.group_by ? l->c->sel.group_by : GROUP_PID, &lg->g[i]);
        lg->rows[i] = xmalloc((q->sel.nrows + 1) * sizeof *lg->rows[i]);
        lg->start[i] = group_rows(&q->sel, &lg->g[i], lg->rows[i]);
        for (size_t k = 0; k < lg->g[i].n; k++) strtab_intern(&names, lg->g[i].name[k], strlen(lg->g[i].name[k]));
    }
    lg->n = names.n;
    lg->name = xmalloc((lg->n + 1) * sizeof *lg->name);
    for (size_t k = 0; k < lg->n; k++) lg->name[k] = arena_strndup(&lg->text, names.str[k], names.len[k]);
    qsort(lg->name, lg->n, sizeof *lg->name, cmp_name);
    strtab_free(&names);
}

void listing_group_own(const struct listing *l, const struct listing_groups *lg, size_t k, counters **own)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct query *q = &l->q[i];
        memset(own[i], 0, l->t.n * sizeof *own[i]);
        size_t j = 0;
        while (j < lg->g[i].n && strcmp(lg->g[i].name[j], lg->name[k])) j++;
        if (j == lg->g[i].n) continue;
        for (size_t r = lg->start[i][j]; r < lg->start[i][j + 1]; r++) {
            const struct sample *sa = &q->sel.samples[lg->rows[i][r]];
            uint32_t node = q->stack_node[sa->stack];
            if (node == NONE || (l->t.left_out && l->t.left_out[node])) continue;
            if (l->c->sel.live_only && counters_zero(&q->sel.stack_c[sa->rec])) continue;
            counters_add(&own[i][node], &sa->c);
        }
    }
}

void listing_groups_free(struct listing_groups *lg)
{
    for (size_t i = 0; i < 2; i++) {
        if (lg->g[i].group_of) thread_groups_free(&lg->g[i]);
        free(lg->rows[i]);
        free(lg->start[i]);
    }
    free(lg->name);
    arena_free(&lg->text);
    memset(lg, 0, sizeof *lg);
}
