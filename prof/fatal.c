/* Fatal signals: a process killed by SIGSEGV, SIGABRT, SIGBUS, SIGFPE,
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
 * profiler (mp_in_profiler) cannot flush there (malloc's arena lock may be
 * held): an asynchronous one is kept pending until guard_leave; a fault
 * there (a corrupt heap, a bug of ours) dies at once, without a snapshot.
 * The flush itself is bounded by MP_FATAL_TIMEOUT (an alarm whose handler
 * kills the process with the original signal), and the original signal is
 * unblocked while it runs, so a second Ctrl-C ends it. */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static const struct { int sig; const char *name; } fatal_signals[] = {
    { SIGSEGV, "SIGSEGV" }, { SIGABRT, "SIGABRT" }, { SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" },
    { SIGILL, "SIGILL" }, { SIGTERM, "SIGTERM" }, { SIGINT, "SIGINT" }, { SIGHUP, "SIGHUP" },
};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])

/* Per signal: whether the recorder's handler stands in for SIG_DFL, and the
 * flags and mask the program gave with SIG_DFL (what it reads back). */
static struct {
    _Atomic int managed;
    struct sigaction program;
} state[NSIG];

MP_TLS volatile int mp_fatal_pending;
static volatile sig_atomic_t dying;     /* the signal being handled, for the alarm */

static int (*next_sigaction)(int, const struct sigaction *, struct sigaction *);

static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!next_sigaction) {
        int saved = guard_enter();
        next_sigaction = dlsym(RTLD_NEXT, "sigaction");
        guard_leave(saved);
    }
    return next_sigaction(sig, act, old);
}

static const char *signal_name(int sig)
{
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal_signals[i].sig == sig) return fatal_signals[i].name;
    return "signal";
}

static int is_fatal(int sig)
{
    return sig > 0 && sig < NSIG && strcmp(signal_name(sig), "signal") != 0 && sig != mp_opt.signal;
}

static void set_default(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    real_sigaction(sig, &dfl, NULL);
    atomic_store(&state[sig].managed, 0);
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
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    real_sigaction(SIGALRM, &sa, NULL);
    unblock(SIGALRM);
    alarm(mp_opt.fatal_timeout);
    flush_snapshot(FLUSH_FATAL, signal_name(sig));
    alarm(0);
}

/* A fault returns to the instruction that faulted, which faults again with
 * the default action: the kernel's own death, core dump and all. */
static int is_fault(int sig, const siginfo_t *si)
{
    return si && si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
}

static void on_fatal(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    int saved_errno = errno;
    set_default(sig);
    unblock(sig);
    if (mp_in_profiler) {
        if (is_fault(sig, si) || sig == SIGABRT)
            mp_log("error", "%s inside the allocator or the profiler; no snapshot written", signal_name(sig));
        else
            mp_fatal_pending = sig;     /* guard_leave takes it from here */
        errno = saved_errno;
        return;
    }
    last_snapshot(sig);
    if (!is_fault(sig, si)) raise(sig);
    errno = saved_errno;
}

void fatal_deferred(void)
{
    int sig = mp_fatal_pending;
    mp_fatal_pending = 0;
    if (!sig) return;
    last_snapshot(sig);
    die(sig);
}

static void manage(int sig, const struct sigaction *program)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (program) state[sig].program = *program;
    else memset(&state[sig].program, 0, sizeof state[sig].program);
    state[sig].program.sa_handler = SIG_DFL;
    if (real_sigaction(sig, &sa, NULL) == 0) atomic_store(&state[sig].managed, 1);
}

void fatal_init(void)
{
    for (size_t i = 0; i < NFATAL; i++) {
        int sig = fatal_signals[i].sig;
        struct sigaction old;
        if (is_fatal(sig) && real_sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_DFL)
            manage(sig, &old);
    }
}

/* ------------------------------------------------------------ interposed */

MP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!is_fatal(sig)) return real_sigaction(sig, act, old);
    struct sigaction before;
    int managed = atomic_load(&state[sig].managed);
    if (managed) before = state[sig].program;
    else if (real_sigaction(sig, NULL, &before) != 0) return -1;
    if (act) {
        if (!(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL && atomic_load(&mp_initialized)) {
            manage(sig, act);
        } else {
            if (real_sigaction(sig, act, NULL) != 0) return -1;
            atomic_store(&state[sig].managed, 0);
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
