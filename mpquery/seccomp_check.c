/* record --pid under seccomp (issue 41 item 8): a filter that kills on a
 * call the attach makes (openat, mmap of code...) would kill the process.
 * As root (CAP_SYS_ADMIN), each thread's filters are read with
 * PTRACE_SECCOMP_GET_FILTER (the thread seized and interrupted a moment,
 * then let go) and run here over every system call an attach and a
 * session make (seccomp_calls.c), with the arguments the library passes
 * where a filter may test them; the kernel's combination over a thread's
 * filters (the most restrictive action) decides. Attached only when every
 * call passes; otherwise, or when the filters cannot be read (not root,
 * strict mode), one line says why. */
#define _GNU_SOURCE
#include "mpquery.h"
#include "attach_session.h"
#include "seccomp_check.h"

#include <dirent.h>
#include <errno.h>
#include <linux/audit.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif
#define MAX_INSNS 4096          /* BPF_MAXINSNS */

/* ------------------------------------------------------------ the program */

static uint32_t alu(uint16_t op, uint32_t a, uint32_t v, int *fail)
{
    switch (op) {
    case BPF_ADD: return a + v;
    case BPF_SUB: return a - v;
    case BPF_MUL: return a * v;
    case BPF_DIV: if (!v) *fail = 1; return v ? a / v : 0;
    case BPF_MOD: if (!v) *fail = 1; return v ? a % v : 0;
    case BPF_OR: return a | v;
    case BPF_AND: return a & v;
    case BPF_XOR: return a ^ v;
    case BPF_LSH: return v < 32 ? a << v : 0;
    case BPF_RSH: return v < 32 ? a >> v : 0;
    case BPF_NEG: return -a;
    }
    *fail = -1;
    return 0;
}

static int jump(uint16_t op, uint32_t a, uint32_t v)
{
    switch (op) {
    case BPF_JEQ: return a == v;
    case BPF_JGT: return a > v;
    case BPF_JGE: return a >= v;
    case BPF_JSET: return (a & v) != 0;
    }
    return -1;
}

/* The load and store instructions: 0, or -1 (not seccomp's). */
static int load_store(const struct sock_filter *f, const uint32_t *data, uint32_t *a, uint32_t *x, uint32_t *mem)
{
    uint16_t c = f->code;
    uint32_t k = f->k;
    if (c == (BPF_LD | BPF_W | BPF_ABS)) {
        if (k & 3 || k >= sizeof(struct seccomp_data)) return -1;
        *a = data[k / 4];
    } else if (c == (BPF_LD | BPF_W | BPF_LEN)) *a = sizeof(struct seccomp_data);
    else if (c == (BPF_LDX | BPF_W | BPF_LEN)) *x = sizeof(struct seccomp_data);
    else if (c == (BPF_LD | BPF_IMM)) *a = k;
    else if (c == (BPF_LDX | BPF_IMM)) *x = k;
    else if (c == (BPF_MISC | BPF_TAX)) *x = *a;
    else if (c == (BPF_MISC | BPF_TXA)) *a = *x;
    else if (k >= BPF_MEMWORDS) return -1;
    else if (c == (BPF_LD | BPF_MEM)) *a = mem[k];
    else if (c == (BPF_LDX | BPF_MEM)) *x = mem[k];
    else if (c == BPF_ST) mem[k] = *a;
    else if (c == BPF_STX) mem[k] = *x;
    else return -1;
    return 0;
}

