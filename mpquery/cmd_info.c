/* mpquery info: what a profile holds. Runs (when more than one), the
 * processes of the selected run as a tree (by ppid), their threads and
 * snapshots, exact totals (from the totals table, which includes
 * allocations recorded without a stack), dictionary sizes, settings and the
 * profiler's own memory. Totals of a process or thread at a snapshot are
 * its totals row with the largest snapshot id <= the selected one. */
#include "mpquery.h"
#include "schema_version.h"   /* SCHEMA_VERSION, from schema/profile.sql */

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery info DB [options]\n"
"\n"
"Runs, processes (as a tree), threads, snapshots, exact totals (ncalls,\n"
"memtot, nfree, nlive = ncalls - nfree, memlive, maxlive = peak live bytes,\n"
"allocations without a stack, frees of unknown blocks), stack and frame\n"
"counts, settings and the profiler's own memory.\n"
"\n";

static const char more[] =
"\n"
"Totals summed over processes add their peaks: maxlive is then an upper\n"
"bound of the peak of the whole run.\n"
"\n"
"example:\n"
"  mpquery info app.db --format json\n";

static const struct opt opts[] = {
    OPTION_RUN(HELP_RUN),
    OPTION_PID(HELP_PID),
    OPTION_SNAPSHOT("last (default), N, id:N or label:TEXT (see top --help)"),
    OPTION_FORMAT("text (default), csv (one row a process) or json"),
    { 0 }
};

static const struct cmd_opts info_opts = {
    .cmd = "info", .usage = usage, .more = more, .opts = opts,
    .operands = 1, .missing = "missing DB"
};

/* Totals as of the selection, per process and per thread. */
struct info {
    const struct profile *p;
    const struct selection *sel;
    uint32_t *proc_total, *thread_total;    /* index into p->totals, NONE */
    uint32_t *order;                        /* selected processes, tree order */
    uint32_t *depth;                        /* tree depth per process */
    size_t norder;
    struct total sum;
    int64_t profiler_memory;
};

static void pick_totals(struct info *in)
{
    const struct profile *p = in->p;
    in->proc_total = none_array(p->nprocs);
    in->thread_total = none_array(p->nthreads);
    for (uint32_t i = 0; i < p->ntotals; i++) {
        const struct total *t = &p->totals[i];
        const struct snapshot *sn = &p->snapshots[t->snapshot];
        uint32_t sel = in->sel->proc_snapshot[sn->process];
        if (sel == NONE || sn->id > p->snapshots[sel].id) continue;
        uint32_t *slot = t->thread == NONE ? &in->proc_total[sn->process] : &in->thread_total[t->thread];
        if (t->thread != NONE && p->threads[t->thread].process != sn->process) continue;
        if (*slot == NONE || p->snapshots[p->totals[*slot].snapshot].id < sn->id) *slot = i;
    }
    for (size_t i = 0; i < p->nprocs; i++) {
        if (in->sel->proc_snapshot[i] == NONE) continue;
        in->profiler_memory += p->snapshots[in->sel->proc_snapshot[i]].profiler_memory;
        if (in->proc_total[i] == NONE) continue;
        const struct total *t = &p->totals[in->proc_total[i]];
        counters_add(&in->sum.c, &t->c);
        in->sum.ncalls_nostack += t->ncalls_nostack;
        in->sum.memtot_nostack += t->memtot_nostack;
        in->sum.nfree_unknown += t->nfree_unknown;
    }
}

