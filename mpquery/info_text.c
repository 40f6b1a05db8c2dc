/* mpquery info as text (the runs, the process tree, each process with its
 * threads and snapshots, the totals; sizes in units unless --bytes; without
 * --all, the sections of the first INFO_SECTIONS processes and tables of
 * INFO_ROWS rows at most, the rest counted) and as CSV (one row a process,
 * raw numbers). Reads only what cmd_info.c gathered (struct info). */
#include "load.h"
#include "info.h"
#include "timeline.h"
#include "schema_version.h"   /* SCHEMA_VERSION, from schema/profile.sql */

#include <string.h>

/* ---------------------------------------------------------------- text, csv */
static void add_totals(struct table *t, const struct total *x, int human)
{
    static const struct total zero;
    if (!x) x = &zero;
    for (int i = 0; i < NCOUNTERS; i++) table_counter(t, i, x->c.v[i], human);
}

/* A counter's value in a sentence: "1.21 MiB" (human), else "1268777 bytes";
 * counts as they are. */
static const char *amount(int counter, int64_t v, int human, char *buf, size_t n)
{
    if (human) return fmt_human(counter, v, buf, n);
    snprintf(buf, n, "%lld%s", (long long)v, counter_has_unit(counter) ? " bytes" : "");
    return buf;
}

/* The row of K rows left out of a text table: "…  K more", the other
 * cells empty. */
static void more_row(struct table *t, size_t k)
{
    char words[32];
    snprintf(words, sizeof words, "%zu more", k);
    for (size_t c = 0; c < t->ncols; c++) table_str(t, c == 0 ? "\xe2\x80\xa6" : c == 1 ? words : "");
}

/* A table's title, "NAME (NOTE):", the note saying when rows are left out. */
static void table_title(const struct info *in, const char *name, const char *note, size_t n)
{
    int cut = !in->all && n > INFO_ROWS;
    printf("  %s%s%s%s%s:\n", name, *note || cut ? " (" : "", note, *note && cut ? "; " : "",
           cut ? "--all: every one)" : *note ? ")" : "");
}

/* Without --all, a table of more than INFO_ROWS rows shows its first and
 * last INFO_ROWS / 2 - 1 rows and row `keep`; the others are "… K more". */
static int row_shown(const struct info *in, size_t i, size_t n, size_t keep)
{
    size_t edge = INFO_ROWS / 2 - 1;
    return in->all || n <= INFO_ROWS || i < edge || i >= n - edge || i == keep;
}

void info_print_processes(const struct info *in, int format)
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
        add_totals(&tab, info_total_at(in, in->proc_total[i]), format == FMT_TEXT && in->human);
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

/* Several files: a paragraph a file, a line a run (its id in the profile,
 * token, the processes of the file; its latest marked). */
static void text_sources(const struct profile *p)
{
    printf("\nfiles:\n");
    for (size_t i = 0; i < p->nsources; i++) {
        const struct db_file *f = &p->sources[i];
        fputs("  ", stdout);
        text_clean(stdout, f->path, strlen(f->path));
        putchar('\n');
        for (size_t r = 0; r < f->nruns; r++) {
            const char *token = info_run_token(p, f->runs[r]);
            printf("    run %lld  ", (long long)f->runs[r]);
            text_clean(stdout, token, strlen(token));
            printf("  %lld process%s%s\n", (long long)f->nprocs[r], f->nprocs[r] == 1 ? "" : "es",
                   f->runs[r] == f->latest && f->nruns > 1 ? "  (latest)" : "");
        }
    }
}

/* The runs (when more than one, the selected marked) and the selection. */
static void text_runs(const struct info *in)
{
    const struct profile *p = in->p;
    char when[64];
    if (p->nruns > 1) {
        printf("\nruns:\n");
        for (size_t r = 0; r < p->nruns; r++) {
            size_t np = info_processes_of_run(p, r);
            procs_fmt_date(p->runs[r].start_time, when, sizeof when);
            printf("  %c run %lld  %s  %zu process%s\n", in->sel->run_on[r] ? '*' : ' ',
                   (long long)p->runs[r].id, when, np, np == 1 ? "" : "es");
        }
    }
    if (in->sel->run != NONE) {
        procs_fmt_date(p->runs[in->sel->run].start_time, when, sizeof when);
        printf("\nrun %lld, started %s\n", (long long)p->runs[in->sel->run].id, when);
    } else if (in->sel->nruns_on < p->nruns) {
        printf("\nruns");
        for (size_t r = 0, k = 0; r < p->nruns; r++)
            if (in->sel->run_on[r]) printf("%s %lld", k++ ? "," : "", (long long)p->runs[r].id);
        printf(" (the latest of each file)\n");
    } else {
        printf("\nall runs\n");
    }
}

/* "process tree: N processes, E exec'd, K killed by a signal", then a
 * line a pid, indented by depth: its roles joined by arrows (each arrow an
 * exec) and how its last image ended. */
