/* Calls into a running process (inject.c): one of its threads stopped at
 * a safe point with ptrace, made to call functions of its own, then given
 * back every register and byte as they were. x86-64 only. */
#ifndef MPQ_INJECT_H
#define MPQ_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct inject {
    pid_t pid, tid;                 /* the process; the thread stopped */
    uintptr_t trap;                 /* where calls return: the entry point, an int3 there meanwhile */
    uint8_t trap_byte;              /* the byte the int3 replaced */
    struct user_regs_struct regs;   /* the thread's registers when stopped */
    uint8_t xstate[16384];          /* its FPU/SSE/AVX state */
    size_t xstate_len;
    uintptr_t scratch;              /* our area on its stack, below the red zone */
    uint8_t scratch_saved[4096];
    size_t scratch_used;
    uintptr_t errno_addr;           /* the thread's errno, given back too */
    int errno_value;
};

/* A module's executable mapping where a thread must not be stopped: the
 * allocator, the dynamic loader, the profiler (inject_stop retries). */
struct unsafe_range { uintptr_t lo, hi; };

/* Stops a thread of pid at a safe point: in the program's own code, or
 * blocked in a waiting system call (read, poll, nanosleep...), never
 * inside the ranges. 0, or -1 with the reason in err. */
int inject_stop(struct inject *in, pid_t pid, const struct unsafe_range *unsafe, size_t nunsafe,
                uintptr_t errno_location, char *err, size_t errsize);
/* Copies data onto the thread's stack for a call's argument: its address
 * in the process, or 0 when the area is full. */
uintptr_t inject_push(struct inject *in, const void *data, size_t len);
/* fn(a0, a1) in the stopped thread; its return value in *ret. Waits up
 * to timeout seconds. 0, or -1 with the reason in err. */
int inject_call(struct inject *in, uintptr_t fn, uintptr_t a0, uintptr_t a1, double timeout, uint64_t *ret,
                char *err, size_t errsize);
/* Reads a NUL-terminated string of the process. */
int inject_read_string(pid_t pid, uintptr_t at, char *out, size_t size);
/* Every register and byte back, the thread let go. */
void inject_resume(struct inject *in);

#endif
