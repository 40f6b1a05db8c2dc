/* Time windows, --since and --until (select.h): the times they take
 * (when_parse: +S from the run's start, seconds since the epoch, a local
 * date, an age) and, per selected process, the snapshots the window's
 * ends are read at: the last at or before each end, peak snapshots aside
 * (window_select). A snapshot holds the rows that changed since the one
 * before (schema/profile.sql), so the counters at a snapshot are all
 * there is: a window's allocations are the counters at its until
 * snapshot less those at its since snapshot (select.c subtracts them);
 * a time between two snapshots reads as the earlier one. */
#include "mpquery.h"
#include "optdefs.h"
#include "select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A local date "YYYY-MM-DD[ HH:MM[:SS]]" as seconds since the epoch. */
static int parse_date(const char *arg, double *out)
{
    int n = 0, y, mo, d, h = 0, mi = 0, s = 0;
    if (sscanf(arg, "%d-%d-%d%n", &y, &mo, &d, &n) != 3) return -1;
    const char *rest = arg + n;
    if (*rest) {
        int m = 0;
        if (sscanf(rest, " %d:%d%n", &h, &mi, &m) != 2) return -1;
        rest += m;
        if (*rest && (sscanf(rest, ":%d%n", &s, &m) != 1 || rest[m])) return -1;
    }
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60)
        return -1;
    struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi,
                     .tm_sec = s, .tm_isdst = -1 };
    time_t t = mktime(&tm);
    if (t == (time_t)-1) return -1;
    *out = (double)t;
    return 0;
}

int when_parse(const char *arg, int rel_ok, struct when *w)
{
    *w = (struct when){ 0 };
    if (*arg == '+') {          /* +1.5, +90s, +2m: the one duration syntax (mp_parse_duration) */
        w->rel = 1;
        return rel_ok && !mp_parse_duration(arg + 1, &w->t) ? 0 : -1;
    }
    char *end;
    double v = strtod(arg, &end);
    if (end != arg && *end == 0 && v >= 0 && v < 1e12) { w->t = v; return 0; }
    double age;
    if (end != arg && *end != '-' && !mp_parse_duration(arg, &age)) {    /* 90s, 2h, 1d */
        w->t = (double)time(NULL) - age;
        return 0;
    }
    return parse_date(arg, &w->t);
}

double window_run_start(const struct profile *p, uint32_t run)
{
    double t0 = -1;
    for (size_t i = 0; i < p->nprocs; i++)
        if (p->procs[i].run == run && (t0 < 0 || p->procs[i].start_time < t0)) t0 = p->procs[i].start_time;
    return t0 < 0 ? p->runs[run].start_time : t0;
}

/* The last snapshot of process pr (peak snapshots aside) at or before
 * time t, NONE when none is. */
static uint32_t snapshot_at(const struct profile *p, const struct process *pr, double t)
{
    uint32_t found = NONE;
    for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++)
        if (!p->snapshots[j].peak && p->snapshots[j].time <= t) found = j;
    return found;
}

/* What the note and the refusal say of the window and its snapshots;
 * times from the start of the first selected process's run. */
struct seen {
    double t0;                  /* that start */
    double since, until;        /* the ends (-1, 1e300: none), as seconds since the epoch */
    size_t nprocs, inside;      /* selected processes; those with a snapshot in the window */
    uint32_t from, to;          /* one process: its snapshots at since and until */
    double first, last;         /* the snapshots' times at the ends, all processes; and the span */
    double lo, hi;              /* of every snapshot of the selected processes */
};

static void fmt_end(char *buf, size_t n, double t, double t0, const char *none)
{
    if (t < 0 || t >= 1e300) snprintf(buf, n, "%s", none);
    else snprintf(buf, n, "%+.3f", t - t0);
}

/* "window +1.000..+2.500 s" */
static void window_name(const struct seen *w, char *buf, size_t n)
{
    char a[64], b[64];
    fmt_end(a, sizeof a, w->since, w->t0, "start");
    fmt_end(b, sizeof b, w->until, w->t0, "end");
    snprintf(buf, n, "window %s..%s s", a, b);
}

