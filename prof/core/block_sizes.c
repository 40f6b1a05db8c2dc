/* The allocator's size of a block (malloc_usable_size): glibc's read from
 * the chunk header inline (hot.h block_usable) once the program's first
 * blocks agreed with the call, the call otherwise. The probation and its
 * end are here; the inline read is hot.h's. */
#define _GNU_SOURCE
#include "hot.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>

/* > 0: the next malloc is glibc's and its chunk headers read as
 * malloc_usable_size does (hot.h block_usable); 0: its call; < 0: glibc's,
 * on probation: the call, compared with the header's, for that many more
 * of the program's blocks (any difference: the call for good). Checked on
 * the program's own blocks, so that the heap is the one it would have had
 * (a block of our own freed at init would change where its blocks fall,
 * and the sizes realloc finds room for). */
int mp_glibc_sizes;
#define SIZES_PROBATION 1024

size_t block_usable_call(void *p)
{
    size_t usable = mp_next.malloc_usable_size(p);
    int left = __atomic_load_n(&mp_glibc_sizes, __ATOMIC_RELAXED);
    if (left < 0) {
        size_t h = ((const size_t *)p)[-1];
        int agree = chunk_usable(h) == usable;
        /* threads may race here: a lost count only lengthens the probation */
        __atomic_store_n(&mp_glibc_sizes, !agree ? 0 : left == -1 ? 1 : left + 1, __ATOMIC_RELAXED);
        if (!agree || left == -1) hot_path_update();   /* the probation's end */
    }
    return usable;
}

/* Called once at init, inside the profiler: glibc's malloc (the same
 * module as gnu_get_libc_version's, for malloc, free, realloc, memalign
 * and malloc_usable_size) goes on probation. */
void block_sizes_init(void)
{
    Dl_info libc, a;
    HOOKS_READY();
    void *fns[] = { (void *)mp_next.malloc, (void *)mp_next.free, (void *)mp_next.realloc, (void *)mp_next.memalign,
                    (void *)mp_next.malloc_usable_size };
    if (sizeof(size_t) != 8 || !dladdr((void *)gnu_get_libc_version, &libc)) return;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!fns[i] || !dladdr(fns[i], &a) || a.dli_fbase != libc.dli_fbase) return;
    __atomic_store_n(&mp_glibc_sizes, -SIZES_PROBATION, __ATOMIC_RELAXED);
    hot_path_update();
}