static void text_tree(const struct info *in)
{
    const struct profile *p = in->p;
    size_t execd = 0, killed = 0, unfinished = 0;
    for (size_t m = 0; m < in->npids; m++) {
        const char *ended = info_last_image(in, &in->pids[m])->ended;
        execd += in->pids[m].nimages > 1;
        killed += !strncmp(ended, "signal ", 7);
        unfinished += !*ended;
    }
    printf("\nprocess tree: %zu process%s", in->npids, in->npids == 1 ? "" : "es");
    if (execd) printf(", %zu exec'd", execd);
    if (killed) printf(", %zu killed by a signal", killed);
    if (unfinished && p->version >= 2) printf(", %zu without a final snapshot", unfinished);
    putchar('\n');
    char buf[64];
    for (size_t m = 0; m < in->npids; m++) {
        const struct pid_node *t = &in->pids[m];
        const struct process *last = info_last_image(in, t);
        printf("  %*s%lld ", (int)(2 * t->depth), "", (long long)last->pid);
        for (size_t r = t->first; r < t->first + t->nimages; r++) {
            const char *name = procs_name(&p->procs[in->order[r]]);
            if (r > t->first) fputs(" → ", stdout);
            text_clean(stdout, name, strlen(name));
        }
        const char *words = info_ended_words(p, last->ended, buf, sizeof buf);
        fputs(": ", stdout);
        text_clean(stdout, words, strlen(words));
        putchar('\n');
    }
}

/* some process of the selection set MP_SAMPLE */
static int info_any_sampled_by_setting(const struct info *in)
{
    for (size_t k = 0; k < in->norder; k++) {
        const char *set = in->p->procs[in->order[k]].settings;
        if (info_sampled(set) && info_cap_sampled(set) < 0) return 1;
    }
    return 0;
}

static void text_totals(const struct info *in)
{
    const struct total *s = &in->sum;
    int h = in->human, sampled = 0;
    char a[32], b[32];
    int by_cap = 0;     /* sampled only from MP_MAX_MEMORY on */
    for (size_t k = 0; k < in->norder; k++) {
        const char *set = in->p->procs[in->order[k]].settings;
        sampled |= info_sampled(set);
        by_cap |= info_cap_sampled(set) >= 0;
    }
    by_cap = by_cap && !info_any_sampled_by_setting(in);
    /* sampled, a block without a stack is one not sampled */
    const char *nostack = sampled ? "not sampled" : "without a stack";
    if (in->since || in->until)
        printf("\ntotals of the time range %s..%s (at its end less at its start: what was allocated and freed "
               "in it; nlive, memlive and maxlive their growth)", in->since ? in->since : "start",
               in->until ? in->until : "end");
    else printf("\ntotals");
    printf(":%s%s%s\n", sampled ? " exact (" : "", !sampled ? "" : by_cap ? "sampled once MP_MAX_MEMORY was "
           "reached" : "MP_SAMPLE", sampled ? ": the stacks' counters are estimates from the sampled blocks, "
                                       "unbiased: their sums come near these totals, above or below)" : "");
    printf("  ncalls  %lld allocations (%lld %s)\n", (long long)s->c.v[NCALLS], (long long)s->ncalls_nostack, nostack);
    printf("  memtot  %s allocated (%s %s)\n", amount(MEMTOT, s->c.v[MEMTOT], h, a, sizeof a),
           amount(MEMTOT, s->memtot_nostack, h, b, sizeof b), nostack);
    printf("  nfree   %lld frees (%lld of blocks the profiler never saw)\n", (long long)s->c.v[NFREE],
           (long long)s->nfree_unknown);
    printf("  nlive   %lld blocks still allocated\n", (long long)s->c.v[NLIVE]);
    printf("  memlive %s still allocated\n", amount(MEMLIVE, s->c.v[MEMLIVE], h, a, sizeof a));
    int64_t peak = 0;
    uint32_t snap = NONE;
    for (size_t k = 0; k < in->norder; k++) {
        int64_t v = timeline_process_peak(in->p, in->order[k], &snap);
        if (v > 0) peak = sat_add(peak, v);
    }
    int64_t held = in->norder == 1 ? timeline_peak_snapshot_live(in->p, snap) : -1;
    if (in->norder == 1 && held >= 0 && held != peak)   /* captured within its step below the peak */
        printf("  peak    %s: the process peak (its maxlive; its peak snapshot, taken within "
               "1/128 or 4 KiB below it, holds %s)\n", amount(MEMLIVE, peak, h, a, sizeof a),
               amount(MEMLIVE, held, h, b, sizeof b));
    else if (in->norder == 1)
        printf("  peak    %s: the process peak (its maxlive%s)\n", amount(MEMLIVE, peak, h, a, sizeof a),
               snap != NONE ? "; its peak snapshot holds as much" : "; no peak snapshot");
    else printf("  peak    %s: the sum of the %zu processes' peaks\n", amount(MEMLIVE, peak, h, a, sizeof a), in->norder);
    char maps[160];
    if (info_mappings_text(in, &in->samples_sum, maps, sizeof maps)) printf("  mmap    %s\n", maps);
}

