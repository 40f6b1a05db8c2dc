/* mpquery export --format speedscope: speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json). One "sampled"
 * profile per counter (--by: that one), named for the counter and the
 * processes; each sample a path of the display tree with a value of that
 * counter (root first, fold's lines in fold's order), its weight the
 * value (coldage, an age, is none); units bytes, none (counts) or
 * nanoseconds (time). The frames,
 * shared by the profiles, are the labels of the tree, in the order they
 * first appear, each with the file and line of the frames that made its
 * nodes when they all have the same (with --lines, always). Samples are
 * most of a file (1 M paths: hundreds of MB): their numbers are written
 * without printf. */
#include "export.h"
#include "listing.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "select.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>

/* One label's file and line: those of every frame that made a node with
 * it (the stack frames whose node differs from their parent stack's), or
 * NONE / 0 when they differ. The "[no frames]" node was made by none. */
struct frame_info { uint32_t file; int32_t line; int seen; };

static struct frame_info *label_sources(const struct query *q, const struct dtree *t)
{
    const struct profile *p = q->p;
    struct frame_info *info = xcalloc(t->labels.n, sizeof *info);
    uint32_t no_frames = NONE;
    for (uint32_t k = t->child_start[0]; k < t->child_start[1]; k++) {
        uint32_t l = t->label[t->child_list[k]];
        if (t->labels.len[l] == strlen("[no frames]") && !memcmp(t->labels.str[l], "[no frames]", t->labels.len[l]))
            no_frames = t->child_list[k];
    }
    for (size_t s = 0; s < p->nstacks; s++) {
        uint32_t up = p->stacks[s].parent, node = q->stack_node[s];
        if (node == no_frames || node == (up == NONE ? 0 : q->stack_node[up])) continue;
        const struct frame *f = &p->frames[p->stacks[s].frame];
        struct frame_info *x = &info[t->label[node]];
        if (!x->seen) *x = (struct frame_info){ f->file, f->line, 1 };
        if (x->file != f->file) x->file = NONE;
        if (x->line != f->line) x->line = 0;
    }
    return info;
}

/* Depth-first over the nodes with a positive value of counter c under
 * them, in fold's order (children sorted by label), calling visit on each
 * with its depth; path[0..depth] are the nodes from the root's child. */
static void walk(const struct dtree *t, const counters *sub, int c, uint32_t *path,
                 void (*visit)(uint32_t node, size_t depth, void *ctx), void *ctx)
{
    uint32_t *pos = xmalloc(t->n * sizeof *pos);
    size_t sp = 0;
    pos[0] = t->child_start[0];
    path[0] = 0;
    for (;;) {
        uint32_t n = path[sp];
        if (pos[sp] == t->child_start[n + 1]) {
            if (sp-- == 0) break;
            continue;
        }
        uint32_t ch = t->child_list[pos[sp]++];
        if (sub[ch].v[c] <= 0) continue;
        path[++sp] = ch;
        pos[sp] = t->child_start[ch];
        visit(ch, sp, ctx);
    }
    free(pos);
}

struct speedscope {
    const struct dtree *t;
    const counters *own;
    uint32_t *path, *frame_of;  /* per label: frame index, NONE */
    uint32_t nframes;
    int counter;
    int64_t total;              /* of the weights written */
    size_t nsamples;
    FILE *f;
    struct strbuf line, weights;
};

static void number_frame(uint32_t node, size_t depth, void *ctx)
{
    struct speedscope *x = ctx;
    (void)depth;
    uint32_t l = x->t->label[node];
    if (x->frame_of[l] == NONE) x->frame_of[l] = x->nframes++;
}

/* Decimal digits without printf's cost: samples are most of a file. */
static void put_uint(struct strbuf *sb, uint64_t v)
{
    char digits[20];
    size_t n = 0;
    do digits[sizeof digits - ++n] = (char)('0' + v % 10); while ((v /= 10));
    sb_add(sb, digits + sizeof digits - n, n);
}

static void write_sample(uint32_t node, size_t depth, void *ctx)
{
    struct speedscope *x = ctx;
    int64_t v = x->own[node].v[x->counter];
    if (v <= 0) return;
    x->line.len = 0;
    sb_puts(&x->line, x->nsamples++ ? ",\n[" : "\n[");
    for (size_t d = 1; d <= depth; d++) {
        if (d > 1) sb_putc(&x->line, ',');
        put_uint(&x->line, x->frame_of[x->t->label[x->path[d]]]);
    }
    sb_putc(&x->line, ']');
    fwrite(x->line.s, 1, x->line.len, x->f);
    if (x->total) sb_putc(&x->weights, ',');
    put_uint(&x->weights, (uint64_t)v);
    x->total = sat_add(x->total, v);
}

