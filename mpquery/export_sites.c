/* The stacks after rules as paths of locations (export.h: struct sites),
 * for the exports that keep addresses. Nothing here applies a rule: the
 * display tree did (view.c), and a stack's frame is shown exactly when its
 * display node differs from its parent stack's. The frame then extends
 * the parent's path (its node is a child of the parent's node), or starts
 * the path again (a `root` rule: its node is a child of the empty path);
 * otherwise (dropped, pruned, an inlined frame with --no-inline) the stack
 * has its parent's path. A stack whose every frame was dropped is on the
 * "[no frames]" node, and gets a location of that name without a frame.
 *
 * An address's frames are consecutive in a stack, the function the
 * address is in first (inline_depth 0), then the functions inlined into
 * it: a shown frame joins the location of the last shown frame when both
 * belong to that one occurrence of the address. */
#include "export.h"
#include "listing.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>

#define NO_FRAMES "[no frames]"

/* The location `parent` with frame added as its innermost, or a location
 * of that frame alone (parent NONE). */
static uint32_t location(struct sites *s, uint32_t parent, uint32_t frame, uint32_t label)
{
    int created;
    uint64_t key = (uint64_t)(parent == NONE ? 0 : parent + 1) << 32 | frame;
    uint32_t *v = idmap_put(&s->loc_map, key, &created);
    if (!created) return *v;
    if (s->nlocs == s->loc_cap) {
        s->loc_cap = s->loc_cap ? 2 * s->loc_cap : 1024;
        s->loc_parent = xrealloc(s->loc_parent, s->loc_cap * sizeof *s->loc_parent);
        s->loc_frame = xrealloc(s->loc_frame, s->loc_cap * sizeof *s->loc_frame);
        s->loc_label = xrealloc(s->loc_label, s->loc_cap * sizeof *s->loc_label);
    }
    s->loc_parent[s->nlocs] = parent;
    s->loc_frame[s->nlocs] = frame;
    s->loc_label[s->nlocs] = label;
    return *v = (uint32_t)s->nlocs++;
}

/* The site of path `parent` followed by location loc. */
static uint32_t site(struct sites *s, uint32_t parent, uint32_t loc)
{
    int created;
    uint32_t *v = idmap_put(&s->site_map, (uint64_t)parent << 32 | loc, &created);
    if (!created) return *v;
    if (s->n == s->cap) {
        s->cap *= 2;
        s->parent = xrealloc(s->parent, s->cap * sizeof *s->parent);
        s->loc = xrealloc(s->loc, s->cap * sizeof *s->loc);
    }
    s->parent[s->n] = parent;
    s->loc[s->n] = loc;
    return *v = (uint32_t)s->n++;
}

/* The display node of stacks whose frames were all dropped, or NONE. */
static uint32_t empty_node(struct dtree *t)
{
    uint32_t label = strtab_intern(&t->labels, NO_FRAMES, strlen(NO_FRAMES));
    return idmap_get(&t->child, label);         /* (0 << 32) | label: a child of the empty path */
}

static int same_address(const struct profile *p, uint32_t a, uint32_t b)
{
    return p->frames[a].module == p->frames[b].module && p->frames[a].offset == p->frames[b].offset;
}

void sites_build(struct sites *s, const struct query *q, struct dtree *t)
{
    const struct profile *p = q->p;
    const uint32_t *node = q->stack_node;
    memset(s, 0, sizeof *s);
    idmap_init(&s->loc_map, 1024);
    idmap_init(&s->site_map, p->nstacks + 1);
    s->cap = p->nstacks + 1;
    s->parent = xmalloc(s->cap * sizeof *s->parent);
    s->loc = xmalloc(s->cap * sizeof *s->loc);
    s->parent[0] = s->loc[0] = NONE;
    s->n = 1;
    s->stack_site = xmalloc(p->nstacks * sizeof *s->stack_site);
    /* per stack: the first stack of its address's occurrence; the last
     * stack of its path whose frame is shown (NONE: none) */
    uint32_t *occ = xmalloc(p->nstacks * sizeof *occ), *shown = xmalloc(p->nstacks * sizeof *shown);
    uint32_t empty = empty_node(t), empty_site = NONE;
    for (size_t k = 0; k < p->nstacks; k++) {
        uint32_t i = p->stack_order[k], up = p->stacks[i].parent, frame = p->stacks[i].frame;
        occ[i] = up != NONE && p->frames[frame].inline_depth > 0 && same_address(p, frame, p->stacks[up].frame)
                 ? occ[up] : i;
        uint32_t up_node = up == NONE ? 0 : node[up], up_site = up == NONE ? 0 : s->stack_site[up];
        uint32_t up_shown = up == NONE ? NONE : shown[up], n = node[i];
        if (n == empty) {
            if (empty_site == NONE) empty_site = site(s, 0, location(s, NONE, NONE, t->label[n]));
            s->stack_site[i] = empty_site;
            shown[i] = NONE;
        } else if (n == up_node) {
            s->stack_site[i] = up_site;
            shown[i] = up_shown;
        } else if (t->parent[n] == up_node && up_site != 0 && up_shown != NONE && occ[up_shown] == occ[i]) {
            /* an inlined frame of the address of the path's last location */
            uint32_t loc = location(s, s->loc[up_site], frame, t->label[n]);
            s->stack_site[i] = site(s, s->parent[up_site], loc);
            shown[i] = i;
        } else {
            uint32_t base = t->parent[n] == up_node ? up_site : 0;     /* else a root rule restarted it */
            s->stack_site[i] = site(s, base, location(s, NONE, frame, t->label[n]));
            shown[i] = i;
        }
    }
    free(occ);
    free(shown);
}

void sites_free(struct sites *s)
{
    free(s->loc_parent);
    free(s->loc_frame);
    free(s->loc_label);
    free(s->parent);
    free(s->loc);
    free(s->stack_site);
    idmap_free(&s->loc_map);
    idmap_free(&s->site_map);
    memset(s, 0, sizeof *s);
}

counters *sites_counters(const struct sites *s, const struct query *q, const struct dtree *t)
{
    counters *c = xcalloc(s->n, sizeof *c);
    for (size_t r = 0; r < q->p->nrecorded; r++) {
        uint32_t i = q->p->recorded[r];
        if (counters_zero(&q->sel.stack_c[r])) continue;
        if (t->left_out && t->left_out[q->stack_node[i]]) continue;
        counters_add(&c[s->stack_site[i]], &q->sel.stack_c[r]);
    }
    return c;
}

void export_process_names(const struct query *q, struct strbuf *out)
{
    const struct profile *p = q->p;
    size_t shown = 0, more = 0;
    for (size_t i = 0; i < p->nprocs; i++) {
        if (q->sel.proc_snapshot[i] == NONE) continue;
        if (shown == 3) { more++; continue; }
        sb_printf(out, "%s%s (pid %lld)", shown ? ", " : "", path_basename(p->procs[i].exe),
                  (long long)p->procs[i].pid);
        shown++;
    }
    if (more) sb_printf(out, " and %zu more", more);
    if (!shown) sb_puts(out, "no process");
}
