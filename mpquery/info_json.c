/* mpquery info --format json: the runs, sources, processes (an entry a
 * process image, in tree order, with its threads and snapshots), the tree
 * (an entry a pid) and the totals, as one JSON object on stdout. Reads
 * only what cmd_info.c gathered (struct info). */
#include "load.h"
#include "info.h"
#include "timeline.h"
#include "schema_version.h"   /* SCHEMA_VERSION, from schema/profile.sql */

#include <string.h>

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

/* "peak": {bytes, snapshot, time, snapshot_bytes} the process peak
 * (timeline_process_peak: its maxlive), its peak snapshot's seq, time
 * from the process's start and live bytes (nulls without one). */
static void json_peak(struct json *w, const struct profile *p, uint32_t proc)
{
    uint32_t snap;
    int64_t v = timeline_process_peak(p, proc, &snap);
    json_key(w, "peak");
    json_open(w, '{');
    json_key(w, "bytes"); if (v >= 0) json_int(w, v); else json_null(w);
    json_key(w, "snapshot"); if (snap != NONE) json_int(w, p->snapshots[snap].seq); else json_null(w);
    json_key(w, "time");
    if (snap != NONE) json_fixed(w, p->snapshots[snap].time - p->procs[proc].start_time, 6); else json_null(w);
    int64_t held = timeline_peak_snapshot_live(p, snap);
    json_key(w, "snapshot_bytes"); if (held >= 0) json_int(w, held); else json_null(w);
    json_close(w, '}');
}

/* "mappings": {nmap, mapped, maxmapped, rss} of summed sample rows, when
 * the profile has mappings. */
static void json_mappings(struct json *w, const struct info *in, const counters *c)
{
    static const int k[] = { NMAP, MAPPED, MAXMAPPED, RSS };
    if (!in->p->has_mappings) return;
    json_key(w, "mappings");
    json_open(w, '{');
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        json_key(w, counter_name[k[i]]);
        json_int(w, c->v[k[i]]);
    }
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
        json_key(w, "processes"); json_int(w, (int64_t)info_processes_of_run(p, r));
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
            json_key(w, "token"); json_str(w, info_run_token(p, f->runs[r]));
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
        json_key(w, "totals"); json_totals(w, info_total_at(in, in->thread_total[t]));
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
static void json_tree(struct json *w, const struct info *in)
{
    const struct profile *p = in->p;
    json_open(w, '[');
    for (size_t m = 0; m < in->npids; m++) {
        const struct pid_node *t = &in->pids[m];
        const struct process *pr = info_last_image(in, t);
        json_break(w, 2);
        json_open(w, '{');
        json_key(w, "pid"); json_int(w, pr->pid);
        json_key(w, "ppid"); json_int(w, p->procs[in->order[t->first]].ppid);
        json_key(w, "depth"); json_int(w, t->depth);
        json_key(w, "roles");
        json_open(w, '[');
        for (size_t r = t->first; r < t->first + t->nimages; r++) json_str(w, procs_name(&p->procs[in->order[r]]));
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
    json_key(w, "role"); json_str(w, procs_name(pr));
    json_key(w, "cmdline"); json_str(w, pr->cmdline);
    json_key(w, "host"); json_str(w, pr->host);
    json_key(w, "settings"); json_str(w, pr->settings);
    json_key(w, "live_bytes"); json_str(w, info_live_bytes(pr->settings));
    if (info_cap_sampled(pr->settings) >= 0) {      /* MP_MAX_MEMORY reached: seconds after its start */
        json_key(w, "sampled_from"); json_fixed(w, info_cap_sampled(pr->settings), 3);
    }
    json_key(w, "ended"); json_str(w, pr->ended);
    json_key(w, "start_time"); json_fixed(w, pr->start_time, 6);
    json_key(w, "end_time");
    if (pr->end_time < 0) json_null(w); else json_fixed(w, pr->end_time, 6);
    json_key(w, "duration");
    if (pr->end_time < 0) json_null(w); else json_fixed(w, pr->end_time - pr->start_time, 6);
    json_key(w, "snapshot"); json_int(w, sel->seq);
    json_key(w, "profiler_memory"); json_int(w, sel->profiler_memory);
    json_key(w, "totals"); json_totals(w, info_total_at(in, in->proc_total[i]));
    json_peak(w, p, i);
    if (!in->p->aggregate) json_mappings(w, in, &in->proc_samples[i]);   /* --server: per run, not per process */
    json_break(w, 3);
    json_key(w, "threads"); json_threads(w, in, i);
    json_break(w, 3);
    json_key(w, "snapshots"); json_snapshots(w, p, pr);
    json_close(w, '}');
}

void info_print_json(const struct info *in)
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
    int64_t peak = 0;                   /* the process peak, or the sum of the processes' */
    for (size_t k = 0; k < in->norder; k++) {
        uint32_t snap;
        int64_t v = timeline_process_peak(p, in->order[k], &snap);
        if (v > 0) peak = sat_add(peak, v);
    }
    json_key(&w, "peak"); json_int(&w, peak);
    json_mappings(&w, in, &in->samples_sum);
    json_break(&w, 1);
    json_key(&w, "stacks"); json_int(&w, (int64_t)p->nstacks);        /* kept: the tree's nodes */
    json_key(&w, "stack_tree_nodes"); json_int(&w, (int64_t)p->nstacks);
    json_key(&w, "stacks_with_samples"); json_int(&w, (int64_t)info_stacks_with_samples(in));
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