static void note(const struct profile *p, const struct seen *w)
{
    char name[160], a[96], b[96];
    window_name(w, name, sizeof name);
    if (w->nprocs == 1) {
        snprintf(b, sizeof b, "%lld (%+.3f s)", (long long)p->snapshots[w->to].seq, p->snapshots[w->to].time - w->t0);
        if (w->from == NONE) {
            fprintf(stderr, "mpquery: %s: from the process's start to snapshot %s\n", name, b);
            return;
        }
        snprintf(a, sizeof a, "%lld (%+.3f s)", (long long)p->snapshots[w->from].seq, p->snapshots[w->from].time - w->t0);
        fprintf(stderr, "mpquery: %s: snapshots %s to %s\n", name, a, b);
        return;
    }
    fmt_end(a, sizeof a, w->first, w->t0, "their start");
    fprintf(stderr, "mpquery: %s: snapshots of %zu processes (%zu with one in the window), from %s to %+.3f s\n",
            name, w->nprocs, w->inside, w->first < 0 ? "their start" : a, w->last - w->t0);
}

/* The window's ends for a run started at t0, as seconds since the epoch
 * (-1, 1e300: none). */
static void window_abs(const struct select_opts *o, const struct when *ws, const struct when *wu, double t0,
                       double *since, double *until)
{
    *since = o->since ? ws->t + (ws->rel ? t0 : 0) : -1;
    *until = o->until ? wu->t + (wu->rel ? t0 : 0) : 1e300;
}

/* One process's ends: its snapshot at until into *to, at since into *from. */
static void process_ends(const struct profile *p, uint32_t i, const struct select_opts *o, const struct when *ws,
                         const struct when *wu, struct seen *w, uint32_t *from, uint32_t *to)
{
    const struct process *pr = &p->procs[i];
    double t0 = window_run_start(p, pr->run);
    double since, until;
    window_abs(o, ws, wu, t0, &since, &until);
    if (!w->nprocs) w->t0 = t0, w->since = since, w->until = until;
    *to = snapshot_at(p, pr, until);
    *from = o->since ? snapshot_at(p, pr, since) : NONE;
    if (since > until) *to = NONE;                  /* refused by the caller: nothing in it */
    for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++) {
        if (p->snapshots[j].peak) continue;
        if (p->snapshots[j].time < w->lo) w->lo = p->snapshots[j].time;
        if (p->snapshots[j].time > w->hi) w->hi = p->snapshots[j].time;
    }
    if (*to != NONE && *to != *from) {
        w->inside++;
        double f = *from == NONE ? -1 : p->snapshots[*from].time;
        if (w->inside == 1 || f < w->first) w->first = f;
        if (p->snapshots[*to].time > w->last) w->last = p->snapshots[*to].time;
    }
    w->nprocs++;
    w->from = *from, w->to = *to;
}

/* o's --since and --until parsed into *ws, *wu: 0, or EXIT_BAD_INPUT
 * with err set (not a time, with --snapshot, since after until). */
static int window_parse(const struct select_opts *o, struct when *ws, struct when *wu, char *err, size_t errlen)
{
    *ws = *wu = (struct when){ 0 };
    if ((o->since && when_parse(o->since, 1, ws)) || (o->until && when_parse(o->until, 1, wu)))
        return snprintf(err, errlen, "--since/--until: not a time (%s)", WHEN_EXPECTED), EXIT_BAD_INPUT;
    if (o->snap_kind != SNAP_LAST && o->snap_kind != SNAP_PEAK)
        return snprintf(err, errlen, "--since and --until do not combine with --snapshot but peak (the window's "
                                     "ends name its snapshots)"), EXIT_BAD_INPUT;
    if (o->since && o->until && ws->rel == wu->rel && ws->t > wu->t)
        return snprintf(err, errlen, "--since %s is after --until %s", o->since, o->until), EXIT_BAD_INPUT;
    return 0;
}

int window_ends(const struct profile *p, uint32_t run, const struct select_opts *o, double *since, double *until,
                char *err, size_t errlen)
{
    struct when ws, wu;
    int rc = window_parse(o, &ws, &wu, err, errlen);
    if (rc) return rc;
    double t0 = window_run_start(p, run);
    window_abs(o, &ws, &wu, t0, since, until);
    if (*since > *until)
        return snprintf(err, errlen, "--since %s is after --until %s", o->since, o->until), EXIT_BAD_INPUT;
    return 0;
}

