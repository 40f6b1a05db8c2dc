/* mpquery info's gathering (info.h): the totals of each process and thread
 * at the selected snapshot, the process tree, and the words for settings
 * and endings, which the printers (info_json.c, info_text.c) ask for.
 * Totals of a process or thread at a snapshot are its totals row with the
 * largest snapshot id <= the selected one. */
#include "info.h"
#include "mpquery.h"
#include "profile.h"
#include "optdefs.h"
#include "output.h"
#include "select.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Per process and per thread, its totals row with the largest snapshot
 * id <= its snapshot in at (NONE: none), into proc and thread. */
static void totals_at(const struct profile *p, const uint32_t *at, uint32_t *proc, uint32_t *thread)
{
    for (uint32_t i = 0; i < p->ntotals; i++) {
        const struct total *t = &p->totals[i];
        const struct snapshot *sn = &p->snapshots[t->snapshot];
        uint32_t sel = at[sn->process];
        if (sel == NONE || sn->id > p->snapshots[sel].id) continue;
        uint32_t *slot = t->thread == NONE ? &proc[sn->process] : &thread[t->thread];
        if (t->thread != NONE && p->threads[t->thread].process != sn->process) continue;
        if (*slot == NONE || p->snapshots[p->totals[*slot].snapshot].id < sn->id) *slot = i;
    }
}

static void total_less(struct total *t, const struct total *since)
{
    for (int k = 0; k < NSTACK_COUNTERS; k++)
        if (!counter_is_max(k)) t->c.v[k] = sat_add(t->c.v[k], -since->c.v[k]);
    t->ncalls_nostack = sat_add(t->ncalls_nostack, -since->ncalls_nostack);
    t->memtot_nostack = sat_add(t->memtot_nostack, -since->memtot_nostack);
    t->nfree_unknown = sat_add(t->nfree_unknown, -since->nfree_unknown);
}

/* A window's totals (in->window): the rows picked at its end less those
 * at its start (select.c subtracts the stacks' counters alike). */
static void window_totals(struct info *in)
{
    const struct profile *p = in->p;
    uint32_t *proc = none_array(p->nprocs), *thread = none_array(p->nthreads);
    totals_at(p, in->sel->proc_since, proc, thread);
    in->window = xmalloc((p->ntotals ? p->ntotals : 1) * sizeof *in->window);
    memcpy(in->window, p->totals, p->ntotals * sizeof *in->window);
    for (size_t i = 0; i < p->nprocs; i++)
        if (in->proc_total[i] != NONE && proc[i] != NONE) total_less(&in->window[in->proc_total[i]], &p->totals[proc[i]]);
    for (size_t i = 0; i < p->nthreads; i++)
        if (in->thread_total[i] != NONE && thread[i] != NONE)
            total_less(&in->window[in->thread_total[i]], &p->totals[thread[i]]);
    free(proc);
    free(thread);
}

static void pick_totals(struct info *in)
{
    const struct profile *p = in->p;
    in->proc_total = none_array(p->nprocs);
    in->thread_total = none_array(p->nthreads);
    totals_at(p, in->sel->proc_snapshot, in->proc_total, in->thread_total);
    if (in->sel->proc_since && !p->aggregate) window_totals(in);
    in->proc_samples = xcalloc(p->nprocs ? p->nprocs : 1, sizeof *in->proc_samples);
    for (size_t r = 0; r < in->sel->nrows; r++) {
        const struct sample *sa = &in->sel->samples[in->sel->rows[r]];
        counters_add(&in->proc_samples[p->threads[sa->thread].process], &sa->c);
        counters_add(&in->samples_sum, &sa->c);
    }
    for (size_t i = 0; i < p->nprocs; i++) {
        if (in->sel->proc_snapshot[i] == NONE) continue;
        in->profiler_memory = sat_add(in->profiler_memory, p->snapshots[in->sel->proc_snapshot[i]].profiler_memory);
        if (in->proc_total[i] == NONE) continue;
        procs_total_add(&in->sum, info_total_at(in, in->proc_total[i]));
    }
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
    qsort_r(sel, n, sizeof *sel, procs_by_start, (void *)p);
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

const struct total *info_total_at(const struct info *in, uint32_t idx)
{
    return idx == NONE ? NULL : in->window ? &in->window[idx] : &in->p->totals[idx];
}

size_t info_stacks_with_samples(const struct info *in)
{
    size_t n = 0;
    for (size_t r = 0; r < in->p->nrecorded; r++) n += !counters_zero(&in->sel->stack_c[r]);
    return n;
}

const char *info_run_token(const struct profile *p, int64_t id)
{
    for (size_t r = 0; r < p->nruns; r++)
        if (p->runs[r].id == id) return p->runs[r].token;
    return "";
}

size_t info_processes_of_run(const struct profile *p, size_t run)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nprocs; i++) n += p->procs[i].run == run;
    return n;
}


