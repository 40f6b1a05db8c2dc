/* record --pid's seccomp check (mpquery/seccomp_check.c) on hand-written
 * classic-BPF programs: its interpreter (loads of seccomp_data's words,
 * the arguments' halves, ALU, memory, jumps, RET K and RET A; programs
 * seccomp would refuse: unaligned or out-of-bounds loads, byte loads, a
 * jump past the end, no RET), the kernel's combination of filters (the
 * most restrictive action, the newer filter's on a tie), which results
 * let a call pass (ALLOW, LOG, clone3's ENOSYS), and the calls listed
 * (seccomp_calls.c) with the flags the library passes. */
#define _GNU_SOURCE
#include "seccomp_check.c"
#include "seccomp_calls.c"
#include "check.h"

#include <sys/mman.h>
#include <sys/syscall.h>

/* attach.c's, which the check calls (not run here) */
void status_field(pid_t pid, const char *name, char *out, size_t size)
{
    (void)pid, (void)name;
    snprintf(out, size, "0");
}

static uint32_t run(const struct sock_filter *p, size_t n, int nr, uint64_t arg0, uint64_t arg2)
{
    struct seccomp_data d = { .nr = nr, .arch = AUDIT_ARCH_X86_64, .args = { arg0, 0, arg2 } };
    uint32_t r = 0xdeadbeef;
    CHECK(seccomp_run(p, n, &d, &r) == 0);
    return r;
}

#define N(p) (sizeof p / sizeof p[0])
#define LD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))

static void test_programs(void)
{
    struct sock_filter kill_openat[] = {
        LD(nr), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
        RET(SECCOMP_RET_KILL_PROCESS), RET(SECCOMP_RET_ALLOW),
    };
    CHECK_EQ(run(kill_openat, N(kill_openat), SYS_openat, 0, 0), SECCOMP_RET_KILL_PROCESS);
    CHECK_EQ(run(kill_openat, N(kill_openat), SYS_read, 0, 0), SECCOMP_RET_ALLOW);
    printf("ok: a filter killing on openat kills openat, allows read\n");
    /* the architecture, then mmap's prot (args[2]'s low half) tested */
    struct sock_filter exec[] = {
        LD(arch), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0), RET(SECCOMP_RET_KILL_PROCESS),
        LD(nr), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 3),
        LD(args[2]), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
        RET(SECCOMP_RET_ERRNO | EPERM), RET(SECCOMP_RET_ALLOW),
    };
    CHECK_EQ(run(exec, N(exec), SYS_mmap, 0, PROT_READ | PROT_EXEC), SECCOMP_RET_ERRNO | EPERM);
    CHECK_EQ(run(exec, N(exec), SYS_mmap, 0, PROT_READ | PROT_WRITE), SECCOMP_RET_ALLOW);
    CHECK_EQ(run(exec, N(exec), SYS_mprotect, 0, PROT_READ | PROT_EXEC), SECCOMP_RET_ALLOW);
    struct seccomp_data i386 = { .nr = SYS_read, .arch = AUDIT_ARCH_I386 };
    uint32_t r;
    CHECK(seccomp_run(exec, N(exec), &i386, &r) == 0 && r == SECCOMP_RET_KILL_PROCESS);
    printf("ok: arguments and the architecture tested: mmap PROT_EXEC fails, PROT_WRITE passes, i386 killed\n");
    /* A = nr & 0xff, kept in M[3]; X = args[0]'s high half (offset 20); A = X + M[3], returned */
    struct sock_filter alu[] = {
        LD(nr), BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff), BPF_STMT(BPF_ST, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 20), BPF_STMT(BPF_MISC | BPF_TAX, 0),
        BPF_STMT(BPF_LD | BPF_MEM, 3), BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0),
        BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 4), BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 4),
        BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 1000, 1, 0), BPF_STMT(BPF_RET | BPF_A, 0),
        RET(SECCOMP_RET_TRAP),
    };
    CHECK_EQ(run(alu, N(alu), 0x1234, 7ull << 32, 0), 0x34 + 7);
    CHECK_EQ(run(alu, N(alu), 1, 5000ull << 32, 0), SECCOMP_RET_TRAP);
    printf("ok: loads of the high half, AND, ADD, shifts, memory, TAX, JGT, RET A\n");
    /* A / X with X = 0: the program returns 0 (KILL_THREAD) */
    struct sock_filter div[] = {
        BPF_STMT(BPF_LD | BPF_IMM, 10), BPF_STMT(BPF_LDX | BPF_IMM, 0),
        BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0), RET(SECCOMP_RET_ALLOW),
    };
    CHECK_EQ(run(div, N(div), 0, 0, 0), 0);
    printf("ok: a division by X = 0 returns 0\n");
}

