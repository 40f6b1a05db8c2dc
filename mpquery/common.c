/* What the commands that read profiles share: loading one and reporting
 * why it cannot be read ("mpquery: FILE: what is wrong"), the selection,
 * the rules (filters/ found next to the executable), and the skeleton of
 * top, fold, diff and leaks (rules, profiles, one display tree, counters
 * per node, what the filters left out) with the pieces of their output
 * they share. Commands return exit codes; only main exits. */
#include "mpquery.h"
#include "hists.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const counter_name[NSTACK_COUNTERS] = { "ncalls", "memtot", "nfree", "nlive", "memlive",
                                                      "maxlive", "ntemp", "time" };

int counter_parse(const char *name)
{
    for (int i = 0; i < NSTACK_COUNTERS; i++)
        if (!strcmp(name, counter_name[i])) return i;
    return -1;
}

int select_wants_peak(const struct select_opts *o)
{
    return o->snap_kind == SNAP_PEAK || o->snap_kind == SNAP_SEQ || o->snap_kind == SNAP_ID;
}

int load_profile(const char *path, int peak_rows, struct profile **p)
{
    char err[4400];
    int rc = profile_load(path, p, peak_rows, err, sizeof err);
    if (rc) return error(rc, "%s: %s", path, err);
    return 0;
}

struct dbfiles dbfiles_of(int argc, char **argv, int first)
{
    return (struct dbfiles){ argv + first, (size_t)(argc - first) };
}

/* Files merged into one profile: its name for messages, where each run
 * came from, and the runs selected by default (each file's latest). */
static void attach_sources(struct profile *p, const struct dbfiles *f, struct merge_stats *st)
{
    struct strbuf name = { 0 };
    sb_printf(&name, "%s (and %zu more)", f->paths[0], f->n - 1);
    p->path = arena_strndup(&p->text, name.s, name.len);
    sb_free(&name);
    p->db_path = arena_strndup(&p->text, p->db_path, strlen(p->db_path));
    p->sources = st->files;
    p->nsources = st->nfiles;
    p->latest_runs = xcalloc(p->nruns, 1);
    for (size_t i = 0; i < p->nsources; i++)
        for (size_t r = 0; r < p->nruns; r++)
            if (p->runs[r].id == p->sources[i].latest) p->latest_runs[r] = 1;
}

int load_profiles(const struct dbfiles *f, int peak_rows, struct profile **p)
{
    if (f->n == 1) return load_profile(f->paths[0], peak_rows, p);
    char err[4400];
    const char *tmp;
    struct merge_stats st;
    int rc = merge_temporary(f->paths, f->n, peak_rows, &tmp, &st, err, sizeof err);
    if (rc) return error(rc, "%s", err);
    if ((rc = profile_load(tmp, p, peak_rows, err, sizeof err))) {
        merge_stats_free(&st);
        return error(rc, "%s: %s", tmp, err);
    }
    attach_sources(*p, f, &st);
    return 0;
}

int load_selected(const struct common *c, const struct dbfiles *f, int side, int peak_rows, struct profile **p)
{
    if (!c->server.url) return load_profiles(f, peak_rows, p);
    char err[4400];
    const struct select_opts *o = side >= 0 && c->sides ? &c->side_sel[side] : &c->sel;
    int rc = server_load(&c->server, side, (o->snap_kind == SNAP_PEAK) | (peak_rows & PROFILE_HISTS), p, err, sizeof err);
    return rc ? error(rc, "%s", err) : 0;
}

int select_or_report(const struct common *c, const struct profile *p, struct selection *s)
{
    char err[512];
    int rc = select_apply(p, &c->sel, s, err, sizeof err);
    if (rc) return error(rc, "%s: %s", p->path, err);
    return 0;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *filters_dir(void)
{
    static const char *const candidates[] = {
        "/../filters", "/../../filters", "/../share/mallocprof/filters",
    };
    char *dir = exe_dir();
    if (!dir) return NULL;
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
        sb.len = 0;
        sb_printf(&sb, "%s%s/default.rules", dir, candidates[i]);
        if (is_file(sb.s)) {
            sb.len -= strlen("/default.rules");
            sb.s[sb.len] = 0;
            free(dir);
            return sb.s;
        }
    }
    free(dir);
    sb_free(&sb);
    return NULL;
}

/* --rules NAME also finds filters/NAME and filters/NAME.rules. */
static char *find_rules_file(const char *name, const char *dir)
{
    if (is_file(name) || strchr(name, '/') || !dir) return xstrdup(name);
    struct strbuf sb = { 0 };
    sb_printf(&sb, "%s/%s", dir, name);
    if (is_file(sb.s)) return sb.s;
    sb_puts(&sb, ".rules");
    if (is_file(sb.s)) return sb.s;
    sb_free(&sb);
    return xstrdup(name);
}

