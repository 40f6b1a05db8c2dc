/* Calls into a running process with ptrace (x86-64): one thread seized and
 * interrupted at a safe point (inject_safe.c checks its whole stack), its
 * signals blocked, an area mapped in the process with system calls the
 * thread makes one instruction at a time (libc's syscall instruction):
 * the calls' stack (the thread's own may be nearly full or a small
 * alternate stack: nothing of the thread's stack is written), their
 * arguments, the frame and code that restore the thread without us
 * (inject_frame.c). A call runs traced at its system calls
 * (PTRACE_SYSCALL) and returns into that code, where it stops; then the
 * thread is given back its registers (the FPU/vector state too), signal
 * mask and errno, the area unmapped. A thread interrupted in a system
 * call resumes it: the calls run with orig_rax = -1 (no restart into
 * them), and the saved registers, orig_rax and the -ERESTART* result
 * included, make the kernel restart the call once the thread is let go.
 * A call is never cut short with the registers put back in its middle:
 * one that does not return in time is left to finish by itself. Other
 * threads run on meanwhile. */
#define _GNU_SOURCE
#include "inject.h"

#include <elf.h>
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SYSGOOD (SIGTRAP | 0x80)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void pause_ms(int ms)
{
    struct timespec t = { 0, ms * 1000000L };
    nanosleep(&t, NULL);
}

int inject_read_string(pid_t pid, uintptr_t at, char *out, size_t size)
{
    size_t n = 0;
    while (n + 1 < size) {
        char c;
        if (inject_mem(pid, at + n, &c, 1, 0)) return -1;
        if (!(out[n++] = c)) return 0;
    }
    out[n] = 0;
    return 0;
}

/* Waits for a stop or the end of the thread, up to timeout seconds: 0 and
 * the status, -1 when the time ran out. */
static int wait_thread(pid_t tid, int *status, double timeout)
{
    double until = now() + timeout;
    for (;;) {
        pid_t r = waitpid(tid, status, __WALL | WNOHANG);
        if (r == tid) return 0;
        if (r < 0 && errno != EINTR) return -1;
        if (now() > until) return -1;
        pause_ms(1);
    }
}

static int is_stop_signal(int sig) { return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

/* Seized and in an interrupt stop (a signal that came first is given
 * back to the thread); *group: the process is stopped (SIGSTOP). */
static int stop_thread(pid_t tid, int *group)
{
    if (ptrace(PTRACE_SEIZE, tid, 0, (void *)PTRACE_O_TRACESYSGOOD) != 0) return -1;
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0) return -1;
    for (;;) {
        int st;
        if (wait_thread(tid, &st, 2) != 0) return -1;
        if (!WIFSTOPPED(st)) return errno = ESRCH, -1;
        if (st >> 16 == PTRACE_EVENT_STOP) return *group = is_stop_signal(WSTOPSIG(st)), 0;
        ptrace(PTRACE_CONT, tid, 0, (void *)(uintptr_t)(WSTOPSIG(st) == SYSGOOD ? 0 : WSTOPSIG(st)));
        ptrace(PTRACE_INTERRUPT, tid, 0, 0);
    }
}

/* System calls a thread waits in without holding a lock the allocator or
 * the dynamic loader would need (the allocator's own mmap, munmap, brk
 * and madvise are not among them; nor is futex, which a thread inside
 * the allocator may wait in). restart_syscall: a sleep that an earlier
 * stop (ours, a SIGSTOP) interrupted, resumed. */
static int waiting_call(long nr)
{
    static const long waits[] = {
        SYS_read, SYS_write, SYS_readv, SYS_poll, SYS_select, SYS_nanosleep, SYS_pause, SYS_accept,
        SYS_recvfrom, SYS_recvmsg, SYS_wait4, SYS_rt_sigsuspend, SYS_rt_sigtimedwait, SYS_clock_nanosleep,
        SYS_epoll_wait, SYS_waitid, SYS_pselect6, SYS_ppoll, SYS_epoll_pwait, SYS_accept4, SYS_restart_syscall,
    };
    for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++)
        if (nr == waits[i]) return 1;
    return 0;
}

/* The innermost frame: a range's lo has its low bit set when a waiting
 * system call made from it is safe (libc's wrappers). */
