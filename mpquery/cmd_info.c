/* mpquery info: what a profile holds. Runs (when more than one), the
 * processes of the selected run as a tree (a node a pid: its images, one
 * a program exec ran; under the pid of its ppid), their threads and
 * snapshots, exact totals (from the totals table, which includes
 * allocations recorded without a stack), dictionary sizes, settings and the
 * profiler's own memory. Totals of a process or thread at a snapshot are
 * its totals row with the largest snapshot id <= the selected one. */
#include "mpquery.h"
#include "schema_version.h"   /* SCHEMA_VERSION, from schema/profile.sql */
#include "commands.h"
#include "load.h"
#include "options.h"
#include "output.h"
#include "select.h"
#include "server.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery info DB... [options]\n"
"       mpquery info --server URL [--where SQL] [options]\n"
"\n"
"Runs, processes (as a tree), threads, snapshots, exact totals (ncalls,\n"
"memtot, nfree, nlive = ncalls - nfree, memlive, maxlive = peak live bytes,\n"
"allocations without a stack, frees of unknown blocks), stack and frame\n"
"counts, settings and the profiler's own memory.\n"
"\n"
"The process tree has a line a pid, under its parent: its role (the\n"
"command name: the basename of the executable), the programs it exec'd\n"
"after an arrow each, and how its last program ended:\n"
"  2301 bash → env → python3.11: exited with status 3\n"
"\n";

static const char more[] =
"\n"
"Totals summed over processes add their peaks: maxlive is then an upper\n"
"bound of the peak of the whole run.\n"
"\n"
"JSON: \"processes\" has an entry a process image (exec starts a new one),\n"
"in tree order, with its \"role\" and \"ended\" (as the database has it:\n"
"\"exit 3\", \"_exit 0\", \"signal SIGTERM\", \"exec\", \"\" when no final\n"
"snapshot). \"tree\" is flat, an entry a pid in depth-first order (a parent\n"
"before its children; depth 0 for a root): pid, ppid, depth, roles and\n"
"process_ids (its images, in exec order) and its last image's ended.\n"
"\n"
"example:\n"
"  mpquery info app.db --format json\n";

static const struct opt opts[] = {
    OPTION_RUN(HELP_RUN),
    OPTION_PID(HELP_PID),
    OPTION_SNAPSHOT("last (default), N, id:N or label:TEXT (see top --help)"),
    OPTION_FORMAT("text (default), csv (one row a process) or json"),
    OPTIONS_SERVER,
    { 0 }
};

static const struct cmd_opts info_opts = {
    .cmd = "info", .usage = usage, .more = more, .opts = opts,
    .missing = "missing DB"
};

/* A pid in the process tree: its images (the processes exec replaced one
 * by the next) are order[first .. first + nimages), in exec order. */
struct pid_node { size_t first, nimages; uint32_t depth; };

/* Totals as of the selection, per process and per thread. */
struct info {
    const struct profile *p;
    const struct selection *sel;
    uint32_t *proc_total, *thread_total;    /* index into p->totals, NONE */
    uint32_t *order;                        /* selected processes, tree order */
    uint32_t *depth;                        /* tree depth per process */
    size_t norder;
    struct pid_node *pids;                  /* the tree, one node a pid (process_tree) */
    size_t npids;
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
        in->profiler_memory = sat_add(in->profiler_memory, p->snapshots[in->sel->proc_snapshot[i]].profiler_memory);
        if (in->proc_total[i] == NONE) continue;
        const struct total *t = &p->totals[in->proc_total[i]];
        counters_add(&in->sum.c, &t->c);
        in->sum.ncalls_nostack = sat_add(in->sum.ncalls_nostack, t->ncalls_nostack);
        in->sum.memtot_nostack = sat_add(in->sum.memtot_nostack, t->memtot_nostack);
        in->sum.nfree_unknown = sat_add(in->sum.nfree_unknown, t->nfree_unknown);
    }
}

