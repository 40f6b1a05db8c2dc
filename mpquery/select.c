/* Which samples a query sees: a run, all runs, or by default the latest
 * run of each database file (the largest run id in the file; with one
 * file, the largest run id), optionally one pid (one of its images:
 * --image), the processes of one executable (--exe), and one thread tid
 * or the threads whose name (after the rules' thread lines) matches a
 * pattern, and per process one snapshot (default its last; `peak`: its
 * peak). A process row is one image: a pid that exec'd has one per
 * program it ran. Sample rows are cumulative
 * and a snapshot stores only changed rows, so the value of (stack, thread)
 * at snapshot S of a process is its row with the largest snapshot id <= S
 * among that process's snapshots, those of the peak left out but for S
 * itself (schema/profile.sql). The result is per-stack counters summed over the
 * selected threads and processes (maxlive: sum of per-thread peaks).
 * live_only (leaks) then keeps only the stacks with blocks or bytes still
 * live, so that every later count is of leaking stacks. The selection's
 * options (select.h) are parsed in select_opts.c. */
#include "mpquery.h"
#include "profile.h"
#include "opt_groups.h"
#include "options.h"
#include "procs.h"
#include "select.h"

#include <stdlib.h>
#include <string.h>

int select_parse_snapshot(const char *arg, struct select_opts *o)
{
    if (!strcmp(arg, "last")) { o->snap_kind = SNAP_LAST; return 0; }
    if (!strcmp(arg, "peak")) { o->snap_kind = SNAP_PEAK; return 0; }
    if (!strncmp(arg, "id:", 3)) {
        o->snap_kind = SNAP_ID;
        return parse_int64(arg + 3, &o->snap_value);
    }
    if (!strncmp(arg, "label:", 6)) {
        o->snap_kind = SNAP_LABEL;
        o->snap_label = arg + 6;
        return *o->snap_label ? 0 : -1;     /* '' is no label: every unlabelled snapshot */
    }
    o->snap_kind = SNAP_SEQ;
    if (parse_int64(arg, &o->snap_value) || o->snap_value < 1) return -1;
    return 0;
}

/* The snapshot a process contributes, or NONE. A sequence number names a
 * peak snapshot only exactly. */
static uint32_t pick_snapshot(const struct profile *p, const struct process *pr,
                              const struct select_opts *o)
{
    uint32_t found = NONE;
    for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++) {
        const struct snapshot *sn = &p->snapshots[j];
        switch (o->snap_kind) {
        case SNAP_LAST: if (!sn->peak) found = j; break;
        case SNAP_SEQ: if (sn->peak ? sn->seq == o->snap_value : sn->seq <= o->snap_value) found = j; break;
        case SNAP_ID: if (sn->id == o->snap_value) found = j; break;
        case SNAP_LABEL: if (!sn->peak && !strcmp(sn->label, o->snap_label)) found = j; break;
        case SNAP_PEAK: if (sn->peak) found = j; break;
        }
    }
    return found;
}

#define ERR(...) do { snprintf(err, errlen, __VA_ARGS__); return EXIT_BAD_INPUT; } while (0)

/* s->run_on: --run ID, all, or each file's latest; s->run the one run
 * selected, else NONE. */
static int select_runs(const struct profile *p, const struct select_opts *o,
                       struct selection *s, char *err, size_t errlen)
{
    s->run = NONE;
    for (uint32_t i = 0; i < p->nruns; i++) {
        int latest = p->latest_runs ? p->latest_runs[i] : i + 1 == p->nruns;     /* runs are loaded by id */
        s->run_on[i] = o->run_all || (o->has_run ? p->runs[i].id == o->run_id : latest);
        s->nruns_on += s->run_on[i];
        if (s->run_on[i]) s->run = i;
    }
    if (o->has_run && !o->run_all && !s->nruns_on)
        ERR("no run %lld in %s (see mpquery info)", (long long)o->run_id,
            p->nsources > 1 ? "these profiles" : "this profile");
    if (o->run_all || s->nruns_on != 1) s->run = NONE;
    return 0;
}

/* How --exe's error lists a process: for a PATH its executable's path,
 * for a NAME its name and, when another, its executable's file name
 * ("python3 (python3.11)"): the names --exe takes. */
static void exe_label(const struct process *pr, const char *want, struct strbuf *out)
{
    out->len = 0;
    sb_puts(out, "");
    if (strchr(want, '/')) {
        sb_puts(out, pr->exe);
        return;
    }
    sb_puts(out, procs_name(pr));
    if (*procs_exe_name(pr) && strcmp(procs_exe_name(pr), procs_name(pr)))
        sb_printf(out, " (%s)", procs_exe_name(pr));
}

/* A process row's number among the images of its pid in its run (1: the
 * first program the pid ran; then one per exec), in the order they
 * started. */
