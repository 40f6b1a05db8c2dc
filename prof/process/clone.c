/* Processes made without fork: the raw clone and clone3 system calls
 * (through syscall()) and libc's clone() without CLONE_VM make a new
 * process, as fork does, but run no atfork handler: fork.c's are run
 * around them, so that the child is recorded as a fork child. Left to
 * themselves: a child sharing its parent's descriptor table (CLONE_FILES:
 * the child's reopened /proc/self files would replace the parent's) and
 * a raw clone given a stack of its own (it cannot return into syscall()'s
 * caller; a program doing that calls the instruction itself). Anything
 * else passes through unchanged, errno included. */
#define _GNU_SOURCE
#include "symbols.h"
#include "process.h"
#include "hooks.h"

#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>

/* A new process this file handles: no shared memory, no shared
 * descriptor table, the caller's stack copied (none given). */
static int a_process(unsigned long long flags, unsigned long long stack)
{
    return !(flags & (CLONE_VM | CLONE_FILES)) && !stack && mp_initialized;
}

static long forward(long n, const long a[6])
{
    return mp_next.syscall ? mp_next.syscall(n, a[0], a[1], a[2], a[3], a[4], a[5])
                           : mp_raw_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* syscall() itself is the stub below: any other call goes on to libc's
 * with its registers untouched (a compare and a jump, 7 instructions),
 * clone and clone3 (and every call until libc's is known) to
 * syscall_slow. */
long (*syscall_next)(long, ...) __attribute__((visibility("hidden")));
#define STR_(x) #x
#define STR(x) STR_(x)
__asm__(".text\n.globl syscall\n.type syscall, @function\nsyscall:\n"
        "    endbr64\n"
        "    cmpq $" STR(SYS_clone) ", %rdi\n    je 1f\n"
        "    cmpq $" STR(SYS_clone3) ", %rdi\n    je 1f\n"
        "    movq syscall_next(%rip), %r11\n    testq %r11, %r11\n    je 1f\n"
        "    jmp *%r11\n"
        "1:  jmp syscall_slow\n"
        ".size syscall, .-syscall\n");

__attribute__((visibility("hidden"), used)) long syscall_slow(long n, ...)
{
    long a[6];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
    if (!syscall_next && mp_next.syscall) syscall_next = mp_next.syscall;
    int proc = 0;
    if (n == SYS_clone) proc = a_process((unsigned long)a[0], (unsigned long)a[1]);
    else if (n == SYS_clone3 && a[0] && (size_t)a[1] >= 64) {     /* CLONE_ARGS_SIZE_VER0 */
        const struct clone_args *c = (const struct clone_args *)a[0];
        proc = a_process(c->flags, c->stack);
    }
    if (!proc) return forward(n, a);
    fork_before();
    long r = forward(n, a);
    int err = errno;
    fork_after(r == 0);
    errno = err;
    return r;
}

/* libc's clone: the child runs fn on its own stack, then leaves with the
 * exit system call (not exit(), no destructor; the process ends when its
 * last thread does): its last snapshot is written here, before that, and
 * the profiler's thread ends, so that the process ends as it would. */
struct clone_call { int (*fn)(void *); void *arg; };

static int clone_child(void *p)
{
    struct clone_call c = *(struct clone_call *)p;   /* the parent's stack, copied */
    fork_after(1);
    int status = c.fn(c.arg);
    char how[32];
    snprintf(how, sizeof how, "exit %d", status & 0xff);
    lifecycle_end_session(0, how);
    background_pause(1);
    return status;
}

MP_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    pid_t *ptid = va_arg(ap, pid_t *);
    void *tls = va_arg(ap, void *);
    pid_t *ctid = va_arg(ap, pid_t *);
    va_end(ap);
    HOOKS_READY();
    if (!a_process((unsigned)flags, 0) || !fn) return mp_next.clone(fn, stack, flags, arg, ptid, tls, ctid);
    struct clone_call c = { fn, arg };
    fork_before();
    int r = mp_next.clone(clone_child, stack, flags, &c, ptid, tls, ctid);
    int err = errno;
    fork_after(0);
    errno = err;
    return r;
}
