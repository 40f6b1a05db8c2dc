/* Signals: the program's handlers, and fatal signals.
 *
 * The program's handlers are installed behind a trampoline of ours: when a
 * handler interrupts the allocator or the profiler, the thread is marked
 * MP_IN_HANDLER while it runs, so that what it allocates and frees is logged
 * and recorded on the thread's way out (handler_log.c), not lost. sigaction
 * reports the program's own actions, never ours.
 *
 * Fatal signals: a process killed by SIGSEGV, SIGABRT, SIGBUS, SIGFPE,
 * SIGILL, SIGTERM, SIGINT or SIGHUP writes a last snapshot (reason
 * "signal", label the signal's name) and then dies the same way: same
 * signal, same exit status, same core dump.
 *
 * Only where the program left the default action: the recorder installs its
 * handler in place of SIG_DFL, and sigaction/signal are interposed so that
 * the program sees SIG_DFL there and its own handlers, installed at any
 * time, replace the recorder's and run as before.
 *
 * A signal that arrives while the thread is inside the allocator or the
 * profiler (mp_tls.in_profiler) cannot flush there (malloc's arena lock may be
 * held): an asynchronous one is kept pending until guard_leave; a fault
 * there (a corrupt heap, a bug of ours) dies at once, without a snapshot.
 * The flush itself is bounded by MP_FATAL_TIMEOUT (an alarm whose handler
 * kills the process with the original signal), and the original signal is
 * unblocked while it runs, so a second Ctrl-C ends it. */
#define _GNU_SOURCE
#include "record.h"
#include "snapshot.h"
#include "process.h"
#include "hooks.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct { int sig; const char *name; } fatal_signals[] = {
    { SIGSEGV, "SIGSEGV" }, { SIGABRT, "SIGABRT" }, { SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" },
    { SIGILL, "SIGILL" }, { SIGTERM, "SIGTERM" }, { SIGINT, "SIGINT" }, { SIGHUP, "SIGHUP" },
};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])

/* Per signal: what stands in the kernel's table for the program's action
 * (nothing, the fatal handler for its SIG_DFL, the trampoline for its
 * handler), the action the program gave (what it reads back), and the
 * handler the trampoline calls. */
enum { STANDS_NONE, STANDS_FATAL, STANDS_WRAPPED };
static struct {
    _Atomic int stands;
    struct sigaction program;
    void *_Atomic call;
    _Atomic int call_flags;
} state[NSIG];

static MP_TLS int fatal_pending;
#define dying mp_signal_dying     /* the signal being handled, for the alarm (sigmask.c keeps it deliverable) */

static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    HOOKS_READY();
    return mp_next.sigaction(sig, act, old);
}

/* The name of a fatal signal the recorder may stand in for; NULL otherwise
 * (MP_SIGNAL, the snapshot signal, is the recorder's own). */
static const char *fatal_name(int sig)
{
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal_signals[i].sig == sig && sig != mp_opt.signal) return fatal_signals[i].name;
    return NULL;
}

static void set_default(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    real_sigaction(sig, &dfl, NULL);
    atomic_store(&state[sig].stands, STANDS_NONE);
}

static void unblock(int sig)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/* Dies by `sig` as if the recorder were not there. */
static void die(int sig)
{
    set_default(sig);
    unblock(sig);
    raise(sig);
}

/* The flush took longer than MP_FATAL_TIMEOUT: die now. */
static void on_alarm(int sig)
{
    (void)sig;
    die(dying);
}

static void last_snapshot(int sig)
{
    dying = sig;
    snprintf(mp_ended, sizeof mp_ended, "signal %s", fatal_name(sig));
    if (!mp_opt.final) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    real_sigaction(SIGALRM, &sa, NULL);
    unblock(SIGALRM);
    alarm((unsigned)mp_opt.fatal_timeout);
    flush_snapshot(FLUSH_FATAL, fatal_name(sig));
    alarm(0);
}

/* A fault returns to the instruction that faulted, which faults again with
 * the default action: the kernel's own death, core dump and all. */
static int is_fault(int sig, const siginfo_t *si)
{
    return si && si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
}

/* A fault in a recoverable stretch of the profiler's (base.h), or an
 * abort() the thread raised there (libdw asserts that a calloc it made
 * succeeded: a program under RLIMIT_AS was killed by it; glibc's abort
 * holds no lock while the handler runs); not one of a program's handler
 * that interrupted it (MP_IN_HANDLER): that is the program's. */
static void recover_fault(int sig, const siginfo_t *si)
{
    int aborted = sig == SIGABRT && si && si->si_code == SI_TKILL && si->si_pid == getpid();
    if (mp_recover && mp_tls.in_profiler == MP_INSIDE && (is_fault(sig, si) || aborted)) siglongjmp(*mp_recover, 2);
}

/* libdw's out-of-memory path, and any other library's, calls error() to
 * end the process: inside a recoverable stretch the profiler gives that
 * stretch up instead; otherwise the message goes, formatted, to the real
 * error(), which does the rest (the program's name, the count, exit). */
MP_EXPORT void error(int status, int errnum, const char *fmt, ...)
{
    if (mp_recover && mp_tls.in_profiler == MP_INSIDE) siglongjmp(*mp_recover, 1);
    HOOKS_READY();
    char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    mp_next.error(status, errnum, "%s", n >= 0 && msg ? msg : fmt);
    free(msg);
}

