/* mpquery info: what a profile holds. Runs (when more than one), the
 * processes of the selected run as a tree (by ppid), their threads and
 * snapshots, exact totals (from the totals table, which includes
 * allocations recorded without a stack), dictionary sizes, settings and the
 * profiler's own memory. Totals of a process or thread at a snapshot are
 * its totals row with the largest snapshot id <= the selected one. */
#include "mpquery.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char help[] =
"usage: mpquery info DB [options]\n"
"\n"
"Runs, processes (as a tree), threads, snapshots, exact totals (ncalls,\n"
"memtot, nfree, memlive, maxlive = peak live bytes, allocations without a\n"
"stack, frees of unknown blocks), stack and frame counts, settings and the\n"
"profiler's own memory.\n"
"\n"
"  --run N|latest|all  which run of the database (default: latest)\n"
"  --pid PID           only this process\n"
"  --snapshot S        last (default), N, id:N or label:TEXT (see top --help)\n"
"  --format F          text (default), csv (one row a process) or json\n"
"\n"
"Totals summed over processes add their peaks: maxlive is then an upper\n"
"bound of the peak of the whole run.\n"
"\n"
"example:\n"
"  mpquery info app.db --format json\n";

static const struct option long_options[] = {
    { "run", required_argument, NULL, OPT_RUN },
    { "pid", required_argument, NULL, OPT_PID },
    { "snapshot", required_argument, NULL, OPT_SNAPSHOT },
    { "format", required_argument, NULL, OPT_FORMAT },
    { "help", no_argument, NULL, OPT_HELP },
    { 0 }
};

