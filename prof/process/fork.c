/* fork: the handlers take every profiler lock before, so that the child
 * starts consistent, and release them after; the child is a new process:
 * empty counters, no peak, the parent's blocks forgotten (their frees count
 * as "unknown"), only the forking thread; stacks stay interned. */
#include "symbols.h"
#include "process.h"
#include "maps.h"
#include "cold.h"
#include "flush.h"
#include "python.h"

#include <pthread.h>
#include <signal.h>

/* The parent resolves the return addresses it has so far before forking, so
 * that children (often many, as in a build) inherit them instead of each
 * reading the same debug info again. */
static sigset_t fork_mask;
static MP_TLS struct mp_guard fork_guard;   /* the forking thread's, from prepare to parent or child */
/* Between attach sessions a fork is the program's alone: its child gets no
 * profiler's thread, writes no profile, and the parent resolves nothing
 * (what the detach gave back stays given back). */
static MP_TLS int fork_idle;

/* Everything a fork must find still: the thread's guard and signals held,
 * the recorder's locks taken. */
static void lock_all(void)
{
    fork_guard = guard_enter(MP_INSIDE);
    fork_guard.err = -1;        /* errno is fork's own (its failure's, in the parent) */
    signals_hold(&fork_mask);
    flush_lock();
    ticks_lock();
    maps_lock();
    if (!attach_idle()) symbols_resolve_pending();  /* a detach may have ended meanwhile (attach.c) */
    unwind_lock();
    python_lock();
    stacks_lock_all();
    ptrmap_lock_all();
    ownheap_lock_all();
}

static void fork_prepare(void)
{
    if (!(fork_idle = attach_idle())) lock_all();
}

static void fork_parent(void)
{
    if (fork_idle) return;
    ownheap_unlock_all();
    ptrmap_unlock_all();
    stacks_unlock_all();
    python_unlock();
    unwind_unlock();
    maps_unlock();
    ticks_unlock();
    flush_unlock();
    signals_release(&fork_mask);
    guard_leave(&fork_guard);
}

/* The counters of every file that keeps some, as a new process's. */
static void counters_after_fork_child(int others_gone)
{
    slots_after_fork_child();
    threads_after_fork_child(others_gone);
    peak_after_fork_child();
    ptrmap_reset(others_gone);
    cold_after_fork_child();
    stack_hist_after_fork_child();
    ticks_after_fork_child();       /* after mp_start_time: its points from its start */
    maps_after_fork_child();        /* the parent's mappings forgotten, like its blocks */
}

static void fork_child(void)
{
    if (fork_idle) return;
    ownheap_unlock_all();
    mp_arena_after_fork_child();
    mp_kept_open_all();     /* a /proc/self file reads the process that opened it */
    mp_start_time = mp_now();
    ledger_after_fork_child();      /* before the counters and mappings are the child's */
    stacks_unlock_all();
    python_unlock();
    unwind_unlock();
    counters_after_fork_child(1);   /* resets the pointer map and its locks */
    flush_after_fork_child();
    flush_unlock();
    attach_after_fork_child();      /* before its thread: a child of a session watches it */
    background_after_fork_child();
    signals_release(&fork_mask);
    guard_leave(&fork_guard);
}

/* A new attach session (attach.c): the counters of a new process, every
 * block before it forgotten (their frees count as unknown), every thread
 * going on; the same locks taken as for a fork. */
/* A session's start (attach.c), before the session counts as attached:
 * attach_idle() still says so, but this must lock what it unlocks (and hold
 * the signals it releases) all the same. */
void fork_new_session(void)
{
    fork_idle = 0;
    lock_all();
    mp_start_time = mp_now();
    ownheap_unlock_all();
    stacks_unlock_all();
    python_unlock();
    unwind_unlock();
    counters_after_fork_child(0);
    flush_after_attach();
    flush_unlock();
    signals_release(&fork_mask);
    guard_leave(&fork_guard);
}

/* A process made without fork (clone.c): the same handlers. */
void fork_before(void) { fork_prepare(); }
void fork_after(int child) { child ? fork_child() : fork_parent(); }

void fork_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}
