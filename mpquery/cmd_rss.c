/* mpquery rss DB: the ledger of each selected process at its selected
 * snapshot (the last by default): where its resident memory went, line by
 * line (table ledger, written by the recorder since format version 5),
 * adding up to the process's RSS, each line's share of it, and under
 * 'heap live' and the mapping lines the stacks that hold the most (heap:
 * live bytes at that snapshot; mappings: their resident bytes). Text for
 * people, csv and json. A profile without a ledger is an error (exit 2). */
#include "mpquery.h"
#include "profile.h"
#include "commands.h"
#include "format.h"
#include "ledger.h"
#include "listing.h"
#include "load.h"
#include "opt_groups.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "tempfile.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery rss DB... [options]\n"
"\n"
"Where the resident memory (RSS) of each selected process went at its\n"
"selected snapshot (the last by default): the ledger the recorder writes\n"
"at every snapshot, one line per owner, adding up to the kernel's RSS:\n"
"heap live (requested bytes of live blocks), heap overhead (the\n"
"allocator's bytes on them), heap free (free memory the allocator keeps),\n"
"mmap anonymous and mmap file (the program's own mappings), thread\n"
"stacks, modules (loaded files' code and data), profiler (the\n"
"profiler's own memory) and unexplained (what nobody accounts for).\n"
"Under heap live, the stacks with the most live bytes; under the mmap\n"
"lines, the stacks whose mappings are the most resident.\n"
"\n";

static const char more[] =
"\n"
"Columns: line, resident (bytes in RAM), % (of rss), size (virtual: the\n"
"bytes mapped, or the allocator's; rss's: the process's virtual size),\n"
"stack, where. One table a process. The profiler's resident bytes can\n"
"exceed its size: size counts what it maps for itself (MP_MAX_MEMORY's)\n"
"and its malloc'd bytes; resident also covers its threads' stacks and\n"
"the files its libraries map while it works (libdw's debug info).\n"
"csv: pid,snapshot,line,stack,bytes,size,percent (stack empty on a line's\n"
"own row). json: {\"processes\": [{\"pid\", \"exe\", \"snapshot\", \"reason\",\n"
"\"rss\", \"lines\": [{\"line\", \"bytes\", \"size\", \"percent\", \"stacks\":\n"
"[{\"stack\", \"bytes\", \"size\", \"percent\", \"frames\"}]}]}]}\n"
"\n"
"examples:\n"
"  mpquery rss app.db\n"
"  mpquery rss app.db --snapshot 3 -n 5\n"
"  mpquery rss app.db --format json -o ledger.json\n";

static char *limit_arg, *format_arg, *out_arg;

static const struct opt opts[] = {
    OPTION_RUN(HELP_RUN), OPTION_PID(HELP_PID), OPTION_IMAGE(HELP_IMAGE), OPTION_EXE(HELP_EXE),
    OPTION_SNAPSHOT("last (default), N (the last snapshot with seq <= N in\n"
                    "each process), id:N or label:TEXT (peak snapshots have\n"
                    "no ledger)"),
    { .name = "limit", .letter = 'n', .arg = "N", .str = &limit_arg,
      .help = "stacks under each line (default 3, 0 = none)" },
    { .name = "format", .arg = "F", .str = &format_arg, .help = "text (default), csv or json" },
    { .name = "output", .letter = 'o', .arg = "FILE", .str = &out_arg, .help = "write to FILE instead of stdout" },
    OPTIONS_RULES("a rules file for the stacks' names (repeatable)"),
    OPTIONS_DISPLAY("frames: with file:line; all of a Python stack's; without inlined\nframes; by module"),
    OPTION_DEPTH,
    OPTIONS_READABLE,
    { 0 },
};

/* ---------------------------------------------------------------- the values */

/* One line of a process's ledger and its top stacks. */
struct top { uint32_t stack; int64_t bytes, size; };
struct line { const char *name; int64_t bytes, size; struct top *top; size_t ntop; };
struct ledger {
    uint32_t proc, snapshot;
    int64_t rss;
    struct line lines[LEDGER_NLINES + 16];
    size_t nlines;
};

static int64_t ledger_line_order(const char *name)
{
    for (int i = 0; i < LEDGER_NLINES; i++) if (!strcmp(ledger_lines[i], name)) return i;
    return LEDGER_NLINES;
}

