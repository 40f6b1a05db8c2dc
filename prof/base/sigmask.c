/* Signals held around the profiler's own work, and the jump back from a
 * stretch of it that is given up (base.h RECOVERABLE). process/signals.c
 * owns the handlers; this is what every layer below it uses.
 *
 * While the profiler itself calls the real malloc (an unwind rule, symbols,
 * the flush, init), the thread's signals wait: a program's handler that
 * allocates would otherwise re-enter glibc's malloc in the middle of the
 * profiler's own call (glibc's malloc is not async-signal-safe). Faults and
 * SIGABRT stay deliverable, and so do SIGALRM and the signal being handled
 * while a fatal signal's last snapshot is written (its time bound, and a
 * second Ctrl-C: mp_signal_dying, set by signals.c). */
#define _GNU_SOURCE
#include "base.h"

#include <pthread.h>

MP_TLS sigjmp_buf *mp_recover;
void (*mp_run_pending)(void);
volatile sig_atomic_t mp_signal_dying;

/* The profiler's own work on a program's thread (reading files, SQLite,
 * libdw) passes cancellation points (open, read, write, fcntl), though the
 * malloc or exit that started it is not one: a pending deferred cancel
 * would end the thread in the middle, holding the loader's lock or ours.
 * Cancellation is off from the outermost hold to its release. */
static MP_TLS int hold_depth, hold_cancel_state;

void signals_hold(sigset_t *old)
{
    if (hold_depth++ == 0) pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &hold_cancel_state);
    sigset_t set;
    sigfillset(&set);
    int keep[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) sigdelset(&set, keep[i]);
    if (mp_signal_dying) sigdelset(&set, SIGALRM), sigdelset(&set, mp_signal_dying);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

void signals_release(const sigset_t *old)
{
    pthread_sigmask(SIG_SETMASK, old, NULL);
    if (--hold_depth == 0) pthread_setcancelstate(hold_cancel_state, NULL);
}
