/* mpquery export --format massif: one process's snapshots as valgrind
 * massif's massif.out, for ms_print and massif-visualizer. Each snapshot
 * of the process (in order, its peaks included) is one massif snapshot,
 * "detailed", the process's peak (its latest 'peak' snapshot) "peak";
 * time is milliseconds since the process started, or (--time-unit B) the
 * bytes allocated so far, as massif's --time-unit=B; mem_heap_B is the
 * live bytes of the selected stacks (those of allocations without a stack
 * are not in any tree), extra and stacks 0.
 *
 * The tree is massif's: allocation sites by live bytes, leaf first (the
 * root's children are the innermost locations, their children the
 * callers), a location's inlined frames one line each, innermost first,
 * each with one child. As massif (coregrind/m_xtree.c) does it, siblings
 * are sorted by size, largest first, and those below the threshold
 * (--threshold, percent of mem_heap_B, truncated to bytes) are merged into
 * one "in N places, all below massif's threshold (1.00%)" line (or "in 1
 * place, below ..."), which sorts first among equal sizes. A frame is
 * "0xOFFSET: name (file:line)" (OFFSET in its module), or its name alone
 * when it is no address ([tag] A). (ms_print reads '#' as the start of a
 * comment: a name with '#' is cut there in its output.)
 *
 * Values at each snapshot follow the chain of sample rows (select.c): a
 * snapshot stores the rows that changed, so the running value of each
 * (stack, thread) is updated by the rows of each snapshot in turn; a peak
 * snapshot's rows count for it alone, and are taken back after it. */
#include "export.h"
#include "listing.h"
#include "output.h"
#include "view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct massif {
    const struct profile *p;
    const struct query *q;
    const struct dtree *t;
    const struct sites *s;
    const struct export_opts *o;
    FILE *f;
    int64_t *live, *total;          /* per stack: memlive, memtot now (selected threads) */
    int64_t *site_live;             /* per site */
    struct member *members;         /* per site with live bytes */
    struct strbuf line;
};

/* ---------------------------------------------------------------- the tree */
/* The tree is made as massif makes it, top-down: the sites with live
 * bytes (members) are sorted by their location at the current depth
 * (`at`: the site whose last location that is), each run of one location
 * is a group, and only the groups at or above the threshold are split
 * further, each in its own range of the array: the cost is that of the
 * groups printed, however many sites lie below the threshold. */
struct member { uint32_t at, loc; int64_t bytes; };

/* A group: members[first..end) at one location, or (loc NONE) the
 * siblings below the threshold merged, `places` of them. */
struct group { uint32_t loc, first, end, places; int64_t bytes; uint64_t address; };

static int member_cmp(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    return (x->loc > y->loc) - (x->loc < y->loc);
}

static uint64_t loc_address(const struct massif *m, uint32_t loc)
{
    while (m->s->loc_parent[loc] != NONE) loc = m->s->loc_parent[loc];
    uint32_t frame = m->s->loc_frame[loc];
    return frame == NONE ? 0 : (uint64_t)m->p->frames[frame].offset;
}

/* Largest first; among equals the merged group (massif's address 0), then
 * by address and location. */
static int group_cmp(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    if ((x->loc == NONE) != (y->loc == NONE)) return x->loc == NONE ? -1 : 1;
    if (x->address != y->address) return x->address < y->address ? -1 : 1;
    return (x->loc > y->loc) - (x->loc < y->loc);
}

/* The groups of members[first..end) by their current location into out
 * (room for end - first + 1); returns how many. Members whose path has
 * no location left (at 0) belong to no group. */