static int64_t image_of(const struct profile *p, uint32_t i)
{
    const struct process *pr = &p->procs[i];
    int64_t n = 1;
    for (uint32_t j = 0; j < p->nprocs; j++) {
        const struct process *q = &p->procs[j];
        if (j != i && q->run == pr->run && q->pid == pr->pid && procs_by_start(&j, &i, (void *)p) < 0) n++;
    }
    return n;
}

/* The error when --exe or --image leave no process, naming those there
 * are: the selected runs' executables, or the pid's images. */
static int none_matched(const struct profile *p, const struct select_opts *o, const struct selection *s,
                        char *err, size_t errlen)
{
    struct strbuf sb = { 0 }, label = { 0 }, other = { 0 };
    size_t n = 0;
    for (uint32_t i = 0; i < p->nprocs; i++) {
        const struct process *pr = &p->procs[i];
        if (!s->run_on[pr->run] || (o->has_pid && pr->pid != o->pid)) continue;
        if (o->image) {
            sb_printf(&sb, "%s%lld %s", n++ ? ", " : "", (long long)image_of(p, i), pr->exe);
            continue;
        }
        exe_label(pr, o->exe, &label);
        uint32_t j = 0;         /* each once: names for a NAME, paths for a PATH */
        for (; j < i; j++) {
            if (!s->run_on[p->procs[j].run] || (o->has_pid && p->procs[j].pid != o->pid)) continue;
            exe_label(&p->procs[j], o->exe, &other);
            if (!strcmp(label.s, other.s)) break;
        }
        if (j == i) sb_printf(&sb, "%s%s", n++ ? ", " : "", label.s);
    }
    sb_free(&label);
    sb_free(&other);
    const char *there = n ? sb.s : "none";
    if (o->image)
        snprintf(err, errlen, "no image %lld of pid %lld%s%s (it ran %zu: %s)", (long long)o->image,
                 (long long)o->pid, o->exe ? " running " : "", o->exe ? o->exe : "", n, there);
    else
        snprintf(err, errlen, "no process of executable '%s'%s in the selected run%s (there are: %s)", o->exe,
                 o->has_pid ? " with that pid" : "", s->nruns_on == 1 ? "" : "s", there);
    sb_free(&sb);
    return EXIT_BAD_INPUT;
}

/* --snapshot N names a snapshot of the selected processes: N beyond the
 * last of every one (or before the first) is refused with their range
 * (lo..hi, the sequence numbers info lists), not read as the last; within
 * it, a process with fewer snapshots counts at its last. */
static void seq_range(const struct profile *p, const struct process *pr, int64_t *lo, int64_t *hi)
{
    for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++) {
        if (p->snapshots[j].seq < *lo) *lo = p->snapshots[j].seq;
        if (p->snapshots[j].seq > *hi) *hi = p->snapshots[j].seq;
    }
}

static int seq_out_of_range(const struct select_opts *o, size_t nprocs, int64_t lo, int64_t hi, char *err,
                            size_t errlen)
{
    const char *have = nprocs == 1 ? " has" : "es have";
    if (!hi) ERR("--snapshot %lld: the selected process%s no snapshot", (long long)o->snap_value, have);
    if (lo == hi)
        ERR("--snapshot %lld: the selected process%s only snapshot %lld (see mpquery info)", (long long)o->snap_value,
            have, (long long)hi);
    ERR("--snapshot %lld: the selected process%s snapshots %lld to %lld (see mpquery info)",
        (long long)o->snap_value, have, (long long)lo, (long long)hi);
}

static int select_processes(const struct profile *p, const struct select_opts *o,
                            struct selection *s, char *err, size_t errlen)
{
    int rc = select_runs(p, o, s, err, errlen);
    if (rc) return rc;
    if (o->image && !o->has_pid)
        ERR("--image %lld needs --pid: the process whose programs it counts", (long long)o->image);
    size_t matched = 0, pid_matched = 0;
    int64_t lo = INT64_MAX, hi = 0;         /* the matched processes' snapshots (seq) */
    for (uint32_t i = 0; i < p->nprocs; i++) {
        const struct process *pr = &p->procs[i];
        s->proc_snapshot[i] = NONE;
        if (!s->run_on[pr->run]) continue;
        if (o->has_pid && pr->pid != o->pid) continue;
        pid_matched++;
        if (o->exe && !procs_exe_matches(pr, o->exe)) continue;
        if (o->image && image_of(p, i) != o->image) continue;
        matched++;
        seq_range(p, pr, &lo, &hi);
        s->proc_snapshot[i] = pick_snapshot(p, pr, o);
        if (s->proc_snapshot[i] != NONE) s->nselected++;
    }
    if (o->has_pid && !pid_matched)
        ERR("no process with pid %lld in the selected run%s", (long long)o->pid, s->nruns_on == 1 ? "" : "s");
    if (!matched && (o->exe || o->image)) return none_matched(p, o, s, err, errlen);
    if (o->snap_kind == SNAP_SEQ && matched && (o->snap_value > hi || !s->nselected))
        return seq_out_of_range(o, matched, lo, hi, err, errlen);
    if (o->snap_kind == SNAP_ID && !s->nselected)
        ERR("no snapshot with id %lld in the selected processes", (long long)o->snap_value);
    if (o->snap_kind == SNAP_LABEL && !s->nselected)
        ERR("no snapshot labelled '%s' in the selected processes", o->snap_label);
    if (o->snap_kind == SNAP_PEAK && !s->nselected)
        ERR("no peak snapshot in the selected processes (recorded before format version 3?)");
    return 0;
}