static void on_fatal(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    recover_fault(sig, si);
    int saved_errno = errno;
    set_default(sig);
    unblock(sig);
    if (mp_tls.in_profiler) {
        if (is_fault(sig, si) || sig == SIGABRT)
            mp_log("error", "%s inside the allocator or the profiler; no snapshot written", fatal_name(sig));
        else
            fatal_pending = sig, mp_tls.pending |= PENDING_FATAL;   /* guard_leave takes it from here */
        errno = saved_errno;
        return;
    }
    last_snapshot(sig);
    if (!is_fault(sig, si)) raise(sig);
    errno = saved_errno;
}

/* The thread's way out of the allocator or the profiler, with work left by
 * a signal: the handlers' log recorded (signals blocked), then a fatal
 * signal's last snapshot and death. */
static void run_pending(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    struct mp_guard g = guard_enter(MP_INSIDE);
    int pending = mp_tls.pending;
    mp_tls.pending = 0;
    if (pending & PENDING_HANDLER) handler_drain();
    guard_leave(&g);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pending & PENDING_FATAL) {
        int sig = fatal_pending;
        fatal_pending = 0;
        last_snapshot(sig);
        die(sig);
    }
}

static void manage(int sig, const struct sigaction *program)
{
    mp_run_pending = run_pending;      /* before its handler can leave work */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (program) state[sig].program = *program;
    else memset(&state[sig].program, 0, sizeof state[sig].program);
    state[sig].program.sa_handler = SIG_DFL;
    if (real_sigaction(sig, &sa, NULL) == 0) atomic_store(&state[sig].stands, STANDS_FATAL);
}

/* The program's handler, called with the thread marked MP_IN_HANDLER when it
 * interrupted the allocator or the profiler. */
static void on_program_signal(int sig, siginfo_t *si, void *ctx)
{
    recover_fault(sig, si);
    void *call = atomic_load(&state[sig].call);
    int flags = atomic_load(&state[sig].call_flags);
    if (flags & SA_RESETHAND) {
        /* one delivery, then SIG_DFL: for a fatal signal the recorder stands
         * in for it (the kernel was not told to reset), so that a handler
         * that re-raises still gets the last snapshot */
        if (fatal_name(sig)) manage(sig, NULL);
        else atomic_store(&state[sig].stands, STANDS_NONE);     /* the kernel reset it */
    }
    enum mp_state was = mp_tls.in_profiler;
    if (was == MP_INSIDE) guard_set(MP_IN_HANDLER);
    if (flags & SA_SIGINFO) ((void (*)(int, siginfo_t *, void *))call)(sig, si, ctx);
    else ((void (*)(int))call)(sig);
    if (was == MP_INSIDE) guard_set(MP_INSIDE);
}

static int wrap(int sig, const struct sigaction *act)
{
    mp_run_pending = run_pending;      /* before its handler can leave work */
    struct sigaction sa = *act;
    sa.sa_sigaction = on_program_signal;
    sa.sa_flags |= SA_SIGINFO;
    if (fatal_name(sig)) sa.sa_flags &= ~SA_RESETHAND;     /* the trampoline does it (manage) */
    atomic_store(&state[sig].call, (act->sa_flags & SA_SIGINFO) ? (void *)act->sa_sigaction : (void *)act->sa_handler);
    atomic_store(&state[sig].call_flags, act->sa_flags);
    state[sig].program = *act;
    if (real_sigaction(sig, &sa, NULL) != 0) return -1;
    atomic_store(&state[sig].stands, STANDS_WRAPPED);
    return 0;
}

static int is_handler(const struct sigaction *act)
{
    return act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN;   /* a union with sa_sigaction */
}

void signals_init(void)
{
    for (int sig = 1; sig < NSIG; sig++) {     /* handlers installed before the recorder started */
        struct sigaction old;
        if (sig != SIGKILL && sig != SIGSTOP && real_sigaction(sig, NULL, &old) == 0 && is_handler(&old))
            wrap(sig, &old);
    }
    for (size_t i = 0; i < NFATAL; i++) {
        int sig = fatal_signals[i].sig;
        struct sigaction old;
        if (fatal_name(sig) && real_sigaction(sig, NULL, &old) == 0 &&
            old.sa_handler == SIG_DFL)
            manage(sig, &old);
    }
}

/* ------------------------------------------------------------ interposed */

MP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP) return real_sigaction(sig, act, old);
    struct sigaction before;
    if (atomic_load(&state[sig].stands) != STANDS_NONE) before = state[sig].program;
    else if (real_sigaction(sig, NULL, &before) != 0) return -1;
    if (act) {
        int ready = atomic_load(&mp_initialized);
        if (ready && fatal_name(sig) && act->sa_handler == SIG_DFL) {
            manage(sig, act);
        } else if (ready && is_handler(act)) {
            if (wrap(sig, act) != 0) return -1;
        } else {
            if (real_sigaction(sig, act, NULL) != 0) return -1;
            atomic_store(&state[sig].stands, STANDS_NONE);
        }
    }
    if (old) *old = before;
    return 0;
}

/* glibc's signal() calls its internal sigaction, not the interposed one. */
static sighandler_t bsd_signal_impl(int sig, sighandler_t handler)
{
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    act.sa_flags = SA_RESTART;
    if (sig <= 0 || sig >= NSIG || handler == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    return sigaction(sig, &act, &old) == 0 ? old.sa_handler : SIG_ERR;
}

MP_EXPORT sighandler_t signal(int sig, sighandler_t handler) { return bsd_signal_impl(sig, handler); }
MP_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler) { return bsd_signal_impl(sig, handler); }