static int cmp_start(const void *a, const void *b, void *ctx)
{
    const struct profile *p = ctx;
    const struct process *x = &p->procs[*(const uint32_t *)a], *y = &p->procs[*(const uint32_t *)b];
    if (x->start_time != y->start_time) return x->start_time < y->start_time ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Per selected process (sel[0..n), by start time), its parent's position
 * in sel: the latest process of the same run started before it whose pid
 * is its ppid; NONE for a root. */
static uint32_t *find_parents(const struct profile *p, const uint32_t *sel, size_t n)
{
    uint32_t *parent = xmalloc(n * sizeof *parent);
    struct idmap by_pid;                    /* (run, pid) → latest started before */
    idmap_init(&by_pid, n);
    for (size_t k = 0; k < n; k++) {
        const struct process *pr = &p->procs[sel[k]];
        parent[k] = idmap_get(&by_pid, (uint64_t)pr->run << 40 ^ (uint64_t)pr->ppid);
        int created;
        *idmap_put(&by_pid, (uint64_t)pr->run << 40 ^ (uint64_t)pr->pid, &created) = (uint32_t)k;
    }
    idmap_free(&by_pid);
    return parent;
}

/* Depth-first from each root through the children lists (first[k], then
 * next[]), appending to in->order and in->depth. */
static void emit_tree(struct info *in, const uint32_t *sel, size_t n, uint32_t roots,
                      const uint32_t *first, const uint32_t *next)
{
    uint32_t *stk = xmalloc((n + 1) * sizeof *stk), *dep = xmalloc((n + 1) * sizeof *dep);
    size_t sp = 0;
    for (uint32_t r = roots; r != NONE; r = next[r]) {
        stk[sp] = r; dep[sp++] = 0;
        while (sp > 0) {
            uint32_t k = stk[--sp], d = dep[sp];
            in->order[in->norder] = sel[k];
            in->depth[in->norder++] = d;
            /* push children in reverse so the first child comes out first */
            size_t base = sp;
            for (uint32_t ch = first[k]; ch != NONE; ch = next[ch]) { stk[sp] = ch; dep[sp++] = d + 1; }
            for (size_t a = base, b = sp; b > a + 1; a++, b--) {
                uint32_t x = stk[a]; stk[a] = stk[b - 1]; stk[b - 1] = x;
            }
        }
    }
    free(stk);
    free(dep);
}

/* Processes in tree order: a child follows its parent (same run, pid ==
 * ppid, started no later), siblings by start time. */
static void process_tree(struct info *in)
{
    const struct profile *p = in->p;
    size_t n = 0;
    uint32_t *sel = xmalloc(p->nprocs * sizeof *sel);
    for (uint32_t i = 0; i < p->nprocs; i++)
        if (in->sel->proc_snapshot[i] != NONE) sel[n++] = i;
    qsort_r(sel, n, sizeof *sel, cmp_start, (void *)p);
    uint32_t *parent = find_parents(p, sel, n);
    uint32_t *first = none_array(n), *next = xmalloc(n * sizeof *next), *last_child = none_array(n);
    uint32_t roots = NONE, *tail_next = &roots;
    for (size_t k = 0; k < n; k++) {
        next[k] = NONE;
        if (parent[k] == NONE) { *tail_next = (uint32_t)k; tail_next = &next[k]; continue; }
        if (first[parent[k]] == NONE) first[parent[k]] = (uint32_t)k;
        else next[last_child[parent[k]]] = (uint32_t)k;
        last_child[parent[k]] = (uint32_t)k;
    }
    in->order = xmalloc(n * sizeof *in->order);
    in->depth = xmalloc(n * sizeof *in->depth);
    emit_tree(in, sel, n, roots, first, next);
    free(first); free(next); free(last_child); free(parent); free(sel);
}

static void fmt_time(double t, char *buf, size_t n)
{
    time_t s = (time_t)t;
    struct tm tm;
    if (!localtime_r(&s, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm)) snprintf(buf, n, "%.3f", t);
}

static const struct total *total_at(const struct info *in, uint32_t idx)
{
    return idx == NONE ? NULL : &in->p->totals[idx];
}

static size_t stacks_with_samples(const struct info *in)
{
    size_t n = 0;
    for (size_t s = 0; s < in->p->nstacks; s++) n += !counters_zero(&in->sel->stack_c[s]);
    return n;
}

static size_t processes_of_run(const struct profile *p, size_t run)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nprocs; i++) n += p->procs[i].run == run;
    return n;
}