static int cmp_lines(const void *a, const void *b)
{
    const struct line *x = a, *y = b;
    int64_t ox = ledger_line_order(x->name), oy = ledger_line_order(y->name);
    return ox != oy ? (ox < oy ? -1 : 1) : strcmp(x->name, y->name);
}

/* The rows of a process's chain (its non-peak snapshots up to snap, by
 * seq): per (stack, thread) the latest one; key(i) gives row i's stack,
 * thread and snapshot. Returns the chosen rows' indexes (malloc'd). */
struct chain_row { uint32_t stack, thread, seq, row; };
static int cmp_chain(const void *a, const void *b)
{
    const struct chain_row *x = a, *y = b;
    if (x->stack != y->stack) return x->stack < y->stack ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static size_t chain_latest(const struct profile *p, uint32_t snap, size_t nrows,
                           void (*key)(const struct profile *p, size_t i, uint32_t *snapshot, uint32_t *stack,
                                       uint32_t *thread),
                           uint32_t **out)
{
    const struct snapshot *s = &p->snapshots[snap];
    struct chain_row *c = xmalloc((nrows ? nrows : 1) * sizeof *c);
    size_t n = 0;
    for (size_t i = 0; i < nrows; i++) {
        uint32_t rs, stack, thread;
        key(p, i, &rs, &stack, &thread);
        if (rs == NONE || stack == NONE || thread == NONE) continue;
        const struct snapshot *r = &p->snapshots[rs];
        if (r->process != s->process || r->peak || r->seq > s->seq) continue;
        c[n++] = (struct chain_row){ stack, thread, (uint32_t)r->seq, (uint32_t)i };
    }
    qsort(c, n, sizeof *c, cmp_chain);
    uint32_t *rows = xmalloc((n ? n : 1) * sizeof *rows);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (i + 1 == n || c[i + 1].stack != c[i].stack || c[i + 1].thread != c[i].thread) rows[m++] = c[i].row;
    free(c);
    *out = rows;
    return m;
}

static void sample_key(const struct profile *p, size_t i, uint32_t *snapshot, uint32_t *stack, uint32_t *thread)
{
    *snapshot = p->samples[i].snapshot, *stack = p->samples[i].stack, *thread = p->samples[i].thread;
}

/* A mapping stack's kind, from its leaf frame ('[mmap]' module): 'mmap
 * anonymous' for anonymous, anonymous shared and brk, else 'mmap file'. */
static int map_is_file(const struct profile *p, uint32_t stack)
{
    const struct frame *f = &p->frames[p->stacks[stack].frame];
    if (f->function == NONE) return 1;
    const char *name = p->functions[f->function];
    return strcmp(name, "anonymous") && strcmp(name, "anonymous shared") && strcmp(name, "brk");
}

static int cmp_top(const void *a, const void *b)
{
    const struct top *x = a, *y = b;
    return x->bytes != y->bytes ? (x->bytes > y->bytes ? -1 : 1) : (x->stack > y->stack) - (x->stack < y->stack);
}

/* The limit largest of per-stack values vals (indexed by stack), into l. */
static void take_top(struct line *l, const int64_t *bytes, const int64_t *size, size_t nstacks, size_t limit)
{
    struct top *all = xmalloc((nstacks ? nstacks : 1) * sizeof *all);
    size_t n = 0;
    for (size_t s = 0; s < nstacks; s++)
        if (bytes[s] > 0) all[n++] = (struct top){ (uint32_t)s, bytes[s], size[s] };
    qsort(all, n, sizeof *all, cmp_top);
    l->ntop = n < limit ? n : limit;
    l->top = all;
}

static struct line *line_named(struct ledger *g, const char *name)
{
    for (size_t i = 0; i < g->nlines; i++) if (!strcmp(g->lines[i].name, name)) return &g->lines[i];
    return NULL;
}

/* The stacks under heap live (memlive) and the mapping lines (rss). */
static void find_tops(const struct profile *p, struct ledger *g, size_t limit)
{
    int64_t *bytes[3], *size[3];
    for (int k = 0; k < 3; k++) bytes[k] = xcalloc(p->nstacks + 1, sizeof *bytes[k]), size[k] = xcalloc(p->nstacks + 1, sizeof *size[k]);
    uint32_t *rows;
    size_t n = chain_latest(p, g->snapshot, p->nsamples, sample_key, &rows);
    for (size_t i = 0; i < n; i++) {
        const struct sample *s = &p->samples[rows[i]];
        if (s->c.v[NMAP] || s->c.v[MAPPED] || s->c.v[RSS]) {      /* a mapping's row */
            int k = 1 + map_is_file(p, s->stack);
            bytes[k][s->stack] += s->c.v[RSS], size[k][s->stack] += s->c.v[MAPPED];
        } else {
            bytes[0][s->stack] += s->c.v[MEMLIVE], size[0][s->stack] += s->c.v[MEMLIVE];
        }
    }
    free(rows);
    static const char *const names[3] = { "heap live", "mmap anonymous", "mmap file" };
    for (int k = 0; k < 3; k++) {
        struct line *l = line_named(g, names[k]);
        if (l) take_top(l, bytes[k], size[k], p->nstacks, limit);
        free(bytes[k]), free(size[k]);
    }
}

/* Process i's ledger at its selected snapshot; 0, or the error's exit code
 * (reported). */
static int ledger_of(const struct profile *p, uint32_t proc, uint32_t snap, size_t limit, struct ledger *g)
{
    memset(g, 0, sizeof *g);
    g->proc = proc, g->snapshot = snap;
    const struct process *pr = &p->procs[proc];
    if (p->snapshots[snap].peak)
        return error(EXIT_BAD_INPUT, "%s: pid %lld: snapshot %lld is a peak snapshot, which has no ledger", p->path,
                     (long long)pr->pid, (long long)p->snapshots[snap].seq);
    for (size_t i = 0; i < p->nledger; i++) {
        const struct ledger_row *r = &p->ledger[i];
        if (r->snapshot != snap || g->nlines == sizeof g->lines / sizeof g->lines[0]) continue;
        if (!strcmp(r->line, "rss")) g->rss = r->bytes;
        g->lines[g->nlines++] = (struct line){ r->line, r->bytes, r->size, NULL, 0 };
    }
    if (!g->nlines)
        return error(EXIT_BAD_INPUT, "%s: pid %lld: no ledger at snapshot %lld (the recorder writes one at every "
                     "snapshot but peaks, since format version 5)", p->path, (long long)pr->pid,
                     (long long)p->snapshots[snap].seq);
    qsort(g->lines, g->nlines, sizeof g->lines[0], cmp_lines);
    if (limit) find_tops(p, g, limit);
    return 0;
}

static void ledger_free(struct ledger *g)
{
    for (size_t i = 0; i < g->nlines; i++) free(g->lines[i].top);
}

static double percent(int64_t v, int64_t rss)
{
    return rss > 0 ? 100.0 * (double)v / (double)rss : 0;
}

/* ---------------------------------------------------------------- output */

struct out {
    const struct common *c;
    const struct profile *p;
    const struct dtree *t;
    const uint32_t *stack_node;
    int format;
    FILE *f;
};

static void print_text(const struct out *o, const struct ledger *g)
{
    const struct profile *p = o->p;
    const struct process *pr = &p->procs[g->proc];
    const struct snapshot *s = &p->snapshots[g->snapshot];
    char rss[32];
    fmt_size(o->c->out.human, g->rss, rss, sizeof rss);
    const char *exe = strrchr(pr->exe, '/') ? strrchr(pr->exe, '/') + 1 : pr->exe;
    text_printf(o->f, "pid %lld %s, snapshot %lld (%s): rss %s", (long long)pr->pid, exe, (long long)s->seq,
                s->reason, rss);
    fputc('\n', o->f);
    static const char *const cols[] = { "line", "resident", "%", "size", "stack", "where" };
    struct table tab;
    table_init(&tab, 6, cols);
    tab.width = o->c->out.width;
    size_t cap = 16, nrows = 0;
    uint32_t *nodes = xmalloc(cap * sizeof *nodes);
    for (size_t i = 0; i < g->nlines; i++) {
        const struct line *l = &g->lines[i];
        if (nrows + l->ntop + 1 > cap) cap = (nrows + l->ntop + 1) * 2, nodes = xrealloc(nodes, cap * sizeof *nodes);
        table_str(&tab, l->name);
        table_counter(&tab, MEMLIVE, l->bytes, o->c->out.human);
        table_num(&tab, percent(l->bytes, g->rss), 1);
        if (l->size) table_counter(&tab, MEMLIVE, l->size, o->c->out.human);
        else table_str(&tab, "");
        table_str(&tab, ""), table_str(&tab, "");
        nodes[nrows++] = NONE;
        for (size_t k = 0; k < l->ntop; k++) {
            const struct top *x = &l->top[k];
            table_str(&tab, "");
            table_counter(&tab, MEMLIVE, x->bytes, o->c->out.human);
            table_num(&tab, percent(x->bytes, g->rss), 1);
            table_counter(&tab, MEMLIVE, x->size, o->c->out.human);
            table_int(&tab, p->stacks[x->stack].id);
            table_str(&tab, "");
            nodes[nrows++] = o->stack_node[x->stack];
        }
    }
    table_where_column(&tab, 5, o->t, nodes, listing_depth(o->c));
    table_print(&tab, FMT_TEXT, o->f);
    table_free(&tab);
    free(nodes);
}

static void csv_rows(const struct out *o, const struct ledger *g, struct table *tab)
{
    const struct profile *p = o->p;
    for (size_t i = 0; i < g->nlines; i++) {
        const struct line *l = &g->lines[i];
        for (size_t k = 0; k <= l->ntop; k++) {
            table_int(tab, p->procs[g->proc].pid);
            table_int(tab, p->snapshots[g->snapshot].seq);
            table_str(tab, l->name);
            if (!k) table_null(tab);
            else table_int(tab, p->stacks[l->top[k - 1].stack].id);
            int64_t bytes = k ? l->top[k - 1].bytes : l->bytes;
            table_int(tab, bytes);
            table_int(tab, k ? l->top[k - 1].size : l->size);
            table_num(tab, percent(bytes, g->rss), 2);
        }
    }
}

static void json_ledger(const struct out *o, const struct ledger *g, struct json *w)
{
    const struct profile *p = o->p;
    const struct process *pr = &p->procs[g->proc];
    const struct snapshot *s = &p->snapshots[g->snapshot];
    json_break(w, 2);
    json_open(w, '{');
    json_key(w, "pid"), json_int(w, pr->pid);
    json_key(w, "exe"), json_str(w, pr->exe);
    json_key(w, "snapshot"), json_int(w, s->seq);
    json_key(w, "reason"), json_str(w, s->reason);
    json_key(w, "rss"), json_int(w, g->rss);
    json_key(w, "lines");
    json_open(w, '[');
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < g->nlines; i++) {
        const struct line *l = &g->lines[i];
        json_break(w, 4);
        json_open(w, '{');
        json_key(w, "line"), json_str(w, l->name);
        json_key(w, "bytes"), json_int(w, l->bytes);
        json_key(w, "size"), json_int(w, l->size);
        json_key(w, "percent"), json_fixed(w, percent(l->bytes, g->rss), 2);
        json_key(w, "stacks");
        json_open(w, '[');
        for (size_t k = 0; k < l->ntop; k++) {
            const struct top *x = &l->top[k];
            json_open(w, '{');
            json_key(w, "stack"), json_int(w, p->stacks[x->stack].id);
            json_key(w, "bytes"), json_int(w, x->bytes);
            json_key(w, "size"), json_int(w, x->size);
            json_key(w, "percent"), json_fixed(w, percent(x->bytes, g->rss), 2);
            sb.len = 0;
            dtree_frames_json(o->t, o->stack_node[x->stack], &sb);
            json_key(w, "frames"), json_raw(w, sb.s ? sb.s : "[]");
            json_close(w, '}');
        }
        json_close(w, ']');
        json_close(w, '}');
    }
    sb_free(&sb);
    json_break(w, 2);
    json_close(w, ']');
    json_close(w, '}');
}