/* Whether snapshot j's rows count at snapshot sel of the same process. */
static int in_chain(const struct profile *p, uint32_t j, uint32_t sel)
{
    return j == sel || (!p->snapshots[j].peak && p->snapshots[j].id < p->snapshots[sel].id);
}

/* A sample qualifies when its thread is selected and its snapshot is in
 * the chain of its process's selected one. */
static int qualifies(const struct profile *p, const struct selection *s, const uint8_t *thread_ok,
                     const struct sample *sa)
{
    uint32_t sel = s->proc_snapshot[p->snapshots[sa->snapshot].process];
    return sel != NONE && thread_ok[sa->thread] && in_chain(p, sa->snapshot, sel);
}

/* Whether each selected process has exactly one qualifying snapshot (the
 * common "exit only" case): rows are then unique per (stack, thread). */
static int one_snapshot_each(const struct profile *p, const struct selection *s)
{
    for (size_t i = 0; i < p->nprocs; i++) {
        uint32_t sel = s->proc_snapshot[i];
        if (sel == NONE) continue;
        const struct process *pr = &p->procs[i];
        size_t k = 0;
        for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++)
            k += in_chain(p, j, sel);
        if (k != 1) return 0;
    }
    return 1;
}

static void keep_row(struct selection *s, uint32_t row, size_t *cap)
{
    if (s->nrows == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        s->rows = xrealloc(s->rows, *cap * sizeof *s->rows);
    }
    s->rows[s->nrows++] = row;
}

/* Several snapshots qualify: per (stack, thread) only the newest row. */
static void sum_latest(const struct profile *p, struct selection *s, const uint8_t *thread_ok, int keep_rows)
{
    size_t cap = 0;
    struct idmap latest;
    idmap_init(&latest, p->nrecorded);
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct sample *sa = &p->samples[i];
        if (!qualifies(p, s, thread_ok, sa)) continue;
        int created;
        uint32_t *v = idmap_put(&latest, (uint64_t)sa->thread << 32 | sa->stack, &created);
        if (created || p->snapshots[p->samples[*v].snapshot].id < p->snapshots[sa->snapshot].id)
            *v = (uint32_t)i;
    }
    for (size_t k = 0; k < latest.cap; k++) {
        if (latest.vals[k] == NONE) continue;
        const struct sample *sa = &p->samples[latest.vals[k]];
        counters_add(&s->stack_c[sa->rec], &sa->c);
        if (keep_rows) keep_row(s, latest.vals[k], &cap);
    }
    idmap_free(&latest);
}

/* The counters of the rows at each selected process's snapshot into
 * s->stack_c (and s->rows, keep_rows). */
static void sum_selected(const struct profile *p, struct selection *s, int keep_rows)
{
    if (one_snapshot_each(p, s)) {
        size_t cap = 0;
        for (size_t i = 0; i < p->nsamples; i++)
            if (qualifies(p, s, s->thread_ok, &p->samples[i])) {
                counters_add(&s->stack_c[p->samples[i].rec], &p->samples[i].c);
                if (keep_rows) keep_row(s, (uint32_t)i, &cap);
            }
    } else {
        sum_latest(p, s, s->thread_ok, keep_rows);
    }
}

/* The kept rows (at until) less the rows of the same (stack, thread) at
 * since (the latest there: rows are cumulative), into s->row_change, so
 * that per-group views sum each row's change over the window. */