int load_rules(struct common *c, struct ruleset **out)
{
    char err[8192];
    char *dir = filters_dir();
    struct ruleset *rs = rules_new();
    int rc = 0;
    *out = NULL;
    if (!c->no_default_rules) {
        if (dir) {
            struct strbuf sb = { 0 };
            sb_printf(&sb, "%s/default.rules", dir);
            rc = rules_load(rs, sb.s, err, sizeof err);
            sb_free(&sb);
        } else {
            warning("filters/default.rules not found next to the executable; "
                    "continuing without default rules");
        }
    }
    for (size_t i = 0; !rc && i < c->nrules_files; i++) {
        char *path = find_rules_file(c->rules_files[i], dir);
        rc = rules_load(rs, path, err, sizeof err);
        free(path);
    }
    free(dir);
    if (rc) {
        rules_free(rs);
        return error(rc, "%s", err);
    }
    *out = rs;
    c->view.rules = rs;
    c->sel.rules = rs;          /* thread names: its `thread replace` lines */
    return 0;
}

static int refuse(const char *out, const char *input)
{
    return error(EXIT_BAD_INPUT, "%s: the output (-o) is the input %s: refusing to overwrite it", out, input);
}

int check_output(const struct common *c, const char *out, const struct dbfiles *files, size_t n)
{
    if (!out) return 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < files[k].n; i++)
            if (output_is(out, files[k].paths[i])) return refuse(out, files[k].paths[i]);
    for (size_t i = 0; i < c->nsuppression_files; i++)
        if (output_is(out, c->suppression_files[i])) return refuse(out, c->suppression_files[i]);
    char *dir = filters_dir();
    int rc = 0;
    struct strbuf sb = { 0 };
    if (dir && !c->no_default_rules) {
        sb_printf(&sb, "%s/default.rules", dir);
        if (output_is(out, sb.s)) rc = refuse(out, sb.s);
    }
    for (size_t i = 0; !rc && i < c->nrules_files; i++) {
        char *path = find_rules_file(c->rules_files[i], dir);
        if (output_is(out, path)) rc = refuse(out, path);
        free(path);
    }
    sb_free(&sb);
    free(dir);
    return rc;
}

/* Profile i of a listing: loaded, selected (with c->sel, or its side's
 * selection in a diff), mapped onto t; 0 or the exit code. */
static int query_run(const struct common *c, const struct dbfiles *f, size_t i, struct dtree *t, struct query *q)
{
    char err[512];
    memset(q, 0, sizeof *q);
    const struct select_opts *o = c->sides ? &c->side_sel[i] : &c->sel;
    int rc = load_selected(c, f, c->sides || c->server.side_where[0] || c->server.side_where[1] ? (int)i : -1,
                           c->peak_rows || select_wants_peak(o), &q->p);
    if (rc) return rc;
    rc = select_apply(q->p, c->sides ? &c->side_sel[i] : &c->sel, &q->sel, err, sizeof err);
    if (rc) return error(rc, "%s: %s", q->p->path, err);
    q->stack_node = xmalloc(q->p->nstacks * sizeof *q->stack_node);
    if ((rc = view_build(q->p, &c->view, t, q->stack_node, err, sizeof err)))
        return error(rc, "%s: %s", c->cmd, err);
    return 0;
}

static void query_free(struct query *q)
{
    selection_free(&q->sel);
    free(q->stack_node);
    profile_free(q->p);
}

/* --suppressions FILE...: one rule set, NULL without files; 0 or the exit
 * code (reported: "mpquery: FILE: why"). */
static int load_suppressions(struct common *c, struct ruleset **out)
{
    char err[8192];
    *out = NULL;
    if (!c->nsuppression_files) return 0;
    struct ruleset *rs = rules_new();
    for (size_t i = 0; i < c->nsuppression_files; i++) {
        int rc = rules_load(rs, c->suppression_files[i], err, sizeof err);
        if (rc) {
            rules_free(rs);
            return error(rc, "%s", err);
        }
    }
    *out = rs;
    c->view.suppress = rs;
    return 0;
}

/* Takes the paths the filters leave out (t.left_out) out of every
 * profile's counters, into l->left (counting the recorded stacks). */
static void listing_filter(struct listing *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct query *q = &l->q[i];
        for (uint32_t s = 0; s < q->p->nstacks; s++) {
            uint32_t node = q->stack_node[s];
            l->left[i].stacks += node != NONE && l->t.left_out[node] && !counters_zero(&q->sel.stack_c[s]);
        }
        for (size_t node = 0; node < l->t.n; node++) {
            counters *own = &l->own[i][node];
            if (!l->t.left_out[node] || counters_zero(own)) continue;
            counters_add(&l->left[i].c, own);
            memset(own, 0, sizeof *own);
        }
    }
}

