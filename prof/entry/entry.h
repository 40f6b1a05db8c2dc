/* entry/'s own interface: the profiler's start from its entry points
 * (start.c), and what entry hands down to the layers below before it
 * starts them (pymalloc's wrappers), so that none of them calls up. */
#ifndef MP_ENTRY_H
#define MP_ENTRY_H

#include "base.h"

/* 1 once the real functions are resolved and the profiler started: the
 * malloc family's one test before its work (interpose.c's ENSURE_REAL). */
extern long mp_entry_ready __attribute__((visibility("hidden")));

/* The malloc family's calls until ready: the real functions resolved,
 * then, outside the profiler, the profiler started. 0: they are being
 * resolved (dlsym's own allocations: the bootstrap buffer serves them). */
int entry_first_call(void);

/* The public API's calls: the profiler started if it is not. */
void entry_start_slow(void);
static inline void entry_start(void)
{
    if (unlikely(!atomic_load_explicit(&mp_initialized, memory_order_acquire))) entry_start_slow();
}

void pymalloc_entry_install(void);     /* pymalloc.c: its wrappers handed down (capture) */

#endif