static void rows_less_since(const struct profile *p, struct selection *s, uint32_t *until, size_t nuntil)
{
    struct idmap at_since;
    idmap_init(&at_since, s->nrows + 1);
    int created;
    for (size_t i = 0; i < s->nrows; i++) {
        const struct sample *sa = &p->samples[s->rows[i]];
        *idmap_put(&at_since, (uint64_t)sa->thread << 32 | sa->stack, &created) = s->rows[i];
    }
    s->row_change = xmalloc((nuntil + 1) * sizeof *s->row_change);
    for (size_t i = 0; i < nuntil; i++) {
        struct sample *ch = &s->row_change[i];
        *ch = p->samples[until[i]];
        uint32_t j = idmap_get(&at_since, (uint64_t)ch->thread << 32 | ch->stack);
        for (int k = 0; j != NONE && k < NSTACK_COUNTERS; k++)
            if (!counter_is_max(k)) ch->c.v[k] = sat_add(ch->c.v[k], -p->samples[j].c.v[k]);
        until[i] = (uint32_t)i;
    }
    idmap_free(&at_since);
    free(s->rows);
    s->rows = until, s->nrows = nuntil;
    s->samples = s->row_change;
}

/* A window of a file: the counters (and kept rows) at its until
 * snapshots less those at its since snapshots. */
static void window_less_since(const struct profile *p, struct selection *s, int keep_rows)
{
    counters *at_until = s->stack_c;
    uint32_t *until = s->proc_snapshot, *until_rows = s->rows;
    size_t nuntil = s->nrows;
    s->rows = NULL, s->nrows = 0;
    s->stack_c = xcalloc(p->nrecorded ? p->nrecorded : 1, sizeof *s->stack_c);
    s->proc_snapshot = s->proc_since;
    sum_selected(p, s, keep_rows);
    for (size_t i = 0; i < p->nrecorded; i++)
        for (int k = 0; k < NSTACK_COUNTERS; k++)
            if (!counter_is_max(k)) at_until[i].v[k] = sat_add(at_until[i].v[k], -s->stack_c[i].v[k]);
    free(s->stack_c);
    s->stack_c = at_until, s->proc_snapshot = until;
    if (keep_rows) rows_less_since(p, s, until_rows, nuntil);
    else free(until_rows);
}

/* s->thread_ok: the threads of the selected processes that --thread names. */
static int select_threads(const struct profile *p, const struct select_opts *o,
                          struct selection *s, char *err, size_t errlen)
{
    regex_t re;
    if (o->thread_re && thread_pattern_compile(o->thread_re, &re, err, errlen))
        return EXIT_BAD_INPUT;      /* options.c compiled it already */
    size_t nthreads_ok = 0;
    for (size_t t = 0; t < p->nthreads; t++) {
        const struct thread *th = &p->threads[t];
        s->thread_ok[t] = s->proc_snapshot[th->process] != NONE && (!o->has_tid || th->tid == o->tid)
                          && (!o->thread_re || thread_pattern_match(&re, s->thread_name[t]));
        nthreads_ok += s->thread_ok[t];
    }
    if (o->thread_re) regfree(&re);
    if (o->has_tid && !nthreads_ok)
        ERR("no thread with tid %lld in the selected processes", (long long)o->tid);
    if (o->thread_re && !nthreads_ok)
        ERR("no thread whose name matches '%s' in the selected processes (see mpquery info)", o->thread_re);
    return 0;
}

int select_apply(const struct profile *p, const struct select_opts *o,
                 struct selection *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->run_on = xcalloc(p->nruns, 1);
    s->proc_snapshot = xmalloc(p->nprocs * sizeof *s->proc_snapshot);
    s->stack_c = xcalloc(p->nrecorded ? p->nrecorded : 1, sizeof *s->stack_c);
    s->thread_name = thread_names(p, o->rules, &s->names);
    s->thread_ok = xmalloc(p->nthreads);
    int rc = select_processes(p, o, s, err, errlen);
    if (!rc) rc = select_threads(p, o, s, err, errlen);
    if (rc) {
        selection_free(s);      /* a failed selection holds nothing */
        return rc;
    }

    if ((o->since || o->until) && (rc = window_select(p, o, s, err, errlen))) {
        selection_free(s);
        return rc;
    }
    s->samples = p->samples;
    sum_selected(p, s, o->keep_rows);
    if (s->proc_since && !p->aggregate) window_less_since(p, s, o->keep_rows);
    if (o->live_only)
        for (size_t i = 0; i < p->nrecorded; i++)
            if (s->stack_c[i].v[NLIVE] <= 0 && s->stack_c[i].v[MEMLIVE] <= 0)
                memset(&s->stack_c[i], 0, sizeof s->stack_c[i]);
    return 0;
}

void selection_free(struct selection *s)
{
    free(s->run_on);
    free(s->proc_snapshot);
    free(s->proc_since);
    free(s->stack_c);
    free(s->thread_ok);
    free(s->thread_name);
    arena_free(&s->names);
    free(s->rows);
    free(s->row_change);
    memset(s, 0, sizeof *s);
}

const struct total *snapshot_total(const struct profile *p, uint32_t snapshot)
{
    uint32_t t = p->snapshot_total[snapshot];
    return t == NONE ? NULL : &p->totals[t];
}