/* ---------------------------------------------------------------- json */
static void json_totals(struct json *w, const struct total *t)
{
    static const struct total zero;
    if (!t) t = &zero;
    json_open(w, '{');
    for (int i = 0; i < NCOUNTERS; i++) {
        json_key(w, counter_name[i]);
        json_int(w, t->c.v[i]);
    }
    json_key(w, "ncalls_nostack"); json_int(w, t->ncalls_nostack);
    json_key(w, "memtot_nostack"); json_int(w, t->memtot_nostack);
    json_key(w, "nfree_unknown"); json_int(w, t->nfree_unknown);
    json_close(w, '}');
}

static void json_runs(struct json *w, const struct profile *p)
{
    json_open(w, '[');
    for (size_t r = 0; r < p->nruns; r++) {
        json_open(w, '{');
        json_key(w, "id"); json_int(w, p->runs[r].id);
        json_key(w, "token"); json_str(w, p->runs[r].token);
        json_key(w, "start_time"); json_fixed(w, p->runs[r].start_time, 6);
        json_key(w, "processes"); json_int(w, (int64_t)processes_of_run(p, r));
        json_close(w, '}');
    }
    json_close(w, ']');
}

static void json_threads(struct json *w, const struct info *in, uint32_t proc)
{
    const struct profile *p = in->p;
    json_open(w, '[');
    for (size_t t = 0; t < p->nthreads; t++) {
        if (p->threads[t].process != proc) continue;
        json_open(w, '{');
        json_key(w, "tid"); json_int(w, p->threads[t].tid);
        json_key(w, "seq"); json_int(w, p->threads[t].seq);
        json_key(w, "name"); json_str(w, p->threads[t].name);
        json_key(w, "totals"); json_totals(w, total_at(in, in->thread_total[t]));
        json_close(w, '}');
    }
    json_close(w, ']');
}

static void json_snapshots(struct json *w, const struct profile *p, const struct process *pr)
{
    json_open(w, '[');
    for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++) {
        const struct snapshot *sn = &p->snapshots[j];
        json_open(w, '{');
        json_key(w, "id"); json_int(w, sn->id);
        json_key(w, "seq"); json_int(w, sn->seq);
        json_key(w, "time"); json_fixed(w, sn->time, 6);
        json_key(w, "reason"); json_str(w, sn->reason);
        json_key(w, "label"); json_str(w, sn->label);
        json_key(w, "profiler_memory"); json_int(w, sn->profiler_memory);
        json_key(w, "totals"); json_totals(w, snapshot_total(p, j));
        json_close(w, '}');
    }
    json_close(w, ']');
}

/* How the process's recorder counted live bytes, from its settings: with
 * every block tracked (full capture), requested bytes; in the cheap modes
 * (MP_SAMPLE, MP_STACKS=tags|none, MP_ENABLED=0), the allocator's block
 * sizes, and a stack's counters may be estimates. */
static int setting_is(const char *settings, const char *name, const char *value)
{
    size_t n = strlen(name);
    for (const char *s = settings; (s = strstr(s, name)); s += n)
        if ((s == settings || s[-1] == ' ') && s[n] == '=')
            return !strncmp(s + n + 1, value, strlen(value)) && (s[n + 1 + strlen(value)] == ' ' || !s[n + 1 + strlen(value)]);
    return -1;  /* not there: a recorder from before the setting */
}

static const char *live_bytes(const char *settings)
{
    int full = setting_is(settings, "MP_SAMPLE", "0") != 0 && setting_is(settings, "MP_STACKS", "unwind") != 0 &&
               setting_is(settings, "MP_ENABLED", "1") != 0;
    return full ? "requested" : "allocator";
}

static const char *const live_bytes_text[] = {
    "requested sizes (every block tracked)",
    "the allocator's block sizes (a cheap mode: only sampled blocks are tracked; calls, bytes and frees exact)",
};

