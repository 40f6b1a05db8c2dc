/* The measures mpquery check compares, per display node and function,
 * and the noise of each (cmd_check.c compares them).
 *
 * Sampled profiles (MP_SAMPLE=T) hold estimates: a block of s bytes is
 * sampled with p = 1 - exp(-s/T) and counts 1/p blocks, s/p bytes (the
 * Horvitz-Thompson estimator; blocks are sampled independently, as the
 * sample points are a Poisson process over the bytes allocated). Its
 * variance, summed over the blocks of a stack:
 *   bytes:  Var = sum s^2 (1-p)/p  <=  T * S   since (1-p)/p = 1/(e^(s/T) - 1) <= T/s,
 *           S the stack's true bytes (memtot; live bytes for peak and leaks),
 *           estimated by the recorded S: a bound for any mix of sizes;
 *   calls:  Var = sum (1-p)/p  <=  T * sum 1/s, taken as T N/m with m = S/N
 *           the stack's mean block size (exact for a stack of one size
 *           well below T; see calls_variance).
 * A growth fails when after - before exceeds both --max-growth percent of
 * before and --sigmas (default 5) standard deviations of the difference
 * of two independent estimates, sqrt(Var_before + Var_after). With both
 * variances estimated from the recorded values, k sampled blocks against
 * none give z = sqrt(k): a stack the baseline missed by chance passes.
 * Full capture counts exactly, but a real program does not repeat itself
 * exactly (ASLR moves the pointers its hash tables hash, hash seeds,
 * threads' timing): two runs of clang differ in ~700 of 69,000 stacks by
 * up to 14 calls and one 128 KiB table. So in every mode a growth must
 * also pass a floor, --min-share percent (default 0.5) of the baseline's
 * total of the measure (all calls; all bytes; for peak and leaked, the
 * process peak, the bytes these are a part of), and at least --min-bytes
 * (default 4K) or --min-calls (default 10). And the peak snapshot is
 * taken within max(1/128, 4 KiB) of the process peak (plus 64 KiB a
 * thread with several, prof/README.md): a stack's bytes at the peak may
 * differ by what was allocated in that window, on either side, so the
 * windows of both sides are added to the peak's floor. */
#include "check.h"
#include "mpquery.h"
#include "profile.h"

#include <math.h>
#include <stdlib.h>

const char *const measure_name[NM] = { "calls", "bytes", "peak", "leaked" };

/* The variance of a sampled stack's calls estimate n of mean size m:
 * n (1-p)/p <= n T/m, taken as the bound, as T S is for bytes. (1-p)/p
 * = 1/(e^(m/T) - 1) vanishes for a large m, where one big block beside
 * many small ones (a list grown by realloc) makes the mean say nothing
 * of the small ones' noise; T/m falls only as fast as the mean grows. */
static double calls_variance(double t, double n, double bytes)
{
    if (t <= 0 || n <= 0 || bytes <= 0) return 0;
    return n * t / (bytes / n);
}

/* Adds a stack's value and variance of measure m into node's. */
static void add(struct measures *ms, int k, int m, uint32_t node, double v, double var)
{
    ms->v[k][m][node] += v;
    ms->var[k][m][node] += var;
}

/* Side k's measures per node; the nodes the filters leave out get none,
 * and leaked none for those the built-in suppressions mark. */