static size_t make_groups(struct massif *m, uint32_t first, uint32_t end, int64_t sig_bytes, struct group *out)
{
    struct member *mb = m->members;
    uint32_t last = end;
    for (uint32_t i = first; i < last;)     /* ended paths dropped: replaced by the last one */
        if (mb[i].at == 0) mb[i] = mb[--last];
        else i++;
    qsort(mb + first, last - first, sizeof *mb, member_cmp);
    size_t n = 0;
    struct group insig = { NONE, 0, 0, 0, 0, 0 };
    for (uint32_t i = first; i < last;) {
        uint32_t j = i;
        int64_t bytes = 0;
        while (j < last && mb[j].loc == mb[i].loc) bytes += mb[j++].bytes;
        if (bytes < sig_bytes) insig.places++, insig.bytes += bytes;
        else out[n++] = (struct group){ mb[i].loc, i, j, 1, bytes, loc_address(m, mb[i].loc) };
        i = j;
    }
    if (insig.places) out[n++] = insig;
    qsort(out, n, sizeof *out, group_cmp);
    return n;
}

/* The members of a group one location up their paths (their callers). */
static void step_up(struct massif *m, const struct group *g)
{
    for (uint32_t i = g->first; i < g->end; i++) {
        struct member *x = &m->members[i];
        x->at = m->s->parent[x->at];
        x->loc = x->at ? m->s->loc[x->at] : NONE;
    }
}

/* Control characters as spaces: one tree node, one line. */
static void text_spaces(struct strbuf *sb)
{
    for (size_t i = 0; i < sb->len; i++)
        if ((unsigned char)sb->s[i] < 0x20 || sb->s[i] == 0x7f) sb->s[i] = ' ';
}

/* "0x1091D3: do_malloc (alloc_functions.c:21)", "(in MODULE)" without a
 * file, as valgrind describes an address; a Python frame, which has no
 * address, as "raw_decode (decoder.py:353)"; a special frame ([tag] A,
 * [truncated], [no frames]...) by its name alone. Control characters as
 * spaces. */
static void describe(struct massif *m, uint32_t frame, uint32_t label)
{
    const struct profile *p = m->p;
    struct strbuf *sb = &m->line;
    const char *name = m->t->labels.str[label];
    size_t len = m->t->labels.len[label];
    const struct frame *f = frame == NONE ? NULL : &p->frames[frame];
    sb->len = 0;
    if (!f || p->modules[f->module].special) {
        sb_add(sb, name, len);
        text_spaces(sb);
        return;
    }
    if (frame_has_address(p, f)) sb_printf(sb, "0x%llX: ", (unsigned long long)f->offset);
    sb_add(sb, name, len);
    if (f->file == NONE) sb_printf(sb, " (in %s)", p->modules[f->module].path);
    else if (f->line > 0) sb_printf(sb, " (%s:%d)", path_basename(p->files[f->file]), f->line);
    else sb_printf(sb, " (%s)", path_basename(p->files[f->file]));
    text_spaces(sb);
}

/* A group's lines: its location's frames innermost first, each inlined
 * one with one child, the last with `groups`; returns the indent after
 * them. */
static unsigned print_location(struct massif *m, const struct group *g, unsigned indent, size_t groups)
{
    for (uint32_t k = g->loc; k != NONE; k = m->s->loc_parent[k]) {
        describe(m, m->s->loc_frame[k], m->s->loc_label[k]);
        int outer = m->s->loc_parent[k] == NONE;
        fprintf(m->f, "%*sn%zu: %lld %s\n", (int)indent + 1, "", outer ? groups : 1, (long long)g->bytes,
                m->line.s);
        if (!outer) indent++;
    }
    return indent;
}

/* The tree of the n members, depth-first without recursion (stacks may be
 * deep): a group taken from the stack of work is stepped up to its
 * callers, split, printed, and its groups pushed. */