/* Counters per node are summed once every profile is in the tree: the
 * second profile of a diff adds nodes. */
int listing_run(struct common *c, const struct dbfiles *profiles, size_t n,
                void (*print)(struct listing *l, void *ctx), void *ctx)
{
    struct listing l = { .c = c, .n = n };
    struct ruleset *rules, *suppress;
    int rc = load_rules(c, &rules);
    if (rc) return rc;
    if ((rc = load_suppressions(c, &suppress))) {
        rules_free(rules);
        return rc;
    }
    l.nfilters = c->view.nfilter + c->view.nexclude + (suppress ? rules_count_marks(suppress) : 0);
    dtree_init(&l.t);
    for (size_t i = 0; i < n && !rc; i++) rc = query_run(c, &profiles[i], i, &l.t, &l.q[i]);
    for (size_t i = 0; i < n && !rc; i++) {
        l.own[i] = xcalloc(l.t.n, sizeof *l.own[i]);
        view_accumulate(l.q[i].p, &l.q[i].sel, l.q[i].stack_node, l.own[i]);
    }
    if (!rc && l.t.left_out) listing_filter(&l);
    for (size_t i = 0; i < n && !rc; i++) count_truncated(l.q[i].p, &l.q[i].sel, &l.trunc[i]);
    if (!rc) print(&l, ctx);
    for (size_t i = 0; i < n; i++) {
        free(l.own[i]);
        query_free(&l.q[i]);
    }
    dtree_free(&l.t);
    rules_free(rules);
    rules_free(suppress);
    return rc;
}

/* ---------------------------------------------------------------- orders */
/* top's, leaks' and the report's: the larger value first; ties by the
 * lower stack id, by name for functions. */
int order_stack(uint32_t a, uint32_t b, void *ctx)
{
    const struct order_ctx *x = ctx;
    int64_t va = x->c[a].v[x->by], vb = x->c[b].v[x->by];
    if (va != vb) return va > vb ? -1 : 1;
    int64_t ia = x->p->stacks[x->rep[a]].id, ib = x->p->stacks[x->rep[b]].id;
    return (ia > ib) - (ia < ib);
}

