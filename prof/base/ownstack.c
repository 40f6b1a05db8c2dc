/* The profiler's heavy work on a program's thread (a snapshot: SQLite and
 * libdw; an unwind rule computed the first time) runs on a stack of the
 * profiler's own, not on the thread's: a program may give its threads
 * small stacks (16 KiB, the minimum; 64 KiB is common in servers) or run
 * under `ulimit -s 128`, and libdw alone needs tens of KiB. Each stack
 * belongs to one lock's holder (the flush's, the unwind rules'), so one
 * of each is enough; made at first use (MAP_NORESERVE: pages are taken
 * as touched), a guard page below. Without one (no memory), the work runs
 * where it is. */
#define _GNU_SOURCE
#include "base.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

MP_TLS struct own_stack *own_stack_current;

#if defined(__x86_64__)
/* fn(arg) with the stack pointer at top (16-byte aligned), back on the
 * caller's stack after: the callee-saved registers are fn's to keep (the
 * ABI), the caller's rsp is kept on the new stack and rbp holds it. No
 * system call: ucontext's getcontext, swapcontext and the return through
 * uc_link each set the signal mask, 3 rt_sigprocmask per run (per unwind
 * rule computed: 162 in `wc -l`). */
void mp_stack_call(void *top, void (*fn)(void *), void *arg);
__asm__(".text\n"
        ".globl mp_stack_call\n"
        ".hidden mp_stack_call\n"
        ".type mp_stack_call, @function\n"
        "mp_stack_call:\n"
        "    .cfi_startproc\n"
        "    push %rbp\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbp, -16\n"
        "    mov %rsp, %rbp\n"
        "    .cfi_def_cfa_register %rbp\n"
        "    mov %rdi, %rsp\n"
        "    push %rbp\n"
        "    sub $8, %rsp\n"
        "    mov %rdx, %rdi\n"
        "    call *%rsi\n"
        "    mov 8(%rsp), %rsp\n"
        "    pop %rbp\n"
        "    .cfi_def_cfa %rsp, 8\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size mp_stack_call, .-mp_stack_call\n");

static void switch_run(struct own_stack *s, void (*fn)(void *), void *arg)
{
    mp_stack_call((void *)(((uintptr_t)s->base + s->size) & ~(uintptr_t)15), fn, arg);
}
#else
static void own_stack_entry(void)
{
    struct own_stack *s = own_stack_current;
    s->fn(s->arg);
}

static void switch_run(struct own_stack *s, void (*fn)(void *), void *arg)
{
    ucontext_t *ctx = s->ctx;       /* here, not on the small stack (2 x 1 KiB) */
    s->fn = fn, s->arg = arg;
    getcontext(&ctx[1]);
    ctx[1].uc_stack.ss_sp = s->base;
    ctx[1].uc_stack.ss_size = s->size;
    ctx[1].uc_link = &ctx[0];
    makecontext(&ctx[1], own_stack_entry, 0);
    swapcontext(&ctx[0], &ctx[1]);
}
#endif

void own_stack_run(struct own_stack *s, void (*fn)(void *), void *arg)
{
    if (!s->base && !s->failed) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        void *p = mp_sys_mmap(NULL, s->size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                              -1, 0);
        if (p == MAP_FAILED) s->failed = 1;
        else mprotect(p, page, PROT_NONE), s->base = (char *)p + page, mp_range_add(RANGES_PROFILER, p, s->size + page);
    }
    if (!s->base || own_stack_current == s) {     /* none, or on it already */
        fn(arg);
        return;
    }
    struct own_stack *outer = own_stack_current;
    own_stack_current = s;
    switch_run(s, fn, arg);
    own_stack_current = outer;
}

/* Its pages given back (the holder of its lock, not on it): mapped still,
 * taken again as touched. */
void own_stack_release(struct own_stack *s)
{
    if (s->base && own_stack_current != s) madvise(s->base, s->size, MADV_DONTNEED);
}