int seccomp_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *d, uint32_t *ret)
{
    uint32_t data[sizeof(struct seccomp_data) / 4], a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
    memcpy(data, d, sizeof data);
    for (size_t pc = 0; pc < n && n <= MAX_INSNS; pc++) {
        const struct sock_filter *f = &prog[pc];
        uint16_t cls = BPF_CLASS(f->code);
        if (cls == BPF_RET) {
            if (f->code != (BPF_RET | BPF_K) && f->code != (BPF_RET | BPF_A)) return -1;
            *ret = BPF_RVAL(f->code) == BPF_A ? a : f->k;
            return 0;
        }
        if (cls == BPF_ALU) {
            int fail = 0;
            uint32_t v = f->code & BPF_X ? x : f->k;
            a = alu(BPF_OP(f->code), a, v, &fail);
            if (fail < 0 || (fail && !(f->code & BPF_X))) return -1;
            if (fail) return *ret = 0, 0;               /* division by X = 0: the program returns 0 */
        } else if (cls == BPF_JMP && BPF_OP(f->code) == BPF_JA) {
            if (f->code != (BPF_JMP | BPF_JA)) return -1;
            pc += f->k;
        } else if (cls == BPF_JMP) {
            int taken = jump(BPF_OP(f->code), a, f->code & BPF_X ? x : f->k);
            if (taken < 0) return -1;
            pc += taken ? f->jt : f->jf;
        } else if (load_store(f, data, &a, &x, mem) != 0) return -1;
    }
    return -1;          /* ran off the end (or out of bounds) */
}

/* The kernel's ranking: the action as a signed number, lowest wins. */
static int32_t rank(uint32_t ret) { return (int32_t)(ret & SECCOMP_RET_ACTION_FULL); }

uint32_t seccomp_combine(uint32_t a, uint32_t b) { return rank(b) < rank(a) ? b : a; }

const char *seccomp_action_name(uint32_t ret)
{
    switch (ret & SECCOMP_RET_ACTION_FULL) {
    case SECCOMP_RET_KILL_PROCESS: return "kill it (SECCOMP_RET_KILL_PROCESS)";
    case SECCOMP_RET_KILL_THREAD: return "kill the thread (SECCOMP_RET_KILL_THREAD)";
    case SECCOMP_RET_TRAP: return "send it SIGSYS (SECCOMP_RET_TRAP)";
    case SECCOMP_RET_ERRNO: return "fail the call (SECCOMP_RET_ERRNO)";
    case SECCOMP_RET_USER_NOTIF: return "hand the call to its supervisor (SECCOMP_RET_USER_NOTIF)";
    case SECCOMP_RET_TRACE: return "fail the call (SECCOMP_RET_TRACE, no seccomp tracer)";
    case SECCOMP_RET_LOG: return "log the call (SECCOMP_RET_LOG)";
    case SECCOMP_RET_ALLOW: return "allow the call";
    }
    return "kill it (an unknown action)";
}

int seccomp_first_refused(const struct seccomp_call *calls, const uint32_t *ret, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t action = ret[i] & SECCOMP_RET_ACTION_FULL;
        if (action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG) continue;
        if (!strcmp(calls[i].name, "clone3") && action == SECCOMP_RET_ERRNO &&
            (ret[i] & SECCOMP_RET_DATA) == ENOSYS) continue;
        return (int)i;
    }
    return -1;
}

/* ------------------------------------------------------------ the process */

/* Each filter of the stopped thread tid run over every needed call, the
 * results combined into ret[]: 0, or -1 and errno (EACCES: not root, or
 * mpquery under seccomp itself; EINVAL: strict mode; EMEDIUMTYPE...). */
static int run_filters(pid_t tid, uint32_t *ret)
{
    static struct sock_filter prog[MAX_INSNS];
    for (size_t i = 0; i < seccomp_nneeded; i++) ret[i] = SECCOMP_RET_ALLOW;
    for (unsigned long index = 0;; index++) {
        long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)index, NULL);
        if (n < 0 && errno == ENOENT && index > 0) return 0;    /* the oldest filter was the last */
        if (n < 0) return -1;
        if (n > MAX_INSNS || ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)index, prog) != n)
            return errno = EMSGSIZE, -1;
        for (size_t i = 0; i < seccomp_nneeded; i++) {
            const struct seccomp_call *c = &seccomp_needed[i];
            struct seccomp_data d = { .nr = c->nr, .arch = AUDIT_ARCH_X86_64 };
            memcpy(d.args, c->args, sizeof d.args);
            uint32_t r;
            if (seccomp_run(prog, (size_t)n, &d, &r) != 0) return errno = ENOEXEC, -1;
            ret[i] = seccomp_combine(ret[i], r);
        }
    }
}

/* tid seized and stopped (any stop: an interrupt's, a signal's), its
 * filters run, let go (a signal it stopped with delivered): 0 or -1 and
 * errno. */