static void print_tree(struct massif *m, uint32_t n, int64_t heap)
{
    int64_t sig_bytes = heap == 0 && m->o->threshold != 0 ? 1 : (int64_t)((double)heap * m->o->threshold / 100);
    struct group *g = xmalloc((n + 1) * sizeof *g);
    struct work { struct group g; unsigned indent; } *todo = xmalloc((n + 1) * sizeof *todo);
    size_t ntodo = 0, ng = make_groups(m, 0, n, sig_bytes, g);
    fprintf(m->f, "n%zu: %lld (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n", ng,
            (long long)heap);
    for (size_t i = ng; i-- > 0;) todo[ntodo++] = (struct work){ g[i], 0 };
    while (ntodo) {
        struct work w = todo[--ntodo];
        if (w.g.loc == NONE) {
            fprintf(m->f, "%*sn0: %lld in %u place%s below massif's threshold (%.2f%%)\n", (int)w.indent + 1, "",
                    (long long)w.g.bytes, w.g.places, w.g.places == 1 ? "," : "s, all", m->o->threshold);
            continue;
        }
        step_up(m, &w.g);
        ng = make_groups(m, w.g.first, w.g.end, sig_bytes, g);
        unsigned indent = print_location(m, &w.g, w.indent, ng);
        for (size_t i = ng; i-- > 0;) todo[ntodo++] = (struct work){ g[i], indent + 1 };
    }
    free(g);
    free(todo);
}

/* ---------------------------------------------------------------- snapshots */
/* One massif snapshot from the running values. */
static void print_snapshot(struct massif *m, size_t num, uint32_t snapshot, int is_peak)
{
    const struct profile *p = m->p;
    const struct process *pr = &p->procs[p->snapshots[snapshot].process];
    memset(m->site_live, 0, m->s->n * sizeof *m->site_live);
    int64_t allocated = 0;
    for (size_t i = 0; i < p->nstacks; i++) {
        if (m->t->left_out && m->t->left_out[m->q->stack_node[i]]) continue;
        m->site_live[m->s->stack_site[i]] = sat_add(m->site_live[m->s->stack_site[i]], m->live[i]);
        allocated = sat_add(allocated, m->total[i]);
    }
    uint32_t n = 0;
    int64_t heap = 0;
    for (uint32_t i = 1; i < m->s->n; i++) {
        if (m->site_live[i] <= 0) continue;
        m->members[n++] = (struct member){ i, m->s->loc[i], m->site_live[i] };
        heap = sat_add(heap, m->site_live[i]);
    }
    double ms = (p->snapshots[snapshot].time - pr->start_time) * 1000;
    long long time = m->o->time_bytes ? (long long)allocated : ms > 0 && ms < 9e18 ? llround(ms) : 0;
    fprintf(m->f, "#-----------\nsnapshot=%zu\n#-----------\ntime=%lld\nmem_heap_B=%lld\n"
                  "mem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=%s\n",
            num, time, (long long)heap, is_peak ? "peak" : "detailed");
    print_tree(m, n, heap);
}

/* Adds sign * row i's values to the running values. */
static void apply_row(struct massif *m, uint32_t i, int sign)
{
    const struct sample *sa = &m->p->samples[i];
    m->live[sa->stack] = sat_add(m->live[sa->stack], sign * sa->c.v[MEMLIVE]);
    m->total[sa->stack] = sat_add(m->total[sa->stack], sign * sa->c.v[MEMTOT]);
}

/* The position of sample row i's snapshot among pr's, or NONE when it is
 * another process's or of a thread not selected. */
static uint32_t row_snapshot(const struct massif *m, const struct process *pr, size_t i)
{
    const struct sample *sa = &m->p->samples[i];
    if (sa->snapshot < pr->first_snapshot || sa->snapshot - pr->first_snapshot >= pr->nsnapshots
        || !m->q->sel.thread_ok[sa->thread])
        return NONE;
    return sa->snapshot - pr->first_snapshot;
}

/* Per snapshot of the process, its sample rows of selected threads:
 * rows[start[k]..start[k + 1]) for the process's k-th snapshot. */
