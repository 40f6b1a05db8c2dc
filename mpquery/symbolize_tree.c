/* mpquery symbolize's stack tree rebuilt (cmd_symbolize.c says when and
 * how): each old node mapped to the path of its re-resolved addresses, new
 * nodes above the old ids. Moved from cmd_symbolize.c verbatim
 * (rebuild_stacks is symbolize_rebuild_stacks). */
#include "symbolize.h"
#include "resolve.h"

#include <stdlib.h>
#include <string.h>

struct tree {
    struct stack_row *old; size_t nold;
    struct idmap old_ix;            /* old id → index */
    int64_t *group_end;             /* per old node: new id of its address's last frame */
    int64_t *group_parent;          /* per old node: new id its address hangs from */
    struct stack_row *new; size_t nnew, cap;
    struct idmap new_ix;            /* (parent, frame) → new id - base */
    int64_t base;
};

/* The new node (parent, frame), made when new. Ids fit in 32 bits (checked
 * by rebuild_stacks), so the pair is an exact 64-bit key. */
static int64_t new_node(struct tree *t, int64_t parent, int64_t frame)
{
    int created;
    uint32_t *v = idmap_put(&t->new_ix, (uint64_t)parent << 32 | (uint64_t)frame, &created);
    if (!created) return t->new[*v].id;
    if (t->nnew == t->cap) t->new = xrealloc(t->new, (t->cap = t->cap ? t->cap * 2 : 4096) * sizeof *t->new);
    *v = (uint32_t)t->nnew;
    t->new[t->nnew] = (struct stack_row){ t->base + (int64_t)t->nnew + 1, parent, frame };
    return t->new[t->nnew++].id;
}

static uint32_t frame_index(const struct sym *s, int64_t id)
{
    return idmap_get(&s->frame_ix, (uint64_t)id);
}

/* Sets group_end of old node i and of its ancestors that lack one (from the
 * root down, iteratively: stacks can be thousands deep). -1 when the table
 * is not a tree (a dangling parent or frame, a cycle). */
static int resolve_node(struct sym *s, struct tree *t, uint32_t i)
{
    uint32_t *todo = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t j = i; !t->group_end[j];) {
        if (n == cap) todo = xrealloc(todo, (cap = cap ? cap * 2 : 64) * sizeof *todo);
        todo[n++] = j;
        if (n > t->nold || !t->old[j].parent) break;
        j = idmap_get(&t->old_ix, (uint64_t)t->old[j].parent);
        if (j == NONE) n = t->nold + 1;
    }
    int rc = n > t->nold ? -1 : 0;
    while (n > 0 && !rc) {
        uint32_t j = todo[--n];
        const struct stack_row *o = &t->old[j];
        uint32_t pi = o->parent ? idmap_get(&t->old_ix, (uint64_t)o->parent) : NONE;
        uint32_t fi = frame_index(s, o->frame);
        uint32_t pfi = pi != NONE ? frame_index(s, t->old[pi].frame) : NONE;
        if (fi == NONE || (pi != NONE && pfi == NONE)) {
            rc = -1;
            break;
        }
        const struct frow *f = &s->frows[fi];
        const struct addr *a = &s->addrs[f->addr];
        /* an inlined level (depth > 0) continues its parent's address */
        int64_t hang = pi == NONE ? 0
                     : f->depth > 0 && s->frows[pfi].addr == f->addr ? t->group_parent[pi]
                     : t->group_end[pi];
        t->group_parent[j] = hang;
        int64_t node = hang;
        if (a->nnew)
            for (int d = 0; d < a->nnew; d++) node = new_node(t, node, a->ids[d]);
        else
            for (size_t d = 0; d < a->nold; d++) node = new_node(t, node, s->frows[a->first + d].id);
        t->group_end[j] = node;
    }
    free(todo);
    return rc;
}

/* Each old node mapped to its new path (group_end); 0, or the exit code
 * (reported). */
static int map_old_nodes(struct sym *s, struct tree *t)
{
    for (size_t i = 0; i < t->nold; i++)
        if (t->old[i].id > t->base) t->base = t->old[i].id;
    if (t->base + (int64_t)t->nold * RES_MAX_INLINE >= INT32_MAX || s->max_frame >= INT32_MAX)
        return error(EXIT_FAILED, "%s: ids beyond 2^31: cannot rebuild its stacks", s->path);
    idmap_init(&t->old_ix, t->nold);
    idmap_init(&t->new_ix, t->nold);
    int created;
    for (size_t i = 0; i < t->nold; i++) *idmap_put(&t->old_ix, (uint64_t)t->old[i].id, &created) = (uint32_t)i;
    t->group_end = xcalloc(t->nold + 1, sizeof *t->group_end);
    t->group_parent = xcalloc(t->nold + 1, sizeof *t->group_parent);
    for (size_t i = 0; i < t->nold; i++)
        if (resolve_node(s, t, (uint32_t)i))
            return error(EXIT_BAD_INPUT, "%s: the stack table is not a tree (stack %lld); nothing written",
                         s->path, (long long)t->old[i].id);
    return 0;
}

int symbolize_rebuild_stacks(struct sym *s, size_t *nodes)
{
    struct tree t = { 0 };
    int rc = db_fail(s, symdb_stacks(&s->db, &t.old, &t.nold));
    if (!rc) rc = map_old_nodes(s, &t);
    if (!rc) rc = db_fail(s, symdb_replace_stacks(&s->db, t.old, t.group_end, t.nold, t.new, t.nnew));
    *nodes = t.nnew;
    free(t.old);
    free(t.new);
    free(t.group_end);
    free(t.group_parent);
    idmap_free(&t.old_ix);
    idmap_free(&t.new_ix);
    return rc;
}