/* process.ended in words: "exit 3", "exit (a return from main; status not
 * recorded)", "running, or killed (no end snapshot)". */
static const char *ended_text(const char *ended)
{
    if (!*ended) return "running, or killed (no snapshot at its end)";
    if (!strcmp(ended, "exit")) return "exit (from main or at_exit: the status is not recorded)";
    return ended;
}

/* The k-th process in tree order. */
static void json_process(struct json *w, const struct info *in, size_t k)
{
    const struct profile *p = in->p;
    uint32_t i = in->order[k];
    const struct process *pr = &p->procs[i];
    const struct snapshot *sel = &p->snapshots[in->sel->proc_snapshot[i]];
    json_open(w, '{');
    json_key(w, "id"); json_int(w, pr->id);
    json_key(w, "pid"); json_int(w, pr->pid);
    json_key(w, "ppid"); json_int(w, pr->ppid);
    json_key(w, "depth"); json_int(w, in->depth[k]);
    json_key(w, "run"); json_int(w, p->runs[pr->run].id);
    json_key(w, "exe"); json_str(w, pr->exe);
    json_key(w, "cmdline"); json_str(w, pr->cmdline);
    json_key(w, "host"); json_str(w, pr->host);
    json_key(w, "settings"); json_str(w, pr->settings);
    json_key(w, "live_bytes"); json_str(w, live_bytes(pr->settings));
    json_key(w, "ended"); json_str(w, pr->ended);
    json_key(w, "start_time"); json_fixed(w, pr->start_time, 6);
    json_key(w, "end_time");
    if (pr->end_time < 0) json_null(w); else json_fixed(w, pr->end_time, 6);
    json_key(w, "duration");
    if (pr->end_time < 0) json_null(w); else json_fixed(w, pr->end_time - pr->start_time, 6);
    json_key(w, "snapshot"); json_int(w, sel->seq);
    json_key(w, "profiler_memory"); json_int(w, sel->profiler_memory);
    json_key(w, "totals"); json_totals(w, total_at(in, in->proc_total[i]));
    json_break(w, 3);
    json_key(w, "threads"); json_threads(w, in, i);
    json_break(w, 3);
    json_key(w, "snapshots"); json_snapshots(w, p, pr);
    json_close(w, '}');
}

static void print_json(const struct info *in)
{
    const struct profile *p = in->p;
    struct json w;
    json_init(&w, stdout);
    json_open(&w, '{');
    json_key(&w, "file"); json_str(&w, p->path);
    json_key(&w, "schema_version"); json_int(&w, SCHEMA_VERSION);
    json_key(&w, "run");
    if (in->sel->run == NONE) json_null(&w); else json_int(&w, p->runs[in->sel->run].id);
    json_break(&w, 1);
    json_key(&w, "runs"); json_runs(&w, p);
    json_break(&w, 1);
    json_key(&w, "totals"); json_totals(&w, &in->sum);
    json_break(&w, 1);
    json_key(&w, "stacks"); json_int(&w, (int64_t)p->nstacks);
    json_key(&w, "stacks_with_samples"); json_int(&w, (int64_t)stacks_with_samples(in));
    json_key(&w, "frames"); json_int(&w, (int64_t)p->nframes);
    json_key(&w, "functions"); json_int(&w, (int64_t)p->nfunctions);
    json_key(&w, "modules"); json_int(&w, (int64_t)p->nmodules);
    json_key(&w, "profiler_memory"); json_int(&w, in->profiler_memory);
    json_break(&w, 1);
    json_key(&w, "processes");
    json_open(&w, '[');
    for (size_t k = 0; k < in->norder; k++) {
        json_break(&w, 2);
        json_process(&w, in, k);
    }
    json_break(&w, 1);
    json_close(&w, ']');
    json_close(&w, '}');
    putchar('\n');
}