static uint32_t *snapshot_rows(const struct massif *m, const struct process *pr, size_t **start_out)
{
    const struct profile *p = m->p;
    size_t *start = xcalloc(pr->nsnapshots + 2, sizeof *start);
    for (size_t i = 0; i < p->nsamples; i++) {
        uint32_t k = row_snapshot(m, pr, i);
        if (k != NONE) start[k + 2]++;
    }
    for (size_t k = 1; k <= pr->nsnapshots; k++) start[k + 1] += start[k];
    uint32_t *rows = xmalloc(start[pr->nsnapshots + 1] * sizeof *rows);
    for (size_t i = 0; i < p->nsamples; i++) {
        uint32_t k = row_snapshot(m, pr, i);
        if (k != NONE) rows[start[k + 1]++] = (uint32_t)i;
    }
    *start_out = start;
    return rows;
}

/* Every snapshot of process pr in order. The rows of a snapshot replace
 * the values of their (stack, thread) in the chain; a peak's rows replace
 * them for the peak alone, and are taken back after it. */
static void print_snapshots(struct massif *m, const struct process *pr)
{
    const struct profile *p = m->p;
    size_t *start;
    uint32_t *rows = snapshot_rows(m, pr, &start);
    struct idmap chain;         /* (thread, stack) -> its latest row in the chain */
    idmap_init(&chain, 1024);
    uint32_t peak = NONE;
    for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++)
        if (p->snapshots[j].peak) peak = j;
    for (uint32_t k = 0; k < pr->nsnapshots; k++) {
        uint32_t j = pr->first_snapshot + k;
        int is_peak = p->snapshots[j].peak;
        for (size_t r = start[k]; r < start[k + 1]; r++) {
            const struct sample *sa = &p->samples[rows[r]];
            uint64_t key = (uint64_t)sa->thread << 32 | sa->stack;
            uint32_t prev = idmap_get(&chain, key);
            if (prev != NONE) apply_row(m, prev, -1);
            apply_row(m, rows[r], 1);
            if (!is_peak) *idmap_put(&chain, key, &(int){ 0 }) = rows[r];
        }
        print_snapshot(m, k, j, j == peak);
        for (size_t r = start[k]; is_peak && r < start[k + 1]; r++) {
            const struct sample *sa = &p->samples[rows[r]];
            uint32_t prev = idmap_get(&chain, (uint64_t)sa->thread << 32 | sa->stack);
            apply_row(m, rows[r], -1);
            if (prev != NONE) apply_row(m, prev, 1);
        }
    }
    idmap_free(&chain);
    free(rows);
    free(start);
}

int export_massif(struct listing *l, const struct export_opts *o, FILE *f)
{
    const struct query *q = &l->q[0];
    const struct profile *p = q->p;
    const struct process *pr = NULL;
    for (size_t i = 0; i < p->nprocs && !pr; i++)
        if (q->sel.proc_snapshot[i] != NONE) pr = &p->procs[i];
    if (!pr) return error(EXIT_BAD_INPUT, "%s: no process selected", o->db);
    struct sites s;
    sites_build(&s, q, &l->t);
    struct massif m = { .p = p, .q = q, .t = &l->t, .s = &s, .o = o, .f = f };
    m.live = xcalloc(p->nstacks, sizeof *m.live);
    m.total = xcalloc(p->nstacks, sizeof *m.total);
    m.site_live = xmalloc(s.n * sizeof *m.site_live);
    m.members = xmalloc(s.n * sizeof *m.members);

    fprintf(f, "desc: mallocprof profile %s, pid %lld, --time-unit=%s\ncmd: ", o->db, (long long)pr->pid,
            o->time_bytes ? "B" : "ms");
    text_clean(f, pr->cmdline, strlen(pr->cmdline));
    fprintf(f, "\ntime_unit: %s\n", o->time_bytes ? "B" : "ms");
    print_snapshots(&m, pr);

    free(m.live);
    free(m.total);
    free(m.site_live);
    free(m.members);
    sb_free(&m.line);
    sites_free(&s);
    return 0;
}