static int cmp_start(const void *a, const void *b, void *ctx)
{
    const struct profile *p = ctx;
    const struct process *x = &p->procs[*(const uint32_t *)a], *y = &p->procs[*(const uint32_t *)b];
    if (x->start_time != y->start_time) return x->start_time < y->start_time ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static uint64_t pid_key(const struct process *pr, int64_t pid)
{
    return (uint64_t)pr->run << 40 ^ (uint64_t)pid;
}

/* Groups the selected processes (sel[0..n), by start time) into pids: an
 * image continues the pid of the latest earlier image of its run and pid
 * when that one ended by exec; else it starts a pid of its own (a new
 * process, or a reused pid), whose parent is the pid of the latest image
 * started before it whose pid is its ppid. A parent is always an earlier
 * pid. Returns the number of pids; pid_of[k] is image k's pid, parent[pid]
 * NONE for a root. */
static uint32_t group_images(const struct profile *p, const uint32_t *sel, size_t n,
                             uint32_t *pid_of, uint32_t *parent)
{
    struct idmap latest;                    /* (run, pid) → its latest image so far */
    idmap_init(&latest, n);
    uint32_t npids = 0;
    for (size_t k = 0; k < n; k++) {
        const struct process *pr = &p->procs[sel[k]];
        uint32_t prev = idmap_get(&latest, pid_key(pr, pr->pid));
        if (prev != NONE && !strcmp(p->procs[sel[prev]].ended, "exec")) {
            pid_of[k] = pid_of[prev];
        } else {
            uint32_t up = idmap_get(&latest, pid_key(pr, pr->ppid));
            parent[npids] = up == NONE ? NONE : pid_of[up];
            pid_of[k] = npids++;
        }
        int created;
        *idmap_put(&latest, pid_key(pr, pr->pid), &created) = (uint32_t)k;
    }
    idmap_free(&latest);
    return npids;
}

/* The process tree, which every output shows: in->pids in depth-first
 * order (a pid, then its children's subtrees, siblings by start time), and
 * in->order the same walk over images (a pid's in exec order), with depth.
 * Since a parent is an earlier pid than its children, subtree sizes come
 * from one backward pass and positions from one forward pass. */
static void process_tree(struct info *in)
{
    const struct profile *p = in->p;
    size_t n = 0;
    uint32_t *sel = xmalloc(p->nprocs * sizeof *sel);
    for (uint32_t i = 0; i < p->nprocs; i++)
        if (in->sel->proc_snapshot[i] != NONE) sel[n++] = i;
    qsort_r(sel, n, sizeof *sel, cmp_start, (void *)p);
    uint32_t *pid_of = xmalloc(n * sizeof *pid_of), *parent = xmalloc(n * sizeof *parent);
    uint32_t npids = group_images(p, sel, n, pid_of, parent);
    uint32_t *size = xcalloc(npids, sizeof *size), *pos = xmalloc(npids * sizeof *pos);
    uint32_t *next_free = xmalloc(npids * sizeof *next_free), next_root = 0;
    for (uint32_t u = npids; u-- > 0;) {
        size[u]++;
        if (parent[u] != NONE) size[parent[u]] += size[u];
    }
    in->pids = xcalloc(npids, sizeof *in->pids);
    in->npids = npids;
    for (uint32_t u = 0; u < npids; u++) {
        uint32_t *slot = parent[u] == NONE ? &next_root : &next_free[parent[u]];
        pos[u] = *slot;
        *slot += size[u];
        next_free[u] = pos[u] + 1;
        in->pids[pos[u]].depth = parent[u] == NONE ? 0 : in->pids[pos[parent[u]]].depth + 1;
    }
    for (size_t k = 0; k < n; k++) in->pids[pos[pid_of[k]]].nimages++;
    for (size_t m = 0, first = 0; m < npids; m++) {
        in->pids[m].first = first;
        first += in->pids[m].nimages;
    }
    in->order = xmalloc(n * sizeof *in->order);
    in->depth = xmalloc(n * sizeof *in->depth);
    in->norder = n;
    size_t *placed = xcalloc(npids, sizeof *placed);
    for (size_t k = 0; k < n; k++) {
        uint32_t m = pos[pid_of[k]];
        size_t r = in->pids[m].first + placed[m]++;
        in->order[r] = sel[k];
        in->depth[r] = in->pids[m].depth;
    }
    free(placed); free(next_free); free(pos); free(size); free(parent); free(pid_of); free(sel);
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

static const char *run_token(const struct profile *p, int64_t id)
{
    for (size_t r = 0; r < p->nruns; r++)
        if (p->runs[r].id == id) return p->runs[r].token;
    return "";
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

/* Several files: each one's runs (ids in the profile, processes in the
 * file) and its latest run. */
static void json_sources(struct json *w, const struct profile *p)
{
    json_open(w, '[');
    for (size_t i = 0; i < p->nsources; i++) {
        const struct db_file *f = &p->sources[i];
        json_break(w, 2);
        json_open(w, '{');
        json_key(w, "path"); json_str(w, f->path);
        json_key(w, "latest"); json_int(w, f->latest);
        json_key(w, "runs");
        json_open(w, '[');
        for (size_t r = 0; r < f->nruns; r++) {
            json_open(w, '{');
            json_key(w, "id"); json_int(w, f->runs[r]);
            json_key(w, "token"); json_str(w, run_token(p, f->runs[r]));
            json_key(w, "processes"); json_int(w, f->nprocs[r]);
            json_close(w, '}');
        }
        json_close(w, ']');
        json_close(w, '}');
    }
    json_break(w, 1);
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

/* A process's role: its command name, the basename of its executable
 * ("bash", "python3.11": for a script, its interpreter). */
static const char *role(const struct process *pr)
{
    return *pr->exe ? path_basename(pr->exe) : "?";
}

/* process.ended in words: "exited with status 3", "killed by SIGSEGV"...;
 * a value this version does not know, as it is. */
static const char *ended_words(const struct profile *p, const char *ended, char *buf, size_t n)
{
    static const struct { const char *value, *words; } forms[] = {     /* value, then %s = the rest */
        { "exit ", "exited with status %s" }, { "_exit ", "_exit(%s)" }, { "signal ", "killed by %s" },
    };
    if (!*ended) return p->version < 2 ? "not recorded (a file of format version 1)"
                                       : "still running or killed (no final snapshot)";
    if (!strcmp(ended, "exit")) return "returned from main (status not recorded)";
    if (!strcmp(ended, "exec")) return "replaced itself by exec (the new program was not profiled)";
    if (!strcmp(ended, "quick_exit")) return "quick_exit()";
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
        if (!strncmp(ended, forms[i].value, strlen(forms[i].value))) {
            snprintf(buf, n, forms[i].words, ended + strlen(forms[i].value));
            return buf;
        }
    return ended;
}

/* The per-process line: the value as the database has it ("exit 3",
 * "signal SIGSEGV"), in words where the value alone says little. */
static const char *ended_text(const struct profile *p, const char *ended, char *buf, size_t n)
{
    return *ended && strcmp(ended, "exit") ? ended : ended_words(p, ended, buf, n);
}

static const struct process *last_image(const struct info *in, const struct pid_node *t)
{
    return &in->p->procs[in->order[t->first + t->nimages - 1]];
}

/* The tree: one entry a pid, in tree order, with its images' roles. */
static void json_tree(struct json *w, const struct info *in)
{
    const struct profile *p = in->p;
    json_open(w, '[');
    for (size_t m = 0; m < in->npids; m++) {
        const struct pid_node *t = &in->pids[m];
        const struct process *pr = last_image(in, t);
        json_break(w, 2);
        json_open(w, '{');
        json_key(w, "pid"); json_int(w, pr->pid);
        json_key(w, "ppid"); json_int(w, p->procs[in->order[t->first]].ppid);
        json_key(w, "depth"); json_int(w, t->depth);
        json_key(w, "roles");
        json_open(w, '[');
        for (size_t r = t->first; r < t->first + t->nimages; r++) json_str(w, role(&p->procs[in->order[r]]));
        json_close(w, ']');
        json_key(w, "process_ids");
        json_open(w, '[');
        for (size_t r = t->first; r < t->first + t->nimages; r++) json_int(w, p->procs[in->order[r]].id);
        json_close(w, ']');
        json_key(w, "ended"); json_str(w, pr->ended);
        json_close(w, '}');
    }
    json_break(w, 1);
    json_close(w, ']');
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
    json_key(w, "role"); json_str(w, role(pr));
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
    json_key(&w, "selected_runs");
    json_open(&w, '[');
    for (size_t r = 0; r < p->nruns; r++)
        if (in->sel->run_on[r]) json_int(&w, p->runs[r].id);
    json_close(&w, ']');
    if (p->nsources) {
        json_break(&w, 1);
        json_key(&w, "files"); json_sources(&w, p);
    }
    json_break(&w, 1);
    json_key(&w, "runs"); json_runs(&w, p);
    json_break(&w, 1);
    json_key(&w, "totals"); json_totals(&w, &in->sum);
    json_break(&w, 1);
    json_key(&w, "stacks"); json_int(&w, (int64_t)p->nstacks);        /* kept: the tree's nodes */
    json_key(&w, "stack_tree_nodes"); json_int(&w, (int64_t)p->nstacks);
    json_key(&w, "stacks_with_samples"); json_int(&w, (int64_t)stacks_with_samples(in));
    json_key(&w, "frames"); json_int(&w, (int64_t)p->nframes);
    json_key(&w, "functions"); json_int(&w, (int64_t)p->nfunctions);
    json_key(&w, "modules"); json_int(&w, (int64_t)p->nmodules);
    json_key(&w, "profiler_memory"); json_int(&w, in->profiler_memory);
    json_break(&w, 1);
    json_key(&w, "tree"); json_tree(&w, in);
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
            const char *token = run_token(p, f->runs[r]);
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
            size_t np = processes_of_run(p, r);
            fmt_time(p->runs[r].start_time, when, sizeof when);
            printf("  %c run %lld  %s  %zu process%s\n", in->sel->run_on[r] ? '*' : ' ',
                   (long long)p->runs[r].id, when, np, np == 1 ? "" : "es");
        }
    }
    if (in->sel->run != NONE) {
        fmt_time(p->runs[in->sel->run].start_time, when, sizeof when);
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
        const char *ended = last_image(in, &in->pids[m])->ended;
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
        const struct process *last = last_image(in, t);
        printf("  %*s%lld ", (int)(2 * t->depth), "", (long long)last->pid);
        for (size_t r = t->first; r < t->first + t->nimages; r++) {
            const char *name = role(&p->procs[in->order[r]]);
            if (r > t->first) fputs(" → ", stdout);
            text_clean(stdout, name, strlen(name));
        }
        const char *words = ended_words(p, last->ended, buf, sizeof buf);
        fputs(": ", stdout);
        text_clean(stdout, words, strlen(words));
        putchar('\n');
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
    char when[64], ended[64];
    text_printf(stdout, "profile %s (schema version %d)", p->path, SCHEMA_VERSION);
    putchar('\n');
    if (p->nsources) text_sources(p);
    text_runs(in);
    printf("\nprocesses: %zu, as %zu images (exec starts a new image)\n", in->npids, in->norder);
    print_processes(in, FMT_TEXT);
    text_tree(in);
    text_totals(in);
    for (size_t k = 0; k < in->norder; k++) {
        uint32_t i = in->order[k];
        const struct process *pr = &p->procs[i];
        fmt_time(pr->start_time, when, sizeof when);
        /* each line cleaned: the executable, host, settings and end are the recorded program's text */
        printf("\n");
        text_printf(stdout, "process %lld: %s", (long long)pr->pid, pr->exe);
        printf("\n  ");
        text_printf(stdout, "started %s on %s", when, pr->host);
        printf("\n  ");
        text_printf(stdout, "settings: %s", pr->settings);
        printf("\n  live bytes: %s\n  ", live_bytes_text[live_bytes(pr->settings)[0] == 'a']);
        text_printf(stdout, "ended: %s", ended_text(p, pr->ended, ended, sizeof ended));
        printf("\n");
        text_threads(in, i);
        text_snapshots(in, i);
    }
    printf("\nstacks with samples in this selection: %zu; the stack tree: %zu nodes, frames: %zu, functions: %zu, "
           "modules: %zu\n", stacks_with_samples(in), p->nstacks, p->nframes, p->nfunctions, p->nmodules);
    printf("profiler memory: %lld bytes\n", (long long)in->profiler_memory);
}

int cmd_info(int argc, char **argv)
{
    struct common c;
    int rc = parse_options(&c, &info_opts, argc, argv);
    if (rc != PARSE_OK) return rc;
    struct profile *p;
    struct dbfiles files = dbfiles_of(argc, argv, optind);
    if ((rc = load_selected(&c, &files, -1, select_wants_peak(&c.sel), &p))) return rc;
    struct selection sel;
    if ((rc = select_or_report(&c, p, &sel))) { selection_free(&sel); profile_free(p); return rc; }
    struct info in = { .p = p, .sel = &sel };
    pick_totals(&in);
    process_tree(&in);
    if (c.out.format == FMT_JSON) print_json(&in);
    else if (c.out.format == FMT_CSV) print_processes(&in, FMT_CSV);
    else print_text(&in);
    free(in.proc_total); free(in.thread_total); free(in.order); free(in.depth); free(in.pids);
    selection_free(&sel);
    profile_free(p);
    return 0;
}