int order_function(uint32_t a, uint32_t b, void *ctx)
{
    const struct order_ctx *x = ctx;
    int64_t va = x->c[a].v[x->by], vb = x->c[b].v[x->by];
    if (va != vb) return va > vb ? -1 : 1;
    const struct strtab *l = &x->t->labels;
    size_t na = l->len[a], nb = l->len[b];
    int c = memcmp(l->str[a], l->str[b], na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

/* more bytes live, then more blocks, then the lower stack id */
int order_leak(uint32_t a, uint32_t b, void *ctx)
{
    const struct order_ctx *x = ctx;
    const counters *ca = &x->c[a], *cb = &x->c[b];
    if (ca->v[MEMLIVE] != cb->v[MEMLIVE]) return ca->v[MEMLIVE] > cb->v[MEMLIVE] ? -1 : 1;
    if (ca->v[NLIVE] != cb->v[NLIVE]) return ca->v[NLIVE] > cb->v[NLIVE] ? -1 : 1;
    int64_t ia = x->p->stacks[x->rep[a]].id, ib = x->p->stacks[x->rep[b]].id;
    return (ia > ib) - (ia < ib);
}

/* ---------------------------------------------------------------- truncated stacks */
static int64_t settings_depth(const char *settings)
{
    const char *d = settings ? strstr(settings, "MP_DEPTH=") : NULL;
    return d ? strtoll(d + 9, NULL, 10) : 0;
}

void count_truncated(const struct profile *p, const struct selection *s, struct truncated *out)
{
    memset(out, 0, sizeof *out);
    uint8_t *cut = xcalloc(p->nmodules ? p->nmodules : 1, 1);
    int any = 0;
    for (size_t m = 0; m < p->nmodules; m++) any |= cut[m] = !strcmp(p->modules[m].path, "[truncated]");
    for (uint32_t i = 0; any && i < p->nstacks; i++) {
        if (!s->stack_c[i].v[NCALLS]) continue;
        uint32_t root = i;
        while (p->stacks[root].parent != NONE) root = p->stacks[root].parent;
        if (!cut[p->frames[p->stacks[root].frame].module]) continue;
        out->stacks++;
        out->calls = sat_add(out->calls, s->stack_c[i].v[NCALLS]);
    }
    free(cut);
    for (size_t k = 0; out->stacks && k < p->nprocs; k++) {
        int64_t d = s->proc_snapshot[k] != NONE ? settings_depth(p->procs[k].settings) : 0;
        if (d > out->depth) out->depth = d;
    }
}

void truncated_line(const struct truncated *t, const char *side, FILE *f)
{
    if (!t->stacks) return;
    if (f != stdout) fflush(stdout);
    fprintf(f, "%lld stack%s (%lld calls)%s %s deeper than MP_DEPTH", (long long)t->stacks, t->stacks == 1 ? "" : "s",
            (long long)t->calls, side, t->stacks == 1 ? "was" : "were");
    if (t->depth) fprintf(f, "=%lld", (long long)t->depth);
    fputs(": inclusive figures of outer functions are low; ", f);
    if (t->depth && t->depth < 1024)
        fprintf(f, "record with MP_DEPTH=%lld\n", (long long)(t->depth * 4 < 1024 ? t->depth * 4 : 1024));
    else
        fputs("record with a larger MP_DEPTH (at most 1024)\n", f);
}

/* ---------------------------------------------------------------- printing */
static void listing_truncated_lines(const struct listing *l, FILE *f)
{
    for (size_t i = 0; i < l->n; i++) truncated_line(&l->trunc[i], l->n > 1 ? (i ? " in b" : " in a") : "", f);
}

void listing_ignored_line(const struct listing *l, FILE *f)
{
    static const char *const names[] = { "a", "b" };
    listing_truncated_lines(l, f);
    if (!l->left[0].stacks && !l->left[1].stacks) return;
    if (f != stdout) fflush(stdout);        /* after what stdout had before it */
    fputs("ignored ", f);
    for (size_t i = 0; i < l->n; i++) {
        const struct left_out *x = &l->left[i];
        fprintf(f, "%s%lld stacks (%lld calls, %lld bytes)", i ? ", " : "", (long long)x->stacks,
                (long long)x->c.v[NCALLS], (long long)x->c.v[MEMTOT]);
        if (l->n > 1) fprintf(f, " in %s", names[i]);
    }
    fprintf(f, " with %zu filters\n", l->nfilters);
}

static void json_left_out(struct json *w, const struct left_out *x)
{
    json_key(w, "stacks"); json_int(w, x->stacks);
    json_key(w, "calls"); json_int(w, x->c.v[NCALLS]);
    json_key(w, "bytes"); json_int(w, x->c.v[MEMTOT]);
}

/* {"ignored": {stacks, calls, bytes, filters}, "rows": [...]}; a diff's
 * ignored object holds one {stacks, calls, bytes} per profile, a and b. */
static void json_listing(const struct listing *l, const struct table *tab)
{
    struct json w;
    json_init(&w, stdout);
    json_open(&w, '{');
    json_key(&w, "ignored");
    json_open(&w, '{');
    if (l->n == 1) json_left_out(&w, &l->left[0]);
    for (size_t i = 0; l->n > 1 && i < l->n; i++) {
        json_key(&w, i ? "b" : "a");
        json_open(&w, '{');
        json_left_out(&w, &l->left[i]);
        json_close(&w, '}');
    }
    json_key(&w, "filters"); json_int(&w, (int64_t)l->nfilters);
    json_close(&w, '}');
    json_rows_last(&w, "rows", tab);
}

void listing_print(const struct listing *l, const struct table *tab)
{
    int format = l->c->format;
    if (l->c->pager) pager_start();
    if (format == FMT_JSON && l->nfilters) {
        json_listing(l, tab);
        listing_truncated_lines(l, stderr);
        return;
    }
    table_print(tab, format, stdout);
    listing_ignored_line(l, format == FMT_TEXT ? stdout : stderr);
}

void node_stacks(const struct query *q, const struct dtree *t, int by, uint32_t *rep, uint32_t *nmerged)
{
    const struct profile *p = q->p;
    const counters *c = q->sel.stack_c;
    for (size_t n = 0; n < t->n; n++) {
        rep[n] = NONE;
        nmerged[n] = 0;
    }
    for (uint32_t s = 0; s < p->nstacks; s++) {
        uint32_t n = q->stack_node[s];
        if (n == NONE || counters_zero(&c[s])) continue;
        nmerged[n]++;
        if (rep[n] == NONE || c[s].v[by] > c[rep[n]].v[by]
            || (c[s].v[by] == c[rep[n]].v[by] && p->stacks[s].id < p->stacks[rep[n]].id))
            rep[n] = s;
    }
}

void table_stack(struct table *tab, int format, int64_t id, uint32_t nmerged)
{
    if (format != FMT_TEXT) {
        table_int(tab, id);
        table_int(tab, nmerged);
        return;
    }
    char cell[48];
    if (nmerged > 1) snprintf(cell, sizeof cell, "%lld+%u", (long long)id, nmerged - 1);
    else snprintf(cell, sizeof cell, "%lld", (long long)id);
    table_str(tab, cell);
}
