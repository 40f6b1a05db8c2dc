/* Calls into a running process with ptrace (x86-64): one thread seized and
 * interrupted at a safe point, made to call a function of the process
 * with the stack below its red zone and a return into an int3 written
 * over the executable's entry point (run once at start, never again),
 * then given back its registers (the FPU/vector state too), its errno
 * and every byte written. A thread interrupted in a system call resumes
 * it: the calls run with orig_rax = -1 (no restart into them), and the
 * saved registers, orig_rax and the -ERESTART* result included, make the
 * kernel restart the call once the thread is let go. Other threads run on
 * meanwhile. */
#define _GNU_SOURCE
#include "inject.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RED_ZONE 128
#define SCRATCH (sizeof ((struct inject *)0)->scratch_saved)

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

static int mem_io(pid_t pid, uintptr_t at, void *buf, size_t n, int write)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t done = write ? pwrite(fd, buf, n, (off_t)at) : pread(fd, buf, n, (off_t)at);
    close(fd);
    return done == (ssize_t)n ? 0 : -1;
}

int inject_read_string(pid_t pid, uintptr_t at, char *out, size_t size)
{
    size_t n = 0;
    while (n + 1 < size) {
        char c;
        if (mem_io(pid, at + n, &c, 1, 0)) return -1;
        if (!(out[n++] = c)) return 0;
    }
    out[n] = 0;
    return 0;
}