static void test_refused(void)
{
    struct seccomp_data d = { .nr = 1, .arch = AUDIT_ARCH_X86_64 };
    uint32_t r;
    struct sock_filter unaligned[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), RET(0) };
    struct sock_filter beyond[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), RET(0) };
    struct sock_filter byte[] = { BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0), RET(0) };
    struct sock_filter no_ret[] = { LD(nr), BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1) };
    struct sock_filter past_end[] = { LD(nr), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 5, 0), RET(0) };
    struct sock_filter mem[] = { BPF_STMT(BPF_ST, 16), RET(0) };
    struct sock_filter div0[] = { BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), RET(0) };
    CHECK(seccomp_run(unaligned, N(unaligned), &d, &r) == -1);
    CHECK(seccomp_run(beyond, N(beyond), &d, &r) == -1);
    CHECK(seccomp_run(byte, N(byte), &d, &r) == -1);
    CHECK(seccomp_run(no_ret, N(no_ret), &d, &r) == -1);
    CHECK(seccomp_run(past_end, N(past_end), &d, &r) == -1);
    CHECK(seccomp_run(mem, N(mem), &d, &r) == -1);
    CHECK(seccomp_run(div0, N(div0), &d, &r) == -1);
    printf("ok: unaligned, out-of-bounds and byte loads, no RET, a jump past the end, M[16], / 0 refused\n");
}

static void test_combine(void)
{
    static const uint32_t order[] = {
        SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD, SECCOMP_RET_TRAP, SECCOMP_RET_ERRNO | 1,
        SECCOMP_RET_USER_NOTIF, SECCOMP_RET_TRACE, SECCOMP_RET_LOG, SECCOMP_RET_ALLOW,
    };
    for (size_t i = 0; i < N(order); i++)
        for (size_t j = 0; j < N(order); j++) {
            uint32_t stricter = order[i < j ? i : j];
            CHECK_EQ(seccomp_combine(order[i], order[j]), stricter);
        }
    CHECK_EQ(seccomp_combine(SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_ERRNO | ENOSYS), SECCOMP_RET_ERRNO | EPERM);
    printf("ok: KILL_PROCESS > KILL_THREAD > TRAP > ERRNO > USER_NOTIF > TRACE > LOG > ALLOW; the newer on a tie\n");
    struct seccomp_call calls[] = { { "read", SYS_read, { 0 } }, { "clone3", SYS_clone3, { 0 } },
                                    { "openat", SYS_openat, { 0 } } };
    uint32_t pass[] = { SECCOMP_RET_LOG, SECCOMP_RET_ERRNO | ENOSYS, SECCOMP_RET_ALLOW };
    CHECK(seccomp_first_refused(calls, pass, 3) == -1);
    uint32_t clone3_eperm[] = { SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_KILL_PROCESS };
    CHECK(seccomp_first_refused(calls, clone3_eperm, 3) == 1);
    uint32_t traced[] = { SECCOMP_RET_TRACE, SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW };
    CHECK(seccomp_first_refused(calls, traced, 3) == 0);
    printf("ok: LOG and clone3's ENOSYS pass; clone3's EPERM and TRACE refused\n");
}

/* the list: openat, mmap of code, clone with pthread_create's flags */
static void test_needed(void)
{
    int openat = 0, mmap_exec = 0, clone_thread = 0;
    for (size_t i = 0; i < seccomp_nneeded; i++) {
        const struct seccomp_call *c = &seccomp_needed[i];
        openat |= c->nr == SYS_openat && !strcmp(c->name, "openat");
        mmap_exec |= c->nr == SYS_mmap && (c->args[2] & PROT_EXEC);
        clone_thread |= c->nr == SYS_clone && (c->args[0] & CLONE_THREAD) && (c->args[0] & CLONE_VM);
    }
    CHECK(openat && mmap_exec && clone_thread);
    printf("ok: the calls listed include openat, mmap PROT_EXEC, clone CLONE_VM|CLONE_THREAD (%zu calls)\n",
           seccomp_nneeded);
}

int main(void)
{
    test_programs();
    test_refused();
    test_combine();
    test_needed();
    return 0;
}
