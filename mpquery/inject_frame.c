/* The way back that needs no mpquery (issue 41): a call made in a thread
 * returns into code of ours in the area, which stops for mpquery at a
 * system call (rt_sigreturn, traced: mpquery takes the result there and
 * turns the call into getpid). If mpquery is gone (kill -9) or left the
 * call to finish (a stopped process), the system call runs: rt_sigreturn
 * from a frame holding the thread's registers, FPU/vector state, signal
 * mask and alternate stack as they were when stopped, its errno written
 * back first. Both of the code's system calls are that one. */
#define _GNU_SOURCE
#include "inject.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* the kernel's x86-64 signal frame (arch/x86/include/uapi/asm/sigcontext.h,
 * ucontext.h): not glibc's ucontext_t, whose signal mask is larger */
struct k_sigcontext {
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15, di, si, bp, bx, dx, ax, cx, sp, ip, flags;
    uint16_t cs, gs, fs, ss;
    uint64_t err, trapno, oldmask, cr2, fpstate, reserved[8];
};
struct k_stack { uint64_t sp; int32_t flags, pad; uint64_t size; };
struct k_ucontext { uint64_t flags, link; struct k_stack stack; struct k_sigcontext mc; uint64_t sigmask; };
struct k_frame { uint64_t pretcode; struct k_ucontext uc; uint8_t info[128]; };

#define K_UC_FP_XSTATE 1
#define K_UC_SIGCONTEXT_SS 2
#define K_UC_STRICT_RESTORE_SS 4
#define MAGIC1 0x46505853u
#define MAGIC2 0x46505845u
#define SW_BYTES 464            /* the software-reserved bytes of the FXSAVE area */

int inject_mem(pid_t pid, uintptr_t at, void *buf, size_t n, int write)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
    int fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t done = write ? pwrite(fd, buf, n, (off_t)at) : pread(fd, buf, n, (off_t)at);
    close(fd);
    return done == (ssize_t)n ? 0 : -1;
}

/* The registers as the thread is to go on: a system call it was
 * interrupted in made again (the kernel's restart, which rt_sigreturn
 * does not do: it sets orig_rax to -1), a sleep's remainder excepted
 * (EINTR: its restart block is gone by then). */
static void machine_context(const struct user_regs_struct *r, struct k_sigcontext *mc)
{
    uint64_t v[] = { r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rdi, r->rsi,
                     r->rbp, r->rbx, r->rdx, r->rax, r->rcx, r->rsp, r->rip, r->eflags };
    memcpy(mc, v, sizeof v);
    mc->cs = (uint16_t)r->cs;
    mc->ss = (uint16_t)r->ss;
    long rc = (long)r->rax;
    if ((long)r->orig_rax >= 0 && (rc == -512 || rc == -513 || rc == -514)) {
        mc->ax = r->orig_rax;           /* -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND */
        mc->ip -= 2;
    } else if ((long)r->orig_rax >= 0 && rc == -516) {
        mc->ax = (uint64_t)-EINTR;      /* -ERESTART_RESTARTBLOCK */
    }
}

/* The return code: the result kept in rdi, rt_sigreturn (mpquery stops
 * at it and makes it getpid), errno written back, rt_sigreturn. */
static int write_code(struct inject *in)
{
    uint64_t errno_at = in->errno_addr ? in->errno_addr : in->area;
    uint32_t value = (uint32_t)in->errno_value;
    uint8_t code[64] = { 0x48, 0x89, 0xc7, 0xb8, 15, 0, 0, 0, 0x0f, 0x05, 0x48, 0xba };
    memcpy(code + 12, &errno_at, 8);
    code[20] = 0xc7;
    code[21] = 0x02;
    memcpy(code + 22, &value, 4);
    static const uint8_t tail[] = { 0xb8, 15, 0, 0, 0, 0x0f, 0x05, 0x0f, 0x0b };
    memcpy(code + 26, tail, sizeof tail);
    return inject_mem(in->pid, in->back, code, 26 + sizeof tail, 1);
}

int inject_write_frame(struct inject *in)
{
    uintptr_t top = in->area + INJECT_STACK - INJECT_SCRATCH;
    uintptr_t fp = (top - in->xstate_len - 64) & ~(uintptr_t)63;
    in->frame = ((fp - sizeof(struct k_frame)) & ~(uintptr_t)15) - 8;   /* at a call: 16-byte boundary + 8 */
    in->back = in->area + INJECT_STACK;
    struct k_frame f;
    memset(&f, 0, sizeof f);
    f.pretcode = in->back;
    f.uc.flags = K_UC_FP_XSTATE | K_UC_SIGCONTEXT_SS | K_UC_STRICT_RESTORE_SS;
    memcpy(&f.uc.stack, in->altstack, sizeof f.uc.stack);
    machine_context(&in->regs, &f.uc.mc);
    f.uc.sigmask = in->sigmask;
    if (in->xstate_len >= 576) {
        uint8_t xs[sizeof in->xstate + 4];
        memcpy(xs, in->xstate, in->xstate_len);
        uint64_t xfeatures;
        memcpy(&xfeatures, in->xstate + SW_BYTES, 8);       /* ptrace's: XCR0 there */
        uint32_t sw[12] = { MAGIC1, (uint32_t)in->xstate_len + 4, 0, 0, (uint32_t)in->xstate_len };
        memcpy(sw + 2, &xfeatures, 8);
        memcpy(xs + SW_BYTES, sw, sizeof sw);
        uint32_t magic2 = MAGIC2;
        memcpy(xs + in->xstate_len, &magic2, 4);
        if (inject_mem(in->pid, fp, xs, in->xstate_len + 4, 1)) return -1;
        f.uc.mc.fpstate = fp;
    }
    if (inject_mem(in->pid, in->frame, &f, sizeof f, 1)) return -1;
    return write_code(in);
}
