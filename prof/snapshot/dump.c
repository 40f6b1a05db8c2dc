/* mp_dump: the largest stacks, written by the program itself (the seed
 * MallocProfiler's dump()). Reads the counter slots like the flush does,
 * sums each stack over its threads, and names the frames with the flush's
 * symbolizer, under the flush's lock. */
#define _GNU_SOURCE     /* qsort_r */
#include "symbols.h"
#include "snapshot.h"
#include "mallocprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BY_NCALLS, BY_MEMTOT, BY_NFREE, BY_MEMLIVE, BY_MAXLIVE, BY_NLIVE, NBY };
static const char *const by_names[NBY] = { "ncalls", "memtot", "nfree", "memlive", "maxlive", "nlive" };

struct dumped { uint32_t stack; struct slot_counts c; };

static uint64_t value_of(const struct slot_counts *c, int by)
{
    const uint64_t v[NBY] = { c->ncalls, c->memtot, c->nfree, c->memlive, c->maxlive,
                              c->ncalls > c->nfree ? c->ncalls - c->nfree : 0 };
    return v[by];
}

static int by_stack(const void *a, const void *b)
{
    uint32_t x = ((const struct dumped *)a)->stack, y = ((const struct dumped *)b)->stack;
    return (x > y) - (x < y);
}
/* largest first by the counter *by points to, then by stack */
static int by_value(const void *a, const void *b, void *by)
{
    uint64_t x = value_of(&((const struct dumped *)a)->c, *(const int *)by);
    uint64_t y = value_of(&((const struct dumped *)b)->c, *(const int *)by);
    return x != y ? (x < y) - (x > y) : by_stack(a, b);
}

/* Every stack with its counters summed over threads; *n of them. */
static struct dumped *collect(size_t *n)
{
    uint32_t limit = slot_limit();
    struct dumped *d = malloc((limit ? limit : 1) * sizeof *d);
    if (!d) return NULL;
    size_t k = 0;
    for (uint32_t i = 1; i < limit; i++) {
        const struct mp_slot *s = slot_at(i);
        if (!s || !s->stack_id || !LOAD(s->thread_seq)) continue;
        d[k].stack = s->stack_id;
        slot_read(i, 0, &d[k].c);
        k++;
    }
    qsort(d, k, sizeof *d, by_stack);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m && d[m - 1].stack == d[i].stack) {
            struct slot_counts *a = &d[m - 1].c, *b = &d[i].c;
            a->ncalls += b->ncalls, a->memtot += b->memtot, a->nfree += b->nfree;
            a->memlive += b->memlive, a->maxlive += b->maxlive, a->ntemp += b->ntemp;
        } else {
            d[m++] = d[i];
        }
    }
    *n = m;
    return d;
}

/* One stack: its counters, then its frames leaf first. */
static int dump_stack(FILE *f, int rank, const struct dumped *d, int by)
{
    fprintf(f, "#%d %s %llu: ncalls %llu, memtot %llu, nfree %llu, memlive %llu, maxlive %llu\n", rank,
            by_names[by], (unsigned long long)value_of(&d->c, by), (unsigned long long)d->c.ncalls,
            (unsigned long long)d->c.memtot, (unsigned long long)d->c.nfree, (unsigned long long)d->c.memlive,
            (unsigned long long)d->c.maxlive);
    for (const struct mp_node *node = stack_node(d->stack); node; node = stack_node(node->parent)) {
        const struct sym_frame *fr;
        int nf = symbols_resolve(node->addr, &fr);
        for (int i = nf - 1; i >= 0; i--) {     /* inlined frames first: leaf first */
            const char *slash = fr[i].file ? strrchr(fr[i].file, '/') : NULL;
            if (fr[i].function) fprintf(f, "    %s", fr[i].function);
            else fprintf(f, "    %s+0x%llx", fr[i].module, (unsigned long long)fr[i].offset);
            if (fr[i].file) fprintf(f, " (%s:%d)", slash ? slash + 1 : fr[i].file, fr[i].line);
            fputc('\n', f);
        }
        if (!node->parent) break;
    }
    return ferror(f) ? -1 : 0;
}

/* mp_dump's work (entry/api.c): ensure_init is process/'s start, which
 * the entry point hands down, called once inside the guard. */
int dump_write(int fd, const char *by, int n, void (*ensure_init)(void))
{
    int which = by ? -1 : BY_MEMTOT;
    for (int i = 0; by && i < NBY; i++)
        if (!strcmp(by, by_names[i])) which = i;
    if (which < 0 || n < 0) return -1;
    struct mp_guard g = guard_enter(MP_INSIDE);
    ensure_init();
    sigset_t mask;
    signals_hold(&mask);
    flush_lock();
    int written = -1;
    size_t count = 0;
    struct dumped *d = collect(&count);
    int dup_fd = d ? dup(fd) : -1;
    FILE *f = dup_fd >= 0 ? fdopen(dup_fd, "w") : NULL;
    if (f) {
        qsort_r(d, count, sizeof *d, by_value, &which);
        written = 0;
        for (size_t i = 0; i < count && written < n && value_of(&d[i].c, which); i++, written++)
            if (dump_stack(f, written + 1, &d[i], which)) break;
        if (fclose(f) != 0) written = -1;
    } else if (dup_fd >= 0) {
        close(dup_fd);
    }
    if (written < 0) g.err = -1;    /* the failure's errno (dup, fdopen, fclose), not the caller's */
    free(d);
    flush_unlock();
    signals_release(&mask);
    guard_leave(&g);
    return written;
}