static int safe_point(const struct user_regs_struct *r, const struct unsafe_range *u, size_t n)
{
    int in_call = (long)r->orig_rax >= 0;
    if (in_call && !waiting_call((long)r->orig_rax)) return 0;
    for (size_t i = 0; i < n; i++) {
        uintptr_t lo = u[i].lo & ~(uintptr_t)1;
        if (r->rip >= lo && r->rip < u[i].hi && !(in_call && (u[i].lo & 1))) return 0;
    }
    return 1;
}

static int thread_is_ours(pid_t pid, pid_t tid)
{
    char path[96], comm[32] = "";
    snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
    FILE *f = fopen(path, "re");
    if (!f) return 1;
    if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
    fclose(f);
    return !strcmp(comm, "mallocprof\n");
}

/* A system call made by the thread, one instruction stepped: its result
 * in *ret. No stack is touched. */
static int remote_syscall(struct inject *in, long nr, const uint64_t a[4], uint64_t *ret)
{
    struct user_regs_struct r = in->regs;
    r.rip = in->syscall_at;
    r.rax = (uint64_t)nr;
    r.rdi = a[0], r.rsi = a[1], r.rdx = a[2], r.r10 = a[3], r.r8 = (uint64_t)-1, r.r9 = 0;
    r.orig_rax = (unsigned long)-1;
    if (ptrace(PTRACE_SETREGS, in->tid, 0, &r) != 0) return -1;
    for (int tries = 0; tries < 100; tries++) {
        int st;
        if (ptrace(PTRACE_SINGLESTEP, in->tid, 0, 0) != 0 || wait_thread(in->tid, &st, 5) != 0) return -1;
        if (!WIFSTOPPED(st)) return errno = ESRCH, -1;
        if (ptrace(PTRACE_GETREGS, in->tid, 0, &r) != 0) return -1;
        if (r.rip == in->syscall_at + 2) return *ret = r.rax, 0;
        if (r.rip != in->syscall_at) return errno = EFAULT, -1;
    }
    return errno = EAGAIN, -1;
}

static int syscall_failed(uint64_t rc) { return rc > (uint64_t)-4096; }

/* The area unmapped by the stopped thread. */
static void inject_unmap(struct inject *in)
{
    uint64_t rc, mu[4] = { in->area, INJECT_AREA, 0, 0 };
    if (remote_syscall(in, SYS_munmap, mu, &rc) == 0 && rc == 0) in->area = 0;
}

void inject_resume(struct inject *in)
{
    if (!in->tid) return;
    if (in->errno_addr) inject_mem(in->pid, in->errno_addr, &in->errno_value, sizeof in->errno_value, 1);
    if (in->area) inject_unmap(in);
    ptrace(PTRACE_SETREGS, in->tid, 0, &in->regs);
    if (in->xstate_len) {
        struct iovec iov = { in->xstate, in->xstate_len };
        ptrace(PTRACE_SETREGSET, in->tid, (void *)NT_X86_XSTATE, &iov);
    }
    if (in->masked) ptrace(PTRACE_SETSIGMASK, in->tid, (void *)sizeof in->sigmask, &in->sigmask);
    ptrace(PTRACE_DETACH, in->tid, 0, 0);
    in->tid = 0;
}

/* The area mapped (read-write, its last page then the code, read and
 * run), the thread's alternate stack read, the frame and code written. */
static int map_area(struct inject *in, uintptr_t libc_lo, uintptr_t libc_hi, char *err, size_t errsize)
{
    uint64_t at = 0, rc = 0;
    if (!(in->syscall_at = inject_find_code(in->pid, libc_lo, libc_hi, "\x0f\x05", 2)))
        return snprintf(err, errsize, "no system call instruction found in the C library"), -1;
    uint64_t mm[4] = { 0, INJECT_AREA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE };
    if (remote_syscall(in, SYS_mmap, mm, &at) || syscall_failed(at))
        return snprintf(err, errsize, "the process could not map a stack for the calls: %s",
                        strerror(syscall_failed(at) ? (int)-at : errno)), -1;
    in->area = at;
    uint64_t ss[4] = { 0, in->area, 0, 0 };
    if (remote_syscall(in, SYS_sigaltstack, ss, &rc) || rc ||
        inject_mem(in->pid, in->area, in->altstack, sizeof in->altstack, 0))
        return snprintf(err, errsize, "cannot read the thread's alternate stack"), -1;
    if (inject_write_frame(in)) return snprintf(err, errsize, "cannot write the calls' area: %s", strerror(errno)), -1;
    uint64_t mp[4] = { in->back, 4096, PROT_READ | PROT_EXEC, 0 };
    if (remote_syscall(in, SYS_mprotect, mp, &rc) || rc)
        return snprintf(err, errsize, "the process could not make its code page executable"), -1;
    return 0;
}