/* How the process's recorder counted live bytes, from its settings: with
 * every block tracked (full capture), requested bytes; in the cheap modes
 * (MP_SAMPLE, MP_STACKS=tags|none, MP_ENABLED=0), the allocator's block
 * sizes, and a stack's counters may be estimates. */
static int setting_is(const char *settings, const char *name, const char *value)
{
    char text[256];
    if (mp_setting_value(settings, name, text, sizeof text)) return -1;  /* a recorder from before the setting */
    for (size_t i = 0; i < MP_NOPTIONS; i++) {
        if (strcmp(mp_option_defs[i].name, name)) continue;
        union { uint64_t u; double d; long l; int i; } a = { 0 }, b = { 0 };    /* values as the recorder read them */
        if (mp_option_parse(mp_option_defs[i].kind, text, &a, sizeof a) ||
            mp_option_parse(mp_option_defs[i].kind, value, &b, sizeof b)) break;
        return !memcmp(&a, &b, sizeof a);
    }
    return !strcmp(text, value);
}

const char *info_live_bytes(const char *settings)
{
    int full = setting_is(settings, "MP_SAMPLE", "0") != 0 && setting_is(settings, "MP_STACKS", "unwind") != 0 &&
               setting_is(settings, "MP_ENABLED", "1") != 0;
    return full ? "requested" : "allocator";
}

const char *const info_live_bytes_text[] = {
    "requested sizes (every block tracked)",
    "the allocator's block sizes (a cheap mode: only sampled blocks are tracked; the totals' calls, bytes and frees "
    "exact)",
};

int info_sampled(const char *settings)
{
    return setting_is(settings, "MP_SAMPLE", "0") == 0 || info_cap_sampled(settings) >= 0;
}

double info_cap_sampled(const char *settings)
{
    char text[64];
    if (!settings || mp_setting_value(settings, "MP_SAMPLED_FROM", text, sizeof text)) return -1;
    return strtod(text, NULL);
}

int info_any_sampled(const struct profile *p)
{
    for (size_t i = 0; i < p->nprocs; i++)
        if (p->procs[i].settings && info_sampled(p->procs[i].settings)) return 1;
    return 0;
}

/* process.ended in words: "exited with status 3", "killed by SIGSEGV"...;
 * a value this version does not know, as it is. */
const char *info_ended_words(const struct profile *p, const char *ended, char *buf, size_t n)
{
    static const struct { const char *value, *words; } forms[] = {     /* value, then %s = the rest */
        { "exit ", "exited with status %s" }, { "return ", "returned from main with status %s" },
        { "_exit ", "_exit(%s)" }, { "signal ", "killed by %s" },
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
const char *info_ended_text(const struct profile *p, const char *ended, char *buf, size_t n)
{
    return *ended && strcmp(ended, "exit") ? ended : info_ended_words(p, ended, buf, n);
}

int info_mappings_text(const struct info *in, const counters *c, char *buf, size_t n)
{
    if (!in->p->has_mappings) return 0;
    char mapped[32], rss[32];
    int h = in->human;
    snprintf(buf, n, "%lld mapping%s, %s mapped, %s resident", (long long)c->v[NMAP], c->v[NMAP] == 1 ? "" : "s",
             h ? fmt_human(MAPPED, c->v[MAPPED], mapped, sizeof mapped) : (snprintf(mapped, sizeof mapped, "%lld bytes",
                 (long long)c->v[MAPPED]), mapped),
             h ? fmt_human(RSS, c->v[RSS], rss, sizeof rss) : (snprintf(rss, sizeof rss, "%lld bytes",
                 (long long)c->v[RSS]), rss));
    return 1;
}

const struct process *info_last_image(const struct info *in, const struct pid_node *t)
{
    return &in->p->procs[in->order[t->first + t->nimages - 1]];
}

void info_gather(struct info *in)
{
    pick_totals(in);
    process_tree(in);
}

void info_free(struct info *in)
{
    free(in->proc_samples); free(in->proc_total); free(in->thread_total); free(in->order); free(in->depth);
    free(in->pids); free(in->window);
}