/* ---------------------------------------------------------------- text, csv */
static void add_totals(struct table *t, const struct total *x)
{
    static const struct total zero;
    if (!x) x = &zero;
    for (int i = 0; i < NCOUNTERS; i++) table_int(t, x->c.v[i]);
}

static void print_processes(const struct info *in, int format)
{
    const struct profile *p = in->p;
    static const char *const cols[] = { "pid", "ppid", "duration", "threads", "snapshots",
        "ncalls", "memtot", "nfree", "nlive", "memlive", "maxlive", "command" };
    struct table tab;
    table_init(&tab, 12, cols);
    tab.indent = format == FMT_TEXT ? 2 : 0;
    struct strbuf sb = { 0 };
    for (size_t k = 0; k < in->norder; k++) {
        uint32_t i = in->order[k];
        const struct process *pr = &p->procs[i];
        size_t nth = 0;
        for (size_t t = 0; t < p->nthreads; t++) nth += p->threads[t].process == i;
        table_int(&tab, pr->pid);
        table_int(&tab, pr->ppid);
        if (pr->end_time < 0) table_null(&tab); else table_num(&tab, pr->end_time - pr->start_time, 3);
        table_int(&tab, (int64_t)nth);
        table_int(&tab, pr->nsnapshots);
        add_totals(&tab, total_at(in, in->proc_total[i]));
        sb.len = 0;
        sb_add(&sb, "", 0);
        if (format == FMT_TEXT) for (uint32_t d = 0; d < in->depth[k]; d++) sb_puts(&sb, "  ");
        sb_puts(&sb, pr->cmdline[0] ? pr->cmdline : pr->exe);
        table_str(&tab, sb.s);
    }
    table_print(&tab, format, stdout);
    table_free(&tab);
    sb_free(&sb);
}

/* The runs (when more than one, the selected marked) and the selection. */
static void text_runs(const struct info *in)
{
    const struct profile *p = in->p;
    char when[64];
    if (p->nruns > 1) {
        printf("\nruns:\n");
        for (size_t r = 0; r < p->nruns; r++) {
            size_t np = processes_of_run(p, r);
            fmt_time(p->runs[r].start_time, when, sizeof when);
            printf("  %c run %lld  %s  %zu process%s\n", in->sel->run == r ? '*' : ' ',
                   (long long)p->runs[r].id, when, np, np == 1 ? "" : "es");
        }
    }
    if (in->sel->run != NONE) {
        fmt_time(p->runs[in->sel->run].start_time, when, sizeof when);
        printf("\nrun %lld, started %s\n", (long long)p->runs[in->sel->run].id, when);
    } else {
        printf("\nall runs\n");
    }
}

static void text_totals(const struct info *in)
{
    const struct total *s = &in->sum;
    printf("\ntotals:\n");
    printf("  ncalls  %lld allocations (%lld without a stack)\n", (long long)s->c.v[NCALLS],
           (long long)s->ncalls_nostack);
    printf("  memtot  %lld bytes allocated (%lld without a stack)\n", (long long)s->c.v[MEMTOT],
           (long long)s->memtot_nostack);
    printf("  nfree   %lld frees (%lld of blocks the profiler never saw)\n", (long long)s->c.v[NFREE],
           (long long)s->nfree_unknown);
    printf("  nlive   %lld blocks still allocated\n", (long long)s->c.v[NLIVE]);
    printf("  memlive %lld bytes still allocated\n", (long long)s->c.v[MEMLIVE]);
    printf("  maxlive %lld bytes at the peak%s\n", (long long)s->c.v[MAXLIVE],
           in->norder > 1 ? " (sum of the processes' peaks)" : "");
}

