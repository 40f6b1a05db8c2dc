/* The calls made in inject.c's thread: on the area's stack, returning
 * into its code (inject_frame.c), waited for at their system calls; one
 * that does not return in time, while the process stays stopped
 * (SIGSTOP, kept stopped: PTRACE_LISTEN) or after a new ^C is left to
 * finish by itself, never cut short. inject.c gives the thread back. */
#define _GNU_SOURCE
#include "inject.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#define STOPPED_WAIT 10.0       /* s the process may stay stopped (SIGSTOP) during a call */
#define SIGNAL_GRACE 2.0        /* s a call has after a new ^C */
#define SYSGOOD (SIGTRAP | 0x80)
#define BACK_STOP 10            /* the return code's first system call ends there */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int set_call(struct inject *in, uintptr_t fn, uintptr_t a0, uintptr_t a1)
{
    struct user_regs_struct r = in->regs;
    uint64_t back = in->back;
    if (inject_mem(in->pid, in->frame, &back, sizeof back, 1)) return -1;
    r.rsp = in->frame;
    r.rip = fn;
    r.rdi = a0;
    r.rsi = a1;
    r.rax = 0;
    r.orig_rax = (unsigned long)-1;
    r.eflags &= ~0x500ul;       /* the direction flag clear (as the ABI wants at a call), no trap flag */
    return ptrace(PTRACE_SETREGS, in->tid, 0, &r);
}

/* The thread let go in the middle of a call: it finishes it and restores
 * itself from the frame (the area stays mapped). */
static void leave(struct inject *in, int running)
{
    int st;
    if (running && ptrace(PTRACE_INTERRUPT, in->tid, 0, 0) == 0) {
        double until = now() + 2;
        while (waitpid(in->tid, &st, __WALL | WNOHANG) == 0 && now() < until) {
            struct timespec t = { 0, 1000000L };
            nanosleep(&t, NULL);
        }
    }
    ptrace(PTRACE_DETACH, in->tid, 0, 0);
    in->tid = 0;
    in->left = 1;
}

/* At the return code's system call: the result taken, the call made a
 * getpid, the thread stopped at its end. */
static int finish(struct inject *in, struct user_regs_struct *r, uint64_t *ret)
{
    *ret = r->rdi;
    r->orig_rax = SYS_getpid;
    if (ptrace(PTRACE_SETREGS, in->tid, 0, r) != 0 || ptrace(PTRACE_SYSCALL, in->tid, 0, 0) != 0) return -1;
    for (int i = 0; i < 16; i++) {
        int st;
        double until = now() + 5;
        pid_t got;
        while ((got = waitpid(in->tid, &st, __WALL | WNOHANG)) == 0 && now() < until) {
            struct timespec t = { 0, 100000L };
            nanosleep(&t, NULL);
        }
        if (got != in->tid || !WIFSTOPPED(st)) return -1;
        if (WSTOPSIG(st) == SYSGOOD && ptrace(PTRACE_GETREGS, in->tid, 0, r) == 0 && r->orig_rax == SYS_getpid)
            return 0;
        if (ptrace(PTRACE_SYSCALL, in->tid, 0, 0) != 0) return -1;
    }
    return -1;
}

static int fault(int sig) { return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE; }

struct waiting { double until, stopped_until, cut; sig_atomic_t seen; int running, listening; };

/* Time up: the limit of the state the call is in passed. */
static int time_up(const struct inject *in, struct waiting *w)
{
    double t = now();
    if (in->signals && *in->signals != w->seen && !w->cut) w->cut = t + SIGNAL_GRACE;
    double limit = w->listening ? w->stopped_until : w->until;
    if (w->cut && w->cut < limit) limit = w->cut;
    return t > limit;
}

/* One stop of the thread during the call dealt with: 1 when it was the
 * return (*ret set), 0 to wait on, -1 on failure (err). */
static int on_stop(struct inject *in, struct waiting *w, int st, uint64_t *ret, char *err, size_t errsize)
{
    if (WIFEXITED(st) || WIFSIGNALED(st)) return in->tid = 0, snprintf(err, errsize, "the process has ended"), -1;
    int sig = WSTOPSIG(st), event = st >> 16;
    long req = PTRACE_SYSCALL, give = 0;
    if (sig == SYSGOOD) {
        struct user_regs_struct r;
        if (ptrace(PTRACE_GETREGS, in->tid, 0, &r) == 0 && r.rip == in->back + BACK_STOP &&
            r.orig_rax == SYS_rt_sigreturn) {
            if (finish(in, &r, ret)) return snprintf(err, errsize, "the call's return could not be taken"), -1;
            return 1;
        }
    } else if (event == PTRACE_EVENT_STOP && (w->listening = sig == SIGSTOP || sig == SIGTSTP ||
                                              sig == SIGTTIN || sig == SIGTTOU)) {
        req = PTRACE_LISTEN;        /* the process was stopped: the thread too, until it is continued */
        w->stopped_until = now() + STOPPED_WAIT;
    } else if (fault(sig) && !event) {
        return snprintf(err, errsize, "the call faulted (signal %d): the thread was given its registers back", sig), -1;
    } else if (!event) {
        give = sig;
    }
    if (ptrace((enum __ptrace_request)req, in->tid, 0, (void *)give) != 0)
        return snprintf(err, errsize, "ptrace: %s", strerror(errno)), -1;
    w->running = 1;
    return 0;
}

int inject_call(struct inject *in, uintptr_t fn, uintptr_t a0, uintptr_t a1, double timeout, uint64_t *ret,
                char *err, size_t errsize)
{
    if (in->group_stopped)
        return snprintf(err, errsize, "the process was stopped (SIGSTOP) when its thread was seized"), -1;
    struct waiting w = { .until = now() + timeout, .seen = in->signals ? *in->signals : 0 };
    if (set_call(in, fn, a0, a1) != 0 || ptrace(PTRACE_SYSCALL, in->tid, 0, 0) != 0)
        return snprintf(err, errsize, "ptrace: %s", strerror(errno)), -1;
    w.running = 1;
    for (;;) {
        int st;
        pid_t r = waitpid(in->tid, &st, __WALL | WNOHANG);
        if (r == in->tid) {
            w.running = 0;
            int rc = on_stop(in, &w, st, ret, err, errsize);
            if (rc) return rc > 0 ? 0 : -1;
            continue;
        }
        if (r < 0 && errno != EINTR) return in->tid = 0, snprintf(err, errsize, "the process has ended"), -1;
        if (time_up(in, &w)) {
            const char *why = w.cut && now() >= w.cut ? "mpquery was told to end"
                              : w.listening ? "the process stayed stopped (SIGSTOP)" : "it did not return in time";
            leave(in, w.running);
            return snprintf(err, errsize, "%s: the call was left to finish in the process, which restores the "
                            "thread itself when it returns", why), -1;
        }
        struct timespec t = { 0, 200000L };
        nanosleep(&t, NULL);
    }
}

int inject_arm(struct inject *in, uintptr_t fn, uintptr_t a0, char *err, size_t errsize)
{
    if (set_call(in, fn, a0, 0) != 0) return snprintf(err, errsize, "ptrace: %s", strerror(errno)), -1;
    ptrace(PTRACE_DETACH, in->tid, 0, 0);
    in->tid = 0;
    in->left = 1;
    return 0;
}
