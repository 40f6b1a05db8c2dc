/* A target of mpquery record --pid under a seccomp filter
 * (tests/recorder/attach_seccomp.sh, issue 41): it allocates in a loop,
 * waiting on stdin; at its end prints "N lines" and exits 3. Never
 * preloaded. The filter, by argv[1]:
 *   openat  (or none) kills the process on openat;
 *   docker  like Docker's default profile: the architecture checked, an
 *           allowlist (what the program, the loader, an attach and a
 *           session call), clone3 failing with ENOSYS (glibc falls back to
 *           clone), clone failing with EPERM for a new namespace, every
 *           other call (ptrace, kexec_load...) killing the process;
 *   errno   mmap of executable memory (PROT_EXEC) failing with EPERM.
 * With "docker" it also starts a second thread, which sleeps (clone3's
 * ENOSYS: glibc's pthread_create falls back to clone), and at the line
 * "alloc" makes exactly 1000 blocks of 48 bytes, kept until the line
 * "free", then freed. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define ARG_LO(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define NEW_NAMESPACES (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
                        CLONE_NEWCGROUP)

static const int allowed[] = {
    SYS_read, SYS_write, SYS_close, SYS_poll, SYS_ppoll, SYS_lseek, SYS_fstat, SYS_newfstatat, SYS_brk, SYS_mmap,
    SYS_munmap, SYS_mprotect, SYS_mremap, SYS_madvise, SYS_mincore, SYS_exit, SYS_exit_group, SYS_getpid,
    SYS_getppid, SYS_gettid, SYS_geteuid, SYS_getuid, SYS_uname, SYS_sysinfo, SYS_prlimit64, SYS_clock_gettime,
    SYS_clock_nanosleep, SYS_nanosleep, SYS_restart_syscall, SYS_rt_sigreturn, SYS_rt_sigprocmask,
    SYS_rt_sigaction, SYS_rt_sigpending, SYS_sigaltstack, SYS_futex, SYS_set_robust_list, SYS_rseq,
    SYS_sched_getaffinity, SYS_sched_yield, SYS_prctl, SYS_membarrier, SYS_process_vm_readv, SYS_openat,
    SYS_pread64, SYS_pwrite64, SYS_readlink, SYS_readlinkat, SYS_getcwd, SYS_fcntl, SYS_fdatasync, SYS_fsync,
    SYS_fchown, SYS_link, SYS_unlink, SYS_rename, SYS_memfd_create, SYS_pipe2, SYS_getrandom, SYS_ioctl,
    SYS_getdents64, SYS_access, SYS_faccessat, SYS_statx, SYS_statfs, SYS_fstatfs, SYS_clone,
};

static int install(struct sock_filter *code, size_t n)
{
    struct sock_fprog prog = { (unsigned short)n, code };
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static int docker_like(void)
{
    enum { N = sizeof allowed / sizeof allowed[0] };
    struct sock_filter code[N + 16], *c = code;
    *c++ = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    *c++ = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    *c++ = (struct sock_filter)RET(SECCOMP_RET_KILL_PROCESS);
    *c++ = (struct sock_filter)NR;
    *c++ = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
    *c++ = (struct sock_filter)RET(SECCOMP_RET_ERRNO | ENOSYS);
    *c++ = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4);
    *c++ = (struct sock_filter)ARG_LO(0);
    *c++ = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NEW_NAMESPACES, 0, 1);
    *c++ = (struct sock_filter)RET(SECCOMP_RET_ERRNO | EPERM);
    *c++ = (struct sock_filter)NR;
    for (int i = 0; i < N; i++)        /* a match jumps to the ALLOW after the list and the KILL */
        *c++ = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)allowed[i], (unsigned char)(N - i), 0);
    *c++ = (struct sock_filter)RET(SECCOMP_RET_KILL_PROCESS);
    *c++ = (struct sock_filter)RET(SECCOMP_RET_ALLOW);
    return install(code, (size_t)(c - code));
}

static int filter(const char *mode)
{
    if (mode && !strcmp(mode, "docker")) return docker_like();
    if (mode && !strcmp(mode, "errno")) {
        struct sock_filter code[] = {
            NR,
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 3),
            ARG_LO(2),
            BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
            RET(SECCOMP_RET_ERRNO | EPERM),
            RET(SECCOMP_RET_ALLOW),
        };
        return install(code, sizeof code / sizeof code[0]);
    }
    struct sock_filter code[] = {
        NR,
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
        RET(SECCOMP_RET_KILL_PROCESS),
        RET(SECCOMP_RET_ALLOW),
    };
    return install(code, sizeof code / sizeof code[0]);
}

static void *kept[1000];

static void *sleeper(void *arg)
{
    for (;;) poll(NULL, 0, 100);
    return arg;
}

/* the blocks of "alloc", freed at "free" */
static void keep_blocks(void)
{
    for (int i = 0; i < 1000; i++) kept[i] = malloc(48);
}

static void free_blocks(void)
{
    for (int i = 0; i < 1000; i++) free(kept[i]);
}

int main(int argc, char **argv)
{
    int docker = argc > 1 && !strcmp(argv[1], "docker");
    if (filter(argc > 1 ? argv[1] : NULL)) return 2;
    pthread_t t;
    if (docker && pthread_create(&t, NULL, sleeper, NULL)) return 4;
    char line[256];
    unsigned long lines = 0;
    void *p = NULL;
    for (;;) {
        free(p);
        p = malloc(100 + lines % 100);
        struct pollfd fd = { 0, POLLIN, 0 };
        if (poll(&fd, 1, 10) <= 0) continue;
        if (!fgets(line, sizeof line, stdin)) break;
        lines++;
        if (docker && !strcmp(line, "alloc\n")) keep_blocks();
        if (docker && !strcmp(line, "free\n")) free_blocks();
    }
    free(p);
    printf("%lu lines\n", lines);
    return 3;
}