static void text_threads(const struct info *in, uint32_t proc)
{
    const struct profile *p = in->p;
    static const char *const cols[] = { "tid", "name", "ncalls", "memtot", "nfree", "nlive", "memlive",
                                        "maxlive" };
    struct table tab;
    table_init(&tab, 8, cols);
    tab.indent = 4;
    for (size_t t = 0; t < p->nthreads; t++) {
        if (p->threads[t].process != proc) continue;
        table_int(&tab, p->threads[t].tid);
        table_str(&tab, p->threads[t].name);
        add_totals(&tab, total_at(in, in->thread_total[t]));
    }
    printf("  threads:\n");
    table_print(&tab, FMT_TEXT, stdout);
    table_free(&tab);
}

static void text_snapshots(const struct info *in, uint32_t proc)
{
    const struct profile *p = in->p;
    const struct process *pr = &p->procs[proc];
    static const char *const cols[] = { "seq", "time", "reason", "label", "ncalls", "memtot",
                                        "memlive", "maxlive", "profiler_memory" };
    struct table tab;
    table_init(&tab, 9, cols);
    tab.indent = 4;
    for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++) {
        const struct snapshot *sn = &p->snapshots[j];
        const struct total *t = snapshot_total(p, j);
        char seq[32], rel[32];
        snprintf(seq, sizeof seq, "%s%lld", in->sel->proc_snapshot[proc] == j ? "*" : "", (long long)sn->seq);
        snprintf(rel, sizeof rel, "+%.3fs", sn->time - pr->start_time);
        table_str(&tab, seq);
        table_str(&tab, rel);
        table_str(&tab, sn->reason);
        table_str(&tab, sn->label);
        static const int shown[] = { NCALLS, MEMTOT, MEMLIVE, MAXLIVE };
        for (size_t k = 0; k < sizeof shown / sizeof *shown; k++)
            if (t) table_int(&tab, t->c.v[shown[k]]); else table_null(&tab);
        table_int(&tab, sn->profiler_memory);
    }
    printf("  snapshots (* = selected):\n");
    table_print(&tab, FMT_TEXT, stdout);
    table_free(&tab);
}

static void print_text(const struct info *in)
{
    const struct profile *p = in->p;
    char when[64];
    printf("profile %s (schema version %d)\n", p->path, SCHEMA_VERSION);
    text_runs(in);
    printf("\nprocesses:\n");
    print_processes(in, FMT_TEXT);
    text_totals(in);
    for (size_t k = 0; k < in->norder; k++) {
        uint32_t i = in->order[k];
        const struct process *pr = &p->procs[i];
        fmt_time(pr->start_time, when, sizeof when);
        printf("\nprocess %lld: %s\n  started %s on %s\n  settings: %s\n  live bytes: %s\n  ended: %s\n",
               (long long)pr->pid, pr->exe, when, pr->host, pr->settings,
               live_bytes_text[live_bytes(pr->settings)[0] == 'a'], ended_text(pr->ended));
        text_threads(in, i);
        text_snapshots(in, i);
    }
    printf("\nstacks: %zu (%zu with samples in this selection), frames: %zu, functions: %zu, modules: %zu\n",
           p->nstacks, stacks_with_samples(in), p->nframes, p->nfunctions, p->nmodules);
    printf("profiler memory: %lld bytes\n", (long long)in->profiler_memory);
}

int cmd_info(int argc, char **argv)
{
    struct common c;
    int rc = parse_options(&c, &info_opts, argc, argv);
    if (rc != PARSE_OK) return rc;
    struct profile *p;
    if ((rc = load_profile(argv[optind], &p))) return rc;
    struct selection sel;
    if ((rc = select_or_report(&c, p, &sel))) { selection_free(&sel); profile_free(p); return rc; }
    struct info in = { .p = p, .sel = &sel };
    pick_totals(&in);
    process_tree(&in);
    if (c.format == FMT_JSON) print_json(&in);
    else if (c.format == FMT_CSV) print_processes(&in, FMT_CSV);
    else print_text(&in);
    free(in.proc_total); free(in.thread_total); free(in.order); free(in.depth);
    selection_free(&sel);
    profile_free(p);
    return 0;
}
