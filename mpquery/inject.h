/* Calls into a running process (inject.c): one of its threads stopped at
 * a safe point with ptrace, made to call functions of its own on a stack
 * mapped for the calls, then given back every register as it was. A call
 * returns into code of ours that, if mpquery is gone, gives the thread
 * its state back by itself (inject_frame.c). x86-64 only. */
#ifndef MPQ_INJECT_H
#define MPQ_INJECT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/* The area mapped in the process for the calls: their stack (the
 * thread's own may have little left, or be a small alternate stack), the
 * arguments, the frame that restores the thread, the return code. */
#define INJECT_STACK (1u << 20)
#define INJECT_SCRATCH 16384u
#define INJECT_AREA (INJECT_STACK + 4096u)

struct inject {
    pid_t pid, tid;                 /* the process; the thread stopped (0: let go) */
    struct user_regs_struct regs;   /* the thread's registers when stopped */
    uint8_t xstate[16384];          /* its FPU/SSE/AVX state */
    size_t xstate_len;
    uint64_t sigmask;               /* its blocked signals (all blocked during the calls) */
    int group_stopped;              /* the process was stopped (SIGSTOP) when seized */
    uintptr_t syscall_at;           /* a syscall instruction of libc's: the mapping made with it */
    uintptr_t area;                 /* INJECT_AREA bytes mapped in the process, 0: none */
    uintptr_t frame;                /* the calls' return address slot, then the restoring frame */
    uintptr_t back;                 /* the return code: a system call the tracer stops at */
    uint64_t altstack[3];           /* its alternate stack (stack_t), given back too */
    size_t scratch_used;
    uintptr_t errno_addr;           /* the thread's errno, given back too */
    int errno_value;
    int masked;                     /* sigmask read, all blocked since */
    int left;                       /* a call was left running: it restores the thread itself */
    const volatile sig_atomic_t *signals;   /* mpquery's ^C, SIGTERM... counted: a new one cuts a wait short */
    size_t stack_used;              /* the deepest the calls went on the area's stack */
};

/* A module's executable mapping where a thread must not be stopped: the
 * allocator, the dynamic loader, the profiler (inject_stop retries). */
struct unsafe_range { uintptr_t lo, hi; };

/* What inject_stop checks: the innermost frame outside unsafe (a range's
 * lo has its low bit set when a waiting system call made from it is
 * safe: libc's), and no frame anywhere on the thread's stacks in locks
 * (the allocator's and the loader's entry points: inject_safe.c). */
struct inject_where {
    const struct unsafe_range *unsafe, *locks;
    size_t nunsafe, nlocks;
    uintptr_t errno_location;
    const volatile sig_atomic_t *signals;
};

/* Stops a thread of pid at a safe point, maps the area, saves its state.
 * 0, or -1 with the reason in err. */
int inject_stop(struct inject *in, pid_t pid, const struct inject_where *w, char *err, size_t errsize);
/* Copies data into the area for a call's argument: its address in the
 * process, or 0 when the area is full. */
uintptr_t inject_push(struct inject *in, const void *data, size_t len);
/* fn(a0, a1) in the stopped thread; its return value in *ret. Waits up to
 * timeout seconds of its running, 10 s of the process stopped (SIGSTOP),
 * 2 s after a new signal of mpquery's: then the call is left to finish
 * in the process, which restores the thread itself (in->left), and -1.
 * 0, or -1 with the reason in err. */
int inject_call(struct inject *in, uintptr_t fn, uintptr_t a0, uintptr_t a1, double timeout, uint64_t *ret,
                char *err, size_t errsize);
/* The process is stopped: fn(a0) set up to run when it continues, the
 * thread let go (in->left). 0, or -1 with the reason in err. */
int inject_arm(struct inject *in, uintptr_t fn, uintptr_t a0, char *err, size_t errsize);
/* Reads a NUL-terminated string of the process. */
int inject_read_string(pid_t pid, uintptr_t at, char *out, size_t size);
/* Every register back, the area unmapped, the thread let go. */
void inject_resume(struct inject *in);

/* inject_safe.c: no frame in w->locks on any stack of the thread (its
 * own, and those of the signal handlers it is in: each interrupted
 * context checked as the innermost). 1: safe. */
int inject_stack_safe(pid_t pid, pid_t tid, const struct user_regs_struct *r, const struct inject_where *w);
/* inject_unwind.c: the stopped thread tid's frames by CFI, innermost
 * first, into out: how many, or -1 where they are not known (a frame
 * without CFI, more than max). */
struct inject_frame_pc { uintptr_t pc; int activation; };
int inject_unwound(pid_t pid, pid_t tid, struct inject_frame_pc *out, int max);
/* The first address of len bytes equal to pattern in [lo, hi) of the
 * process, or 0. */
uintptr_t inject_find_code(pid_t pid, uintptr_t lo, uintptr_t hi, const void *pattern, size_t len);
/* libc's functions that take the allocator's or the loader's locks (its
 * dynamic symbols' ranges at base) into out: how many. */
size_t inject_lock_ranges(int fd, uintptr_t base, struct unsafe_range *out, size_t max);
/* inject_frame.c: the frame at in->frame + 8 that rt_sigreturn restores
 * the thread from, and the return code, written into the area. 0 or -1. */
int inject_write_frame(struct inject *in);
int inject_mem(pid_t pid, uintptr_t at, void *buf, size_t n, int write);

#endif