static int thread_filters(pid_t tid, uint32_t *ret)
{
    if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0 || ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0) return -1;
    int st = 0, rc = -1, saved = ETIMEDOUT;
    for (int i = 0; i < 2000; i++) {
        pid_t r = waitpid(tid, &st, __WALL | WNOHANG);
        if (r == tid) { saved = ESRCH; break; }         /* stopped (below), or ended */
        if (r < 0 && errno != EINTR) { saved = errno; break; }
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    if (saved == ESRCH && WIFSTOPPED(st)) {
        rc = run_filters(tid, ret);
        saved = errno;
        int sig = st >> 16 ? 0 : WSTOPSIG(st);          /* a signal-delivery stop: the signal goes on */
        ptrace(PTRACE_DETACH, tid, 0, (void *)(uintptr_t)sig);
    }
    /* not stopped within 2 s: detached when mpquery exits (it refuses) */
    errno = saved;
    return rc;
}

static const char *why_unreadable(int err)
{
    if (err == EACCES) return "reading them needs CAP_SYS_ADMIN, and mpquery under no seccomp filter of its own";
    if (err == EINVAL || err == EIO) return "the kernel cannot show them (PTRACE_SECCOMP_GET_FILTER unsupported)";
    if (err == EMEDIUMTYPE) return "one is not a classic-BPF program";
    if (err == ENOEXEC) return "one is a program mpquery cannot run";
    if (err == EPERM) return "ptrace refused";
    if (err == ETIMEDOUT) return "a thread did not stop within 2 s";
    return strerror(err);
}

/* One thread, its status's Seccomp mode read: 0 or the exit code, said. */
static int check_thread(pid_t pid, pid_t tid, const char *name, uint32_t *ret)
{
    char mode[16];
    status_field(tid, "Seccomp", mode, sizeof mode);        /* /proc/TID/status: the thread's own */
    if (!*mode || atoi(mode) == 0) return 0;
    if (atoi(mode) == 1)
        return error(EXIT_FAILED, "record: process %d (%s) runs in seccomp strict mode (Seccomp: 1 in /proc/%d/"
                     "status): only read, write, exit and sigreturn pass; not attached", (int)pid, name, (int)tid);
    if (geteuid() != 0)
        return error(EXIT_FAILED, "record: process %d (%s) runs under seccomp (Seccomp: %s in /proc/%d/status): "
                     "only root (CAP_SYS_ADMIN) can read its filters to know whether the system calls an attach "
                     "makes pass; not attached", (int)pid, name, mode, (int)tid);
    if (thread_filters(tid, ret) != 0) {
        if (errno == ESRCH) return 0;                   /* the thread ended */
        return error(EXIT_FAILED, "record: process %d (%s) runs under seccomp (Seccomp: %s in /proc/%d/status) and "
                     "its filters cannot be read: %s; not attached", (int)pid, name, mode, (int)tid,
                     why_unreadable(errno));
    }
    int i = seccomp_first_refused(seccomp_needed, ret, seccomp_nneeded);
    if (i < 0) return 0;
    char thread[48] = "";
    if (tid != pid) snprintf(thread, sizeof thread, " (in thread %d)", (int)tid);
    char data[48] = "";
    if ((ret[i] & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO)
        snprintf(data, sizeof data, " with %s", strerrorname_np((int)(ret[i] & SECCOMP_RET_DATA)) ?: "an errno");
    return error(EXIT_FAILED, "record: process %d (%s) runs under a seccomp filter that would %s%s at %s%s; not "
                 "attached", (int)pid, name, seccomp_action_name(ret[i]), data, seccomp_needed[i].name, thread);
}

int seccomp_check(pid_t pid, const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (!dir) return 0;                 /* gone: the attach says so */
    uint32_t *ret = calloc(seccomp_nneeded, sizeof *ret);
    int rc = ret ? 0 : error(EXIT_FAILED, "record: out of memory");
    struct dirent *e;
    while (!rc && (e = readdir(dir)))
        if (e->d_name[0] != '.') rc = check_thread(pid, (pid_t)atoi(e->d_name), name, ret);
    closedir(dir);
    free(ret);
    return rc;
}