void side_measures(const struct dtree *t, struct side *s, int k, struct measures *ms)
{
    const uint8_t *left = t->left_out;
    double T = s->sample, a = s->scale;
    for (uint32_t r = 0; r < s->p->nrecorded; r++) {
        uint32_t n = s->node[s->p->recorded[r]];
        const counters *c = &s->last.stack_c[r];
        double calls = (double)c->v[NCALLS], bytes = (double)c->v[MEMTOT], live = (double)c->v[MEMLIVE];
        s->total[M_CALLS] += a * calls, s->total[M_BYTES] += a * bytes;
        if (!s->has_peak) s->total[M_PEAK] += a * (double)c->v[MAXLIVE];
        if (n == NONE || (left && left[n] == LEFT_FILTERS)) continue;
        add(ms, k, M_CALLS, n, a * calls, a * a * calls_variance(T, calls, bytes));
        add(ms, k, M_BYTES, n, a * bytes, a * a * T * bytes);
        if (!left || left[n] != LEFT_BUILTIN) add(ms, k, M_LEAKED, n, a * live, a * a * T * live);
        if (!s->has_peak) add(ms, k, M_PEAK, n, a * (double)c->v[MAXLIVE], a * a * T * (double)c->v[MAXLIVE]);
    }
    for (uint32_t r = 0; s->has_peak && r < s->pp->nrecorded; r++) {
        uint32_t n = s->node_peak[s->pp->recorded[r]];
        double live = (double)s->peak.stack_c[r].v[MEMLIVE];
        s->total[M_PEAK] += a * live;
        if (n == NONE || (left && left[n] == LEFT_FILTERS)) continue;
        add(ms, k, M_PEAK, n, a * live, a * a * T * live);
    }
}

/* The side's totals once measured: leaked is a part of the peak's bytes;
 * the window below the peak its snapshot may be taken in (per process
 * max(1/128 of the peak, 4 KiB), and 64 KiB per thread past the first). */
void side_totals(struct side *s)
{
    s->total[M_LEAKED] = s->total[M_PEAK];
    const struct selection *sel = s->has_peak ? &s->peak : &s->last;
    const struct profile *p = s->has_peak ? s->pp : s->p;
    double threads = 0, procs = (double)sel->nselected;
    for (size_t i = 0; i < p->nthreads; i++) threads += sel->thread_ok && sel->thread_ok[i];
    double w = s->total[M_PEAK] / 128;
    if (w < 4096 * procs * s->scale) w = 4096 * procs * s->scale;
    if (threads > procs) w += 65536 * (threads - procs) * s->scale;
    s->window = w;
}

/* Per function (label): the self values, the sums of the nodes it is the
 * leaf of (and of their variances: stacks are estimated independently). */
void function_measures(const struct dtree *t, const struct measures *node, struct measures *fn)
{
    size_t nl = t->labels.n;
    for (int k = 0; k < 2; k++)
        for (int m = 0; m < NM; m++) {
            fn->v[k][m] = xcalloc(nl + 1, sizeof (double));
            fn->var[k][m] = xcalloc(nl + 1, sizeof (double));
            for (size_t n = 1; n < t->n; n++) {
                fn->v[k][m][t->label[n]] += node->v[k][m][n];
                fn->var[k][m][t->label[n]] += node->var[k][m][n];
            }
        }
}

void stacks_in_common(const struct dtree *t, const struct side *s, size_t n[3])
{
    uint8_t *seen = xcalloc(t->n + 1, 1);
    n[0] = n[1] = n[2] = 0;
    for (int k = 0; k < 2; k++)
        for (uint32_t r = 0; r < s[k].p->nrecorded; r++) {
            uint32_t node = s[k].node[s[k].p->recorded[r]];
            const counters *c = &s[k].last.stack_c[r];
            if (node == NONE || (!c->v[NCALLS] && !c->v[MEMLIVE])) continue;
            seen[node] |= (uint8_t)(1 << k);
        }
    for (size_t i = 1; i < t->n; i++) {
        if (seen[i] & 1) n[0]++;
        if (seen[i] & 2) n[1]++;
        if (seen[i] == 3) n[2]++;
    }
    free(seen);
}

void measures_alloc(struct measures *ms, size_t n)
{
    for (int k = 0; k < 2; k++)
        for (int m = 0; m < NM; m++) {
            ms->v[k][m] = xcalloc(n + 1, sizeof (double));
            ms->var[k][m] = xcalloc(n + 1, sizeof (double));
        }
}

void measures_free(struct measures *ms)
{
    for (int k = 0; k < 2; k++)
        for (int m = 0; m < NM; m++) free(ms->v[k][m]), free(ms->var[k][m]);
}