/* Totals as of the selection, per process and per thread. */
struct info {
    const struct profile *p;
    const struct selection *sel;
    const struct common *c;
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
    in->proc_total = xmalloc((p->nprocs ? p->nprocs : 1) * sizeof *in->proc_total);
    in->thread_total = xmalloc((p->nthreads ? p->nthreads : 1) * sizeof *in->thread_total);
    memset(in->proc_total, 0xff, (p->nprocs ? p->nprocs : 1) * sizeof *in->proc_total);
    memset(in->thread_total, 0xff, (p->nthreads ? p->nthreads : 1) * sizeof *in->thread_total);
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

/* Processes in tree order: a child follows its parent (same run, pid ==
 * ppid, started no later), siblings by start time. */
static void process_tree(struct info *in)
{
    const struct profile *p = in->p;
    size_t n = 0;
    uint32_t *sel = xmalloc((p->nprocs ? p->nprocs : 1) * sizeof *sel);
    for (uint32_t i = 0; i < p->nprocs; i++)
        if (in->sel->proc_snapshot[i] != NONE) sel[n++] = i;
    qsort_r(sel, n, sizeof *sel, cmp_start, (void *)p);
    uint32_t *parent = xmalloc((n ? n : 1) * sizeof *parent);
    struct idmap by_pid;                    /* (run, pid) → latest started before */
    idmap_init(&by_pid, n);
    for (size_t k = 0; k < n; k++) {
        const struct process *pr = &p->procs[sel[k]];
        uint32_t par = idmap_get(&by_pid, (uint64_t)pr->run << 40 ^ (uint64_t)pr->ppid);
        parent[k] = par;
        int created;
        *idmap_put(&by_pid, (uint64_t)pr->run << 40 ^ (uint64_t)pr->pid, &created) = (uint32_t)k;
    }
    idmap_free(&by_pid);
    /* depth-first emission through children lists (parents precede children) */
    uint32_t *first = xmalloc((n ? n : 1) * sizeof *first), *next = xmalloc((n ? n : 1) * sizeof *next);
    memset(first, 0xff, (n ? n : 1) * sizeof *first);
    uint32_t roots = NONE, *tail_next = &roots;
    uint32_t *last_child = xmalloc((n ? n : 1) * sizeof *last_child);
    memset(last_child, 0xff, (n ? n : 1) * sizeof *last_child);
    for (size_t k = 0; k < n; k++) {
        next[k] = NONE;
        if (parent[k] == NONE) { *tail_next = (uint32_t)k; tail_next = &next[k]; continue; }
        if (first[parent[k]] == NONE) first[parent[k]] = (uint32_t)k;
        else next[last_child[parent[k]]] = (uint32_t)k;
        last_child[parent[k]] = (uint32_t)k;
    }
    in->order = xmalloc((n ? n : 1) * sizeof *in->order);
    in->depth = xmalloc((n ? n : 1) * sizeof *in->depth);
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
    free(stk); free(dep); free(first); free(next); free(last_child); free(parent); free(sel);
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

static void json_totals(const struct total *t)
{
    static const struct total zero;
    if (!t) t = &zero;
    printf("{");
    for (int i = 0; i < NCOUNTERS; i++) printf("%s\"%s\": %lld", i ? ", " : "", counter_name[i], (long long)t->c.v[i]);
    printf(", \"ncalls_nostack\": %lld, \"memtot_nostack\": %lld, \"nfree_unknown\": %lld}",
           (long long)t->ncalls_nostack, (long long)t->memtot_nostack, (long long)t->nfree_unknown);
}

static void js(const char *s) { json_string(stdout, s, strlen(s)); }

static size_t stacks_with_samples(const struct info *in)
{
    size_t n = 0;
    for (size_t s = 0; s < in->p->nstacks; s++) n += !counters_zero(&in->sel->stack_c[s]);
    return n;
}

static void print_json(const struct info *in)
{
    const struct profile *p = in->p;
    printf("{\"file\": ");
    js(p->path);
    printf(", \"schema_version\": %d, \"run\": ", SCHEMA_VERSION);
    if (in->sel->run == NONE) printf("null"); else printf("%lld", (long long)p->runs[in->sel->run].id);
    printf(",\n \"runs\": [");
    for (size_t r = 0; r < p->nruns; r++) {
        size_t np = 0;
        for (size_t i = 0; i < p->nprocs; i++) np += p->procs[i].run == r;
        printf("%s{\"id\": %lld, \"token\": ", r ? ", " : "", (long long)p->runs[r].id);
        js(p->runs[r].token);
        printf(", \"start_time\": %.6f, \"processes\": %zu}", p->runs[r].start_time, np);
    }
    printf("],\n \"totals\": ");
    json_totals(&in->sum);
    printf(",\n \"stacks\": %zu, \"stacks_with_samples\": %zu, \"frames\": %zu, \"functions\": %zu,"
           " \"modules\": %zu, \"profiler_memory\": %lld,\n \"processes\": [",
           p->nstacks, stacks_with_samples(in), p->nframes, p->nfunctions, p->nmodules,
           (long long)in->profiler_memory);
    for (size_t k = 0; k < in->norder; k++) {
        uint32_t i = in->order[k];
        const struct process *pr = &p->procs[i];
        const struct snapshot *sel = &p->snapshots[in->sel->proc_snapshot[i]];
        printf("%s\n  {\"id\": %lld, \"pid\": %lld, \"ppid\": %lld, \"depth\": %u, \"run\": %lld, \"exe\": ",
               k ? "," : "", (long long)pr->id, (long long)pr->pid, (long long)pr->ppid, in->depth[k],
               (long long)p->runs[pr->run].id);
        js(pr->exe);
        printf(", \"cmdline\": ");
        js(pr->cmdline);
        printf(", \"host\": ");
        js(pr->host);
        printf(", \"settings\": ");
        js(pr->settings);
        printf(", \"start_time\": %.6f, \"end_time\": ", pr->start_time);
        if (pr->end_time < 0) printf("null, \"duration\": null");
        else printf("%.6f, \"duration\": %.6f", pr->end_time, pr->end_time - pr->start_time);
        printf(", \"snapshot\": %lld, \"profiler_memory\": %lld, \"totals\": ",
               (long long)sel->seq, (long long)sel->profiler_memory);
        json_totals(total_at(in, in->proc_total[i]));
        printf(",\n   \"threads\": [");
        int first = 1;
        for (size_t t = 0; t < p->nthreads; t++) {
            if (p->threads[t].process != i) continue;
            printf("%s{\"tid\": %lld, \"seq\": %lld, \"name\": ", first ? "" : ", ",
                   (long long)p->threads[t].tid, (long long)p->threads[t].seq);
            js(p->threads[t].name);
            printf(", \"totals\": ");
            json_totals(total_at(in, in->thread_total[t]));
            printf("}");
            first = 0;
        }
        printf("],\n   \"snapshots\": [");
        for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++) {
            const struct snapshot *sn = &p->snapshots[j];
            printf("%s{\"id\": %lld, \"seq\": %lld, \"time\": %.6f, \"reason\": ", j == pr->first_snapshot ? "" : ", ",
                   (long long)sn->id, (long long)sn->seq, sn->time);
            js(sn->reason);
            printf(", \"label\": ");
            js(sn->label);
            printf(", \"profiler_memory\": %lld, \"totals\": ", (long long)sn->profiler_memory);
            json_totals(snapshot_total(p, j));
            printf("}");
        }
        printf("]}");
    }
    printf("\n ]}\n");
}

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
        "ncalls", "memtot", "nfree", "memlive", "maxlive", "command" };
    struct table tab;
    table_init(&tab, 11, cols);
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