static void print_all(const struct out *o, const struct ledger *g, size_t n)
{
    if (o->format == FMT_TEXT) {
        for (size_t i = 0; i < n; i++) {
            if (i) fputc('\n', o->f);
            print_text(o, &g[i]);
        }
    } else if (o->format == FMT_CSV) {
        static const char *const cols[] = { "pid", "snapshot", "line", "stack", "bytes", "size", "percent" };
        struct table tab;
        table_init(&tab, 7, cols);
        for (size_t i = 0; i < n; i++) csv_rows(o, &g[i], &tab);
        table_print(&tab, FMT_CSV, o->f);
        table_free(&tab);
    } else {
        struct json w;
        json_init(&w, o->f);
        json_open(&w, '{');
        json_key(&w, "processes");
        json_open(&w, '[');
        for (size_t i = 0; i < n; i++) json_ledger(o, &g[i], &w);
        json_break(&w, 0);
        json_close(&w, ']');
        json_close(&w, '}');
        fputc('\n', o->f);
    }
}

/* ---------------------------------------------------------------- the command */

static int parse_args(struct common *c, size_t *limit)
{
    int64_t n = 3;
    if (limit_arg && (parse_int64(limit_arg, &n) || n < 0)) return bad_value("rss", "-n", limit_arg, "a count >= 0");
    *limit = (size_t)n;
    c->out.format = FMT_TEXT;
    if (format_arg) {
        c->out.format = format_parse(format_arg);
        if (c->out.format != FMT_TEXT && c->out.format != FMT_CSV && c->out.format != FMT_JSON)
            return bad_value("rss", "--format", format_arg, "text, csv or json");
    }
    if (c->sel.snap_kind == SNAP_PEAK) return usage_error("rss", "--snapshot peak: peak snapshots have no ledger");
    output_readable(&c->out, &c->view);
    return 0;
}

