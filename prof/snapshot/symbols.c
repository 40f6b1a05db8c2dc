/* Return address → module, build-id, offset, and the inline chain of
 * (function, file, line), outermost first, with elfutils' libdwfl.
 *
 * Each distinct address is resolved once per process and cached for the
 * life of the process (flushes and dlclose reuse it). Names come from the
 * symbol tables (.symtab, so static functions too; .dynsym; separate debug
 * info found by build-id or debuglink) and from DWARF for inlined frames;
 * line info is looked up at address - 1, the call instruction. Runs only
 * in a flush or in dlclose, with the profiler marked internal: its memory
 * comes from the profiler's heap (ownheap.c) and is never freed. */
#define _GNU_SOURCE
#include "symbols.h"
#include "maps.h"
#include "python.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <link.h>
#include <stddef.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct resolved {
    uintptr_t addr;
    uintptr_t retired_as;       /* its pseudo address once its object is unloaded */
    int nframes;
    struct sym_frame frames[];
};

static struct resolved **cache;     /* open addressing by address */
static size_t cache_mask, cache_count;
static uint32_t nodes_done;          /* stack nodes 1..nodes_done are resolved */

/* ------------------------------------------------------------ cache */

static size_t addr_slot(uintptr_t addr)
{
    return fib_hash(addr, 44) & cache_mask;
}

static struct resolved *cache_get(uintptr_t addr)
{
    if (!cache) return NULL;
    for (size_t i = addr_slot(addr); cache[i]; i = (i + 1) & cache_mask)
        if (cache[i]->addr == addr) return cache[i];
    return NULL;
}

static void cache_put(struct resolved *r)
{
    if ((cache_count + 1) * 2 > cache_mask + 1) {
        size_t old_cap = cache ? cache_mask + 1 : 0, cap = old_cap ? old_cap * 2 : 4096;
        struct resolved **old = cache, **t = calloc(cap, sizeof *t);
        if (!t) return;
        cache = t;
        cache_mask = cap - 1;
        for (size_t i = 0; i < old_cap; i++) {
            if (!old[i]) continue;
            size_t j = addr_slot(old[i]->addr);
            while (cache[j]) j = (j + 1) & cache_mask;
            cache[j] = old[i];
        }
        free(old);
    }
    size_t i = addr_slot(r->addr);
    while (cache[i]) i = (i + 1) & cache_mask;
    cache[i] = r;
    cache_count++;
}

/* ------------------------------------------------------------ resolution */


static struct resolved *make(uintptr_t addr, int n)
{
    struct resolved *r = calloc(1, sizeof *r + (size_t)n * sizeof r->frames[0]);
    if (r) {
        r->addr = addr;
        r->nframes = n;
    }
    return r;
}

static struct resolved *resolve_special(uintptr_t addr)
{
    struct resolved *r = make(addr, 1);
    if (!r) return NULL;
    const char *tag = tag_name(addr), *mapping = maps_name(addr), *function, *file;
    int line;
    r->frames[0].build_id = "";
    if (python_frame(addr, &function, &file, &line)) {
        /* the module is the .py file; the offset tells the frames of a file
         * apart (a frame is its module and offset): the function's name
         * hashed above the line's 20 bits */
        r->frames[0].module = r->frames[0].file = file;
        r->frames[0].function = function;
        r->frames[0].line = line;
        r->frames[0].offset = (fnv1a(function, FNV_STRING) & 0xfffffffull) << 20 | (uint64_t)(line > 0 ? line & 0xfffff : 0);
    } else if (addr == ADDR_TRUNCATED) {
        r->frames[0].module = r->frames[0].function = "[truncated]";
    } else if (mapping) {       /* a mapping's kind, named like a tag */
        r->frames[0].module = "[mmap]";
        r->frames[0].offset = (uint64_t)tag_offset(mapping);
        r->frames[0].function = resolve_intern(mapping);
    } else if (tag) {
        r->frames[0].module = "[tag]";
        r->frames[0].offset = (uint64_t)tag_offset(tag);
        r->frames[0].function = resolve_intern(tag);
    } else {
        r->frames[0].module = "[unknown]";
        r->frames[0].offset = addr == ADDR_UNKNOWN ? 0 : addr;
    }
    return r;
}

