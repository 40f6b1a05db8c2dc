/* The profiler's start, from its entry points (issue 42): entry hands
 * down what the layers below call back (pymalloc's wrappers), then starts
 * process/'s init (mp_ensure_init). Every start comes through here: the
 * malloc family's first call (interpose.c), the public API (api.c) and the
 * library's constructor, so no layer below calls up to start the
 * profiler, and a thread's first record finds it started (threads.c).
 * attach.c's first session starts it too, after this constructor's
 * hand-down. */
#include "hooks.h"
#include "process.h"
#include "entry.h"

long mp_entry_ready;      /* long: GCC compares a long in memory with one instruction, an int in two */

/* What the layers below call back, handed down before anything starts
 * them. Any number of times. */
static void hand_down(void)
{
    pymalloc_entry_install();
}

void entry_start_slow(void)
{
    hand_down();
    mp_ensure_init();
}

/* The profiler's own allocations (and a signal handler's inside it) pass
 * through unstarted; the first of the program's starts it, as a thread's
 * first record did before (issue 42). Until ready, each call comes here:
 * a few tests, before the profiler is started only. */
int entry_first_call(void)
{
    if (!mp_next.sigaction) {
        if (mp_hooks_resolving) return 0;
        hooks_resolve();
    }
    if (mp_tls.in_profiler == MP_OUTSIDE) entry_start();
    if (mp_next.sigaction && atomic_load_explicit(&mp_initialized, memory_order_acquire))
        __atomic_store_n(&mp_entry_ready, 1, __ATOMIC_RELEASE);
    return 1;
}

/* Loaded into a running process (attach.c), the library stays dormant
 * until mpquery asks it to start (its hand-down done, for that start). */
__attribute__((constructor)) static void entry_constructor(void)
{
    hand_down();
    if (!atomic_load(&mp_initialized) && attach_dormant()) return;
    mp_ensure_init();
}