/* The ledgers of the selected processes, printed to of; 0 or the exit
 * code. Its stacks' labels from the display tree serve keeps (kept), else
 * one built here. */
static int run(struct common *c, struct profile *p, size_t limit, const struct listing_tree *kept, struct outfile *of)
{
    if (p->version < format_tables[FT_ledger].col[0].since)
        return error(EXIT_BAD_INPUT, "%s: no ledger: the file has format version %d, the ledger came with version %d",
                     p->path, p->version, format_tables[FT_ledger].col[0].since);
    struct selection sel;
    int rc = select_or_report(c, p, &sel);
    if (rc) return rc;
    struct ledger *g = xcalloc(p->nprocs + 1, sizeof *g);
    size_t n = 0;
    for (uint32_t i = 0; i < p->nprocs && !rc; i++)
        if (sel.proc_snapshot[i] != NONE) rc = ledger_of(p, i, sel.proc_snapshot[i], limit, &g[n++]);
    if (!rc && !n) rc = error(EXIT_BAD_INPUT, "%s: no process with a snapshot in this selection", p->path);
    struct dtree t;
    dtree_init(&t);
    uint32_t *stack_node = kept ? kept->stack_node : xmalloc((p->nstacks + 1) * sizeof *stack_node);
    char err[512];
    if (!rc && !kept && (rc = view_build(p, &c->view, &t, stack_node, err, sizeof err))) error(rc, "rss: %s", err);
    if (!rc && !(rc = output_open(of, out_arg, OUTPUT_FILE))) {
        struct out o = { c, p, kept ? &kept->t : &t, stack_node, c->out.format, of->f };
        print_all(&o, g, n);
        rc = output_close(of, 0);
    }
    for (size_t i = 0; i < n; i++) ledger_free(&g[i]);
    free(g);
    if (!kept) free(stack_node);
    dtree_free(&t);
    selection_free(&sel);
    return rc;
}

int cmd_rss(int argc, char **argv)
{
    struct common c;
    const struct cmd_opts d = { .cmd = "rss", .usage = usage, .more = more, .opts = opts, .operands = 0,
                                .missing = "missing DB", .readable = 1 };
    limit_arg = format_arg = out_arg = NULL;
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    size_t limit = 3;
    if ((rc = parse_args(&c, &limit))) return rc;
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    if ((rc = check_output(&c, out_arg, &files, 1))) return rc;
    struct ruleset *rules;
    if ((rc = load_rules(&c, &rules))) return rc;
    struct profile *p;
    if (!(rc = load_profiles(&files, PROFILE_LEDGER, &p))) {
        struct outfile of;
        rc = run(&c, p, limit, listing_tree_kept(&c, &files), &of);
        profile_free(p);
    }
    rules_free(rules);
    return rc;
}