static void text_threads(const struct info *in, uint32_t proc)
{
    const struct profile *p = in->p;
    static const char *const cols[] = { "tid", "name", "ncalls", "memtot", "nfree", "nlive", "memlive",
                                        "maxlive" };
    struct table tab;
    table_init(&tab, 8, cols);
    tab.indent = 4;
    size_t n = 0, i = 0, gap = 0;
    for (size_t t = 0; t < p->nthreads; t++) n += p->threads[t].process == proc;
    for (size_t t = 0; t < p->nthreads; t++) {
        if (p->threads[t].process != proc) continue;
        if (!row_shown(in, i++, n, NONE)) {
            gap++;
            continue;
        }
        if (gap) more_row(&tab, gap);
        gap = 0;
        table_int(&tab, p->threads[t].tid);
        table_str(&tab, p->threads[t].name);
        add_totals(&tab, info_total_at(in, in->thread_total[t]), in->human);
    }
    table_title(in, "threads", "", n);
    table_print(&tab, FMT_TEXT, stdout);
    table_free(&tab);
}

static void text_snapshots(const struct info *in, uint32_t proc)
{
    const struct profile *p = in->p;
    const struct process *pr = &p->procs[proc];
    static const char *const cols[] = { "seq", "time", "reason", "label", "ncalls", "memtot",
                                        "memlive", "maxlive", "profiler" };
    struct table tab;
    table_init(&tab, 9, cols);
    tab.indent = 4;
    size_t gap = 0, keep = in->sel->proc_snapshot[proc] - pr->first_snapshot;
    for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++) {
        if (!row_shown(in, j - pr->first_snapshot, pr->nsnapshots, keep)) {
            gap++;
            continue;
        }
        if (gap) more_row(&tab, gap);
        gap = 0;
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
            if (t) table_counter(&tab, shown[k], t->c.v[shown[k]], in->human); else table_null(&tab);
        table_counter(&tab, MEMTOT, sn->profiler_memory, in->human);
    }
    table_title(in, "snapshots", "* = selected", pr->nsnapshots);
    table_print(&tab, FMT_TEXT, stdout);
    table_free(&tab);
}

void info_print_text(const struct info *in)
{
    const struct profile *p = in->p;
    char when[64], ended[64];
    text_printf(stdout, "profile %s (schema version %d)", p->path, SCHEMA_VERSION);
    putchar('\n');
    if (p->nsources) text_sources(p);
    text_runs(in);
    printf("\nprocesses: %zu, as %zu images (exec starts a new image)\n", in->npids, in->norder);
    info_print_processes(in, FMT_TEXT);
    text_tree(in);
    text_totals(in);
    size_t sections = in->all || in->norder <= INFO_SECTIONS ? in->norder : INFO_SECTIONS;
    for (size_t k = 0; k < sections; k++) {
        uint32_t i = in->order[k];
        const struct process *pr = &p->procs[i];
        procs_fmt_date(pr->start_time, when, sizeof when);
        /* each line cleaned: the executable, host, settings and end are the recorded program's text */
        printf("\n");
        text_printf(stdout, "process %lld: %s", (long long)pr->pid, pr->exe);
        printf("\n  ");
        text_printf(stdout, "started %s on %s", when, pr->host);
        printf("\n  ");
        text_printf(stdout, "settings: %s", pr->settings);
        if (info_cap_sampled(pr->settings) >= 0)
            printf("\n  sampled from +%.3f s on (MP_MAX_MEMORY reached): the stacks' counters since are estimates "
                   "from samples, the totals exact", info_cap_sampled(pr->settings));
        printf("\n  live bytes: %s\n  ", info_live_bytes_text[info_live_bytes(pr->settings)[0] == 'a']);
        text_printf(stdout, "ended: %s", info_ended_text(p, pr->ended, ended, sizeof ended));
        printf("\n");
        char maps[160];
        if (!p->aggregate && info_mappings_text(in, &in->proc_samples[i], maps, sizeof maps))
            printf("  mappings: %s\n", maps);
        text_threads(in, i);
        text_snapshots(in, i);
        char line[256], a[32];
        uint32_t snap;
        int64_t peak = timeline_process_peak(p, i, &snap);
        if (peak >= 0 && snap != NONE)
            printf("  peak: %s at +%.3fs, the live bytes at its peak snapshot (seq %lld)\n",
                   amount(MEMLIVE, peak, in->human, a, sizeof a), p->snapshots[snap].time - pr->start_time,
                   (long long)p->snapshots[snap].seq);

        if (timeline_process_line(p, i, line, sizeof line)) printf("  %s\n", line);
    }
    if (sections < in->norder)
        printf("\n\xe2\x80\xa6 %zu more processes: --pid PID for one, --all for every one\n", in->norder - sections);
    char mem[32];
    printf("\nstacks with samples in this selection: %zu; the stack tree: %zu nodes, frames: %zu, functions: %zu, "
           "modules: %zu\n", info_stacks_with_samples(in), p->nstacks, p->nframes, p->nfunctions, p->nmodules);
    printf("profiler memory: %s\n", amount(MEMTOT, in->profiler_memory, in->human, mem, sizeof mem));
}