static void print_text(const struct info *in)
{
    const struct profile *p = in->p;
    char when[64];
    printf("profile %s (schema version %d)\n", p->path, SCHEMA_VERSION);
    if (p->nruns > 1) {
        printf("\nruns:\n");
        for (size_t r = 0; r < p->nruns; r++) {
            size_t np = 0;
            for (size_t i = 0; i < p->nprocs; i++) np += p->procs[i].run == r;
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
    printf("\nprocesses:\n");
    print_processes(in, FMT_TEXT);

    printf("\ntotals:\n");
    const struct total *s = &in->sum;
    printf("  ncalls  %lld allocations (%lld without a stack)\n", (long long)s->c.v[NCALLS],
           (long long)s->ncalls_nostack);
    printf("  memtot  %lld bytes allocated (%lld without a stack)\n", (long long)s->c.v[MEMTOT],
           (long long)s->memtot_nostack);
    printf("  nfree   %lld frees (%lld of blocks the profiler never saw)\n", (long long)s->c.v[NFREE],
           (long long)s->nfree_unknown);
    printf("  memlive %lld bytes still allocated\n", (long long)s->c.v[MEMLIVE]);
    printf("  maxlive %lld bytes at the peak%s\n", (long long)s->c.v[MAXLIVE],
           in->norder > 1 ? " (sum of the processes' peaks)" : "");

    for (size_t k = 0; k < in->norder; k++) {
        uint32_t i = in->order[k];
        const struct process *pr = &p->procs[i];
        fmt_time(pr->start_time, when, sizeof when);
        printf("\nprocess %lld: %s\n  started %s on %s\n  settings: %s\n", (long long)pr->pid, pr->exe,
               when, pr->host, pr->settings);
        static const char *const tcols[] = { "tid", "name", "ncalls", "memtot", "nfree", "memlive", "maxlive" };
        struct table tab;
        table_init(&tab, 7, tcols);
        tab.indent = 4;
        for (size_t t = 0; t < p->nthreads; t++) {
            if (p->threads[t].process != i) continue;
            table_int(&tab, p->threads[t].tid);
            table_str(&tab, p->threads[t].name);
            add_totals(&tab, total_at(in, in->thread_total[t]));
        }
        printf("  threads:\n");
        table_print(&tab, FMT_TEXT, stdout);
        table_free(&tab);
        static const char *const scols[] = { "seq", "time", "reason", "label", "ncalls", "memtot",
                                             "memlive", "maxlive", "profiler_memory" };
        table_init(&tab, 9, scols);
        tab.indent = 4;
        for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++) {
            const struct snapshot *sn = &p->snapshots[j];
            const struct total *t = snapshot_total(p, j);
            char seq[32];
            snprintf(seq, sizeof seq, "%s%lld", in->sel->proc_snapshot[i] == j ? "*" : "", (long long)sn->seq);
            table_str(&tab, seq);
            char rel[32];
            snprintf(rel, sizeof rel, "+%.3fs", sn->time - pr->start_time);
            table_str(&tab, rel);
            table_str(&tab, sn->reason);
            table_str(&tab, sn->label);
            if (t) {
                table_int(&tab, t->c.v[NCALLS]); table_int(&tab, t->c.v[MEMTOT]);
                table_int(&tab, t->c.v[MEMLIVE]); table_int(&tab, t->c.v[MAXLIVE]);
            } else {
                table_null(&tab); table_null(&tab); table_null(&tab); table_null(&tab);
            }
            table_int(&tab, sn->profiler_memory);
        }
        printf("  snapshots (* = selected):\n");
        table_print(&tab, FMT_TEXT, stdout);
        table_free(&tab);
    }
    printf("\nstacks: %zu (%zu with samples in this selection), frames: %zu, functions: %zu, modules: %zu\n",
           p->nstacks, stacks_with_samples(in), p->nframes, p->nfunctions, p->nmodules);
    printf("profiler memory: %lld bytes\n", (long long)in->profiler_memory);
}

int cmd_info(int argc, char **argv)
{
    struct common c;
    common_init(&c, "info");
    int opt, rc;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":", long_options, NULL)) != -1) {
        if (opt == OPT_HELP) { fputs(help, stdout); return 0; }
        rc = common_option(&c, opt, optarg);
        if (rc < 0) return EXIT_BAD_INPUT;
        if (rc == 0) return bad_option(c.cmd, opt, argv);
    }
    if (optind + 1 != argc)
        return usage_error(c.cmd, optind == argc ? "missing DB" : "too many arguments");
    struct profile *p;
    if ((rc = load_profile(argv[optind], &p))) return rc;
    struct selection sel;
    if ((rc = select_or_report(&c, p, &sel))) { selection_free(&sel); profile_free(p); return rc; }
    struct info in = { .p = p, .sel = &sel, .c = &c };
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
