/* dlclose: before a library goes, the return addresses recorded so far are
 * named (those into it among them); after it went, its addresses are
 * retired (stacks_retire), so that whatever the loader maps there next is
 * a new frame, not the old one's. */
#define _GNU_SOURCE
#include "symbols.h"
#include "snapshot.h"
#include "hooks.h"

#include <link.h>
#include <stddef.h>
#include <stdlib.h>

/* The loaded objects' address ranges and the loader's unload count. */
struct objects { size_t n, cap; uintptr_t (*range)[2]; unsigned long long subs; };

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct objects *o = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) o->subs = info->dlpi_subs;
    uintptr_t lo, hi;
    object_range(info, &lo, &hi);
    if (lo >= hi) return 0;
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 64;
        void *p = realloc(o->range, cap * sizeof *o->range);
        if (!p) return 1;
        o->range = p;
        o->cap = cap;
    }
    o->range[o->n][0] = lo;
    o->range[o->n][1] = hi;
    o->n++;
    return 0;
}

static int still_loaded(const struct objects *o, const uintptr_t *r)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->range[i][0] == r[0] && o->range[i][1] == r[1]) return 1;
    return 0;
}

/* After an unload: name what is not named yet with the objects as they were,
 * then retire the addresses of every object gone, so that whatever the
 * loader maps there next is a new frame, not the old one's. */
static void retire_unloaded(const struct objects *before)
{
    struct objects after = { 0 };
    dl_iterate_phdr(add_object, &after);
    if (after.subs != before->subs) {
        flush_lock();
        symbols_resolve_pending_as_before();
        for (size_t i = 0; i < before->n; i++)
            if (!still_loaded(&after, before->range[i]))
                stacks_retire(before->range[i][0], before->range[i][1], symbols_retire);
        symbols_forget_retired();
        flush_forget_addresses();
        flush_unlock();
        unwind_forget_rules();
    }
    free(after.range);
}

/* Before a library goes, resolve the return addresses recorded so far (those
 * that point into it among them), so its frames keep their names; after it
 * went, retire its addresses. The guard is off while the real dlclose runs
 * the library's destructors: what they allocate is the program's. */
MP_EXPORT int dlclose(void *handle)
{
    HOOKS_READY();
    struct mp_guard g = guard_enter(MP_INSIDE);
    sigset_t mask;
    signals_hold(&mask);
    int counting = mp_own_counting;
    mp_own_counting = 1;        /* libdw's blocks and ours are the profiler's (the ledger) */
    struct objects before = { 0 };
    dl_iterate_phdr(add_object, &before);
    flush_lock();
    symbols_resolve_pending();
    flush_unlock();
    mp_own_counting = counting;
    signals_release(&mask);
    guard_leave(&g);
    int rc = mp_next.dlclose(handle);
    g = guard_enter(MP_INSIDE);
    signals_hold(&mask);
    mp_own_counting = 1;
    retire_unloaded(&before);
    free(before.range);
    mp_own_counting = counting;
    signals_release(&mask);
    guard_leave(&g);
    return rc;
}
