/* floor: the cheapest useful malloc interposer, the reference line of `make
 * bench` for the cheap modes. Per-thread counters of calls and bytes; a free
 * takes the block's size from the next allocator (malloc_usable_size). No
 * stacks, no pointer map, no output: what any counting interposer costs.
 * Built as build/bench/libfloor.so; LD_PRELOAD it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

static __thread struct { uint64_t ncalls, bytes, nfree, freed; } counts
    __attribute__((tls_model("initial-exec")));
static void *(*next_malloc)(size_t), *(*next_calloc)(size_t, size_t), *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static size_t (*next_usable)(void *);
static char boot[4096];
static size_t boot_used;

static void resolve(void)
{
    static int busy;
    if (busy) return;
    busy = 1;
    next_malloc = dlsym(RTLD_NEXT, "malloc");
    next_calloc = dlsym(RTLD_NEXT, "calloc");
    next_realloc = dlsym(RTLD_NEXT, "realloc");
    next_usable = dlsym(RTLD_NEXT, "malloc_usable_size");
    next_free = dlsym(RTLD_NEXT, "free");
}

static void *counted(void *p, size_t size)
{
    if (p) counts.ncalls++, counts.bytes += size;
    return p;
}

void *malloc(size_t size)
{
    if (!next_free) resolve();
    return counted(next_malloc(size), size);
}

void *calloc(size_t n, size_t size)
{
    if (!next_free) {   /* dlsym's own calloc, before anything is resolved */
        resolve();
        if (!next_free) { void *p = boot + boot_used; boot_used += (n * size + 15) & ~(size_t)15; return p; }
    }
    return counted(next_calloc(n, size), n * size);
}

void free(void *p)
{
    if (!p || ((char *)p >= boot && (char *)p < boot + sizeof boot)) return;
    counts.nfree++, counts.freed += next_usable(p);
    next_free(p);
}

void *realloc(void *p, size_t size)
{
    if (!next_free) resolve();
    if (p) counts.nfree++, counts.freed += next_usable(p);
    return counted(next_realloc(p, size), size);
}