/* --snapshot peak over a window: per process, its latest peak snapshot
 * captured in it. A process's peak only rises, so that is the highest
 * live bytes the window reached when the peak rose in it; a process whose
 * peak did not is left out (its highest then came before the window),
 * and a window where none did is refused. A state, not a difference: no
 * snapshot at since is subtracted. */
static int window_peak(const struct profile *p, const struct select_opts *o, const struct when *ws,
                       const struct when *wu, struct selection *s, char *err, size_t errlen)
{
    if (p->aggregate)
        return snprintf(err, errlen, "--snapshot peak with --since/--until reads files (a store's peak is each "
                                     "run's)"), EXIT_BAD_INPUT;
    struct seen w = { .lo = 1e300, .hi = -1 };
    uint32_t last = NONE;
    for (uint32_t i = 0; i < p->nprocs; i++) {
        if (s->proc_snapshot[i] == NONE) continue;
        const struct process *pr = &p->procs[i];
        double t0 = window_run_start(p, pr->run);
        double since, until;
        window_abs(o, ws, wu, t0, &since, &until);
        if (!w.nprocs++) w.t0 = t0, w.since = since, w.until = until;
        uint32_t found = NONE;
        for (uint32_t j = pr->first_snapshot; j < pr->first_snapshot + pr->nsnapshots; j++)
            if (p->snapshots[j].peak && p->snapshots[j].time >= since && p->snapshots[j].time <= until &&
                (found == NONE || p->snapshots[j].time >= p->snapshots[found].time))
                found = j;
        s->proc_snapshot[i] = found;
        if (found == NONE) s->nselected--;
        else last = found;
    }
    char name[160];
    window_name(&w, name, sizeof name);
    if (last == NONE)
        return snprintf(err, errlen, "%s: no peak in it (the selected process%s peak did not rise in it; see "
                        "mpquery info)", name, w.nprocs == 1 ? "'s" : "es'"), EXIT_BAD_INPUT;
    if (!o->window_quiet && s->nselected == 1)
        fprintf(stderr, "mpquery: %s: the peak reached in it, snapshot %lld (%+.3f s)\n", name,
                (long long)p->snapshots[last].seq, p->snapshots[last].time - w.t0);
    else if (!o->window_quiet)
        fprintf(stderr, "mpquery: %s: the peaks reached in it, %zu of %zu processes\n", name, s->nselected, w.nprocs);
    return 0;
}

int window_select(const struct profile *p, const struct select_opts *o, struct selection *s, char *err,
                  size_t errlen)
{
    struct when ws, wu;
    int rc = window_parse(o, &ws, &wu, err, errlen);
    if (rc) return rc;
    if (o->snap_kind == SNAP_PEAK) return window_peak(p, o, &ws, &wu, s, err, errlen);
    struct seen w = { .lo = 1e300, .hi = -1 };
    s->proc_since = xmalloc((p->nprocs ? p->nprocs : 1) * sizeof *s->proc_since);
    for (uint32_t i = 0; i < p->nprocs; i++) {
        s->proc_since[i] = NONE;
        if (s->proc_snapshot[i] == NONE) continue;
        uint32_t from, to;
        process_ends(p, i, o, &ws, &wu, &w, &from, &to);
        s->proc_since[i] = from;
        if (!p->aggregate) s->proc_snapshot[i] = to;   /* a store's sums: the window applied there */
        if (!p->aggregate && to == NONE) s->nselected--;
    }
    char name[160];
    window_name(&w, name, sizeof name);
    if (!w.inside) {
        if (w.hi < 0) return snprintf(err, errlen, "%s: the selected processes have no snapshot", name), EXIT_BAD_INPUT;
        snprintf(err, errlen, "%s: no snapshot in it (the selected process%s snapshots from %+.3f to %+.3f s; "
                 "see mpquery info)", name, w.nprocs == 1 ? "'s" : "es'", w.lo - w.t0, w.hi - w.t0);
        return EXIT_BAD_INPUT;
    }
    if (!o->window_quiet) note(p, &w);
    return 0;
}