/* The thread's state saved, its signals blocked, the area in place. */
static int take_thread(struct inject *in, const struct inject_where *w, char *err, size_t errsize)
{
    struct iovec iov = { in->xstate, sizeof in->xstate };
    if (ptrace(PTRACE_GETREGSET, in->tid, (void *)NT_X86_XSTATE, &iov) != 0)
        return snprintf(err, errsize, "cannot read the thread's vector registers: %s", strerror(errno)), -1;
    in->xstate_len = iov.iov_len;
    uint64_t all = ~(uint64_t)0;
    if (ptrace(PTRACE_GETSIGMASK, in->tid, (void *)sizeof in->sigmask, &in->sigmask) != 0 ||
        ptrace(PTRACE_SETSIGMASK, in->tid, (void *)sizeof all, &all) != 0)
        return snprintf(err, errsize, "cannot read the thread's signal mask: %s", strerror(errno)), -1;
    in->masked = 1;
    for (size_t i = 0; i < w->nunsafe; i++)
        if (w->unsafe[i].lo & 1) return map_area(in, w->unsafe[i].lo & ~(uintptr_t)1, w->unsafe[i].hi, err, errsize);
    return snprintf(err, errsize, "the C library's code is not mapped"), -1;
}

/* A thread of the process stopped at a safe point (the rest let go), or
 * 0: none now. -1: ptrace refused. */
static int seize_safe(struct inject *in, const struct inject_where *w)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)in->pid);
    DIR *d = opendir(path);
    if (!d) return errno = ESRCH, -1;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || thread_is_ours(in->pid, tid)) continue;
        if (stop_thread(tid, &in->group_stopped) != 0) {
            int why = errno;
            ptrace(PTRACE_DETACH, tid, 0, 0);
            if (why == EPERM) rc = -1, errno = EPERM;
            continue;
        }
        if (ptrace(PTRACE_GETREGS, tid, 0, &in->regs) == 0 && safe_point(&in->regs, w->unsafe, w->nunsafe) &&
            inject_stack_safe(in->pid, tid, &in->regs, w))
            in->tid = tid, rc = 1;
        else
            ptrace(PTRACE_DETACH, tid, 0, 0);
    }
    closedir(d);
    return rc;
}

int inject_stop(struct inject *in, pid_t pid, const struct inject_where *w, char *err, size_t errsize)
{
    memset(in, 0, sizeof *in);
    in->pid = pid;
    in->signals = w->signals;
    double until = now() + 5;
    for (;;) {
        int rc = seize_safe(in, w);
        if (rc < 0 && errno == EPERM) return snprintf(err, errsize, "ptrace: %s", strerror(EPERM)), -1;
        if (rc < 0) return snprintf(err, errsize, "the process has ended"), -1;
        if (rc > 0) break;
        if (now() > until) {
            errno = EAGAIN;
            return snprintf(err, errsize, "no thread of the process came to a safe point in 5 s (each was inside "
                            "the allocator or the dynamic loader, or called from there)"), -1;
        }
        pause_ms(2);
    }
    if (take_thread(in, w, err, errsize)) return inject_resume(in), -1;
    if (w->errno_location) {
        uint64_t at;
        if (inject_call(in, w->errno_location, 0, 0, 5, &at, err, errsize)) return inject_resume(in), -1;
        in->errno_addr = (uintptr_t)at;
        if (inject_mem(pid, in->errno_addr, &in->errno_value, sizeof in->errno_value, 0) ||
            inject_write_frame(in))
            in->errno_addr = 0;
    }
    return 0;
}

uintptr_t inject_push(struct inject *in, const void *data, size_t len)
{
    size_t need = (len + 15) & ~(size_t)15;
    if (in->scratch_used + need > INJECT_SCRATCH) return 0;
    uintptr_t at = in->area + INJECT_STACK - in->scratch_used - need;
    if (inject_mem(in->pid, at, (void *)data, len, 1)) return 0;
    in->scratch_used += need;
    return at;
}