static void write_frames(struct speedscope *x, const struct query *q)
{
    const struct dtree *t = x->t;
    struct frame_info *info = label_sources(q, t);
    uint32_t *label_at = xmalloc(x->nframes * sizeof *label_at);
    for (size_t l = 0; l < t->labels.n; l++)
        if (x->frame_of[l] != NONE) label_at[x->frame_of[l]] = (uint32_t)l;
    fputs("\"shared\": {\"frames\": [", x->f);
    for (uint32_t i = 0; i < x->nframes; i++) {
        uint32_t l = label_at[i];
        x->line.len = 0;
        sb_puts(&x->line, i ? ",\n{\"name\": " : "\n{\"name\": ");
        json_string_sb(&x->line, t->labels.str[l], t->labels.len[l]);
        if (info[l].seen && info[l].file != NONE) {
            sb_puts(&x->line, ", \"file\": ");
            const char *file = q->p->files[info[l].file];
            json_string_sb(&x->line, file, strlen(file));
        }
        if (info[l].line > 0) sb_printf(&x->line, ", \"line\": %d", info[l].line);
        sb_putc(&x->line, '}');
        fwrite(x->line.s, 1, x->line.len, x->f);
    }
    fputs("]},\n", x->f);
    free(label_at);
    free(info);
}

/* "memlive of app (pid 100) at its peak" */
static void profile_name(const struct query *q, const struct common *c, int counter, struct strbuf *out)
{
    const struct select_opts *s = &c->sel;
    out->len = 0;
    sb_printf(out, "%s of ", counter_name[counter]);
    export_process_names(q, out);
    if (s->snap_kind == SNAP_PEAK) sb_puts(out, " at its peak");
    else if (s->snap_kind == SNAP_SEQ) sb_printf(out, " at snapshot %lld", (long long)s->snap_value);
    else if (s->snap_kind == SNAP_ID) sb_printf(out, " at snapshot id:%lld", (long long)s->snap_value);
    else if (s->snap_kind == SNAP_LABEL) sb_printf(out, " at snapshot label:%s", s->snap_label);
}

static const char *unit_of(int counter)
{
    if (!counter_has_unit(counter)) return "none";
    return counter == TIME ? "nanoseconds" : "bytes";
}

int export_speedscope(struct listing *l, const struct export_opts *o, FILE *f)
{
    struct dtree *t = &l->t;
    const struct query *q = &l->q[0];
    /* an age (coldage) is no weight: it adds up to nothing */
    int k[NSTACK_COUNTERS], nk = o->by >= 0 ? (k[0] = o->by, 1) : counter_list(shown_counters(q->p) & ~MAX_COUNTERS, k);
    counters *sub = xmalloc(t->n * sizeof *sub);
    dtree_subtotals(t, l->own[0], sub);
    dtree_children(t, 1);
    struct speedscope x = { .t = t, .own = l->own[0], .f = f };
    x.path = xmalloc((t->n + 1) * sizeof *x.path);
    x.frame_of = none_array(t->labels.n);
    for (int i = 0; i < nk; i++) walk(t, sub, k[i], x.path, number_frame, &x);

    struct strbuf name = { 0 };
    fputs("{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n", f);
    fprintf(f, "\"exporter\": \"mpquery %s\",\n\"name\": ", MPQ_VERSION);
    json_string(f, path_basename(o->db), strlen(path_basename(o->db)));
    int active = 0;
    for (int i = 0; i < nk; i++) if (k[i] == l->c->out.by) active = i;
    fprintf(f, ",\n\"activeProfileIndex\": %d,\n", active);
    write_frames(&x, q);
    fputs("\"profiles\": [", f);
    for (int i = 0; i < nk; i++) {
        int c = k[i];
        profile_name(q, l->c, c, &name);
        fputs(i > 0 ? ",\n{\"type\": \"sampled\", \"name\": " : "\n{\"type\": \"sampled\", \"name\": ", f);
        json_string(f, name.s, name.len);
        fprintf(f, ", \"unit\": \"%s\", \"startValue\": 0,\n\"samples\": [", unit_of(c));
        x.counter = c;
        x.total = 0;
        x.nsamples = 0;
        x.weights.len = 0;
        sb_add(&x.weights, "", 0);
        walk(t, sub, c, x.path, write_sample, &x);
        fprintf(f, "],\n\"weights\": [%s],\n\"endValue\": %lld}", x.weights.s, (long long)x.total);
    }
    fputs("]}\n", f);
    sb_free(&name);
    sb_free(&x.line);
    sb_free(&x.weights);
    free(x.path);
    free(x.frame_of);
    free(sub);
    return 0;
}