static struct resolved *resolve_one(Dwfl *dwfl, uintptr_t addr)
{
    if (addr >= RETIRED_BASE || !dwfl) return resolve_special(addr);
    Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr - 1);    /* the call, not what follows */
    if (!mod) return resolve_special(addr);
    const char *path, *build_id;
    GElf_Addr bias;
    resolve_module(mod, &path, &build_id, &bias);
    struct sym_frame chain[RES_MAX_INLINE];
    int n = resolve_chain(mod, addr, chain);
    struct resolved *r = make(addr, n);
    if (!r) return NULL;
    for (int i = 0; i < n; i++) {
        r->frames[i] = chain[i];
        r->frames[i].module = path;
        r->frames[i].build_id = build_id;
        r->frames[i].offset = addr - bias;
    }
    return r;
}

/* The session of symbol resolution (the cfi unwinder has its own). */
static Dwfl *dwfl;
static unsigned long long seen_loader[2];

/* The files' pages a resolution touched are given back every TRIM_EVERY
 * addresses, not only at the end (symbols_trim): clang's 3,000 addresses
 * of its exit snapshot touched 4.4 MB of libc's debug info and 3 MB of
 * libLLVM's symbols, all resident at once at the process's peak. */
#define TRIM_EVERY 256

static size_t resolve_pending(int refresh)
{
    size_t resolved = 0;
    uint32_t n = stack_node_count();
    Dwfl *d = refresh ? NULL : dwfl;
    int opened = !refresh;
    for (uint32_t id = nodes_done + 1; id <= n; id++) {
        const struct mp_node *nd = stack_node(id);
        if (!nd) break;
        nodes_done = id;
        if (cache_get(nd->addr)) continue;
        if (!opened) {
            d = mp_dwfl_session(&dwfl, seen_loader);
            opened = 1;
        }
        struct resolved *r = resolve_one(d, nd->addr);
        if (r) cache_put(r);
        if (++resolved % TRIM_EVERY == 0) mp_dwfl_release_pages(d);
    }
    return resolved;
}

size_t symbols_resolve_pending(void) { return resolve_pending(1); }

/* After a flush's resolution: the files' pages it read given back. */
void symbols_trim(void) { mp_dwfl_release_pages(dwfl); }

/* The end of an attach session (attach.c, the flush's lock held): the
 * session ended (libdw's files unmapped, its memory freed), every address
 * forgotten; the next session resolves its stacks again. */
void symbols_release(void)
{
    if (dwfl) dwfl_end(dwfl);
    symbols_drop_session();
    for (size_t i = 0; cache && i <= cache_mask; i++) free(cache[i]);
    free(cache);
    cache = NULL, cache_mask = cache_count = 0;
    nodes_done = 0;
    resolve_release();
}
void symbols_drop_session(void) { dwfl = NULL, seen_loader[0] = seen_loader[1] = 0; }
size_t symbols_resolve_pending_as_before(void) { return resolve_pending(0); }

static uintptr_t retired_next = RETIRED_BASE;

uintptr_t symbols_retire(uintptr_t addr)
{
    struct resolved *r = cache_get(addr);
    if (!r) return ADDR_UNKNOWN;
    if (!r->retired_as) {
        struct resolved *copy = make(retired_next, r->nframes);
        if (!copy) return ADDR_UNKNOWN;
        memcpy(copy->frames, r->frames, (size_t)r->nframes * sizeof r->frames[0]);
        r->retired_as = retired_next++;
        cache_put(copy);
        r = cache_get(addr);            /* cache_put may have moved the table */
    }
    return r->retired_as;
}

/* Drops the entries of retired addresses (the table is rebuilt without them). */
void symbols_forget_retired(void)
{
    if (!cache) return;
    size_t cap = cache_mask + 1;
    struct resolved **old = cache;
    if (!(cache = calloc(cap, sizeof *cache))) {
        cache = old;
        return;
    }
    cache_count = 0;
    for (size_t i = 0; i < cap; i++) {
        if (!old[i]) continue;
        if (old[i]->retired_as) {
            free(old[i]);
            continue;
        }
        size_t j = addr_slot(old[i]->addr);
        while (cache[j]) j = (j + 1) & cache_mask;
        cache[j] = old[i];
        cache_count++;
    }
    free(old);
}

/* An address not resolved yet (a node made by another thread after the
 * flush resolved the pending ones) is resolved now, not taken for unknown. */
int symbols_resolve(uintptr_t addr, const struct sym_frame **frames)
{
    struct resolved *r = cache_get(addr);
    if (!r) {
        r = resolve_one(addr < RETIRED_BASE ? mp_dwfl_session(&dwfl, seen_loader) : NULL, addr);
        if (!r) {
            static const struct sym_frame unknown = { "[unknown]", "", 0, NULL, NULL, 0 };
            *frames = &unknown;
            return 1;
        }
        cache_put(r);
    }
    *frames = r->frames;
    return r->nframes;
}