static uintptr_t entry_point(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/auxv", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    Elf64_auxv_t a;
    uintptr_t entry = 0;
    while (fread(&a, sizeof a, 1, f) == 1 && a.a_type != AT_NULL)
        if (a.a_type == AT_ENTRY) entry = a.a_un.a_val;
    fclose(f);
    return entry;
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

/* Seized and in an interrupt stop (a signal that came first is given
 * back to the thread). */
static int stop_thread(pid_t tid)
{
    if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0) return -1;
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0) return -1;
    for (;;) {
        int st;
        if (wait_thread(tid, &st, 2) != 0) return -1;
        if (!WIFSTOPPED(st)) return errno = ESRCH, -1;
        if (st >> 16 == PTRACE_EVENT_STOP) return 0;
        ptrace(PTRACE_CONT, tid, 0, (void *)(uintptr_t)WSTOPSIG(st));
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

/* A range's lo has its low bit set when a waiting system call made from
 * it is safe (libc's wrappers). */
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

/* The thread's state saved, the int3 and the scratch area in place. */
static int take_thread(struct inject *in, char *err, size_t errsize)
{
    struct iovec iov = { in->xstate, sizeof in->xstate };
    if (ptrace(PTRACE_GETREGSET, in->tid, (void *)NT_X86_XSTATE, &iov) != 0)
        return snprintf(err, errsize, "cannot read the thread's vector registers: %s", strerror(errno)), -1;
    in->xstate_len = iov.iov_len;
    in->scratch = (in->regs.rsp - RED_ZONE - SCRATCH) & ~(uintptr_t)15;
    in->scratch_used = 0;
    if (mem_io(in->pid, in->scratch, in->scratch_saved, SCRATCH, 0))
        return snprintf(err, errsize, "cannot read the thread's stack: %s", strerror(errno)), -1;
    uint8_t int3 = 0xcc;
    if (!(in->trap = entry_point(in->pid)) || mem_io(in->pid, in->trap, &in->trap_byte, 1, 0) ||
        mem_io(in->pid, in->trap, &int3, 1, 1))
        return snprintf(err, errsize, "cannot write the process's memory: %s", strerror(errno)), -1;
    return 0;
}

int inject_stop(struct inject *in, pid_t pid, const struct unsafe_range *unsafe, size_t nunsafe,
                uintptr_t errno_location, char *err, size_t errsize)
{
    memset(in, 0, sizeof *in);
    in->pid = pid;
    double until = now() + 5;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    while (now() < until) {
        DIR *d = opendir(path);
        if (!d) return snprintf(err, errsize, "the process has ended"), -1;
        struct dirent *e;
        while ((e = readdir(d))) {
            pid_t tid = (pid_t)atoi(e->d_name);
            if (tid <= 0 || thread_is_ours(pid, tid)) continue;
            if (stop_thread(tid) != 0) {
                int why = errno;
                ptrace(PTRACE_DETACH, tid, 0, 0);
                if (why == EPERM) {
                    closedir(d);
                    errno = EPERM;
                    return snprintf(err, errsize, "ptrace: %s", strerror(why)), -1;
                }
                continue;
            }
            if (ptrace(PTRACE_GETREGS, tid, 0, &in->regs) == 0 && safe_point(&in->regs, unsafe, nunsafe)) {
                closedir(d);
                in->tid = tid;
                if (take_thread(in, err, errsize)) return inject_resume(in), -1;
                if (errno_location) {
                    uint64_t at;
                    if (inject_call(in, errno_location, 0, 0, 5, &at, err, errsize)) return inject_resume(in), -1;
                    in->errno_addr = (uintptr_t)at;
                    if (mem_io(pid, in->errno_addr, &in->errno_value, sizeof in->errno_value, 0)) in->errno_addr = 0;
                }
                return 0;
            }
            ptrace(PTRACE_DETACH, tid, 0, 0);
        }
        closedir(d);
        pause_ms(2);
    }
    errno = EAGAIN;
    return snprintf(err, errsize, "no thread of the process came to a safe point in 5 s (each was inside the "
                    "allocator or the dynamic loader)"), -1;
}

uintptr_t inject_push(struct inject *in, const void *data, size_t len)
{
    size_t need = (len + 15) & ~(size_t)15;
    if (in->scratch_used + need > SCRATCH) return 0;
    uintptr_t at = in->scratch + SCRATCH - in->scratch_used - need;
    if (mem_io(in->pid, at, (void *)data, len, 1)) return 0;
    in->scratch_used += need;
    return at;
}

int inject_call(struct inject *in, uintptr_t fn, uintptr_t a0, uintptr_t a1, double timeout, uint64_t *ret,
                char *err, size_t errsize)
{
    struct user_regs_struct r = in->regs;
    uintptr_t sp = (in->scratch - 64) & ~(uintptr_t)15;
    sp -= 8;        /* as after a call: the return address at a 16-byte boundary + 8 */
    uint64_t back = in->trap;
    if (mem_io(in->pid, sp, &back, sizeof back, 1))
        return snprintf(err, errsize, "cannot write the thread's stack: %s", strerror(errno)), -1;
    r.rsp = sp;
    r.rip = fn;
    r.rdi = a0;
    r.rsi = a1;
    r.rax = 0;
    r.orig_rax = (unsigned long)-1;
    r.eflags &= ~0x400ul;       /* the direction flag clear, as the ABI wants at a call */
    if (ptrace(PTRACE_SETREGS, in->tid, 0, &r) != 0 || ptrace(PTRACE_CONT, in->tid, 0, 0) != 0)
        return snprintf(err, errsize, "ptrace: %s", strerror(errno)), -1;
    for (;;) {
        int st;
        if (wait_thread(in->tid, &st, timeout) != 0) {
            ptrace(PTRACE_INTERRUPT, in->tid, 0, 0);
            wait_thread(in->tid, &st, 1);
            return snprintf(err, errsize, "the call did not return in %.0f s", timeout), -1;
        }
        if (WIFEXITED(st) || WIFSIGNALED(st)) return snprintf(err, errsize, "the process has ended"), -1;
        int sig = WSTOPSIG(st);
        if (sig == SIGTRAP && st >> 16 == 0) {
            struct user_regs_struct now_regs;
            ptrace(PTRACE_GETREGS, in->tid, 0, &now_regs);
            if (now_regs.rip == in->trap + 1) {
                *ret = now_regs.rax;
                return 0;
            }
        }
        /* a signal for the thread meanwhile: delivered (its handler runs
         * on top of the call); a group stop: went through */
        ptrace(PTRACE_CONT, in->tid, 0, (void *)(uintptr_t)(st >> 16 ? 0 : sig));
    }
}

void inject_resume(struct inject *in)
{
    if (!in->tid) return;
    if (in->errno_addr) mem_io(in->pid, in->errno_addr, &in->errno_value, sizeof in->errno_value, 1);
    if (in->scratch) mem_io(in->pid, in->scratch, in->scratch_saved, SCRATCH, 1);
    if (in->trap) mem_io(in->pid, in->trap, &in->trap_byte, 1, 1);
    ptrace(PTRACE_SETREGS, in->tid, 0, &in->regs);
    if (in->xstate_len) {
        struct iovec iov = { in->xstate, in->xstate_len };
        ptrace(PTRACE_SETREGSET, in->tid, (void *)NT_X86_XSTATE, &iov);
    }
    ptrace(PTRACE_DETACH, in->tid, 0, 0);
    in->tid = 0;
}
