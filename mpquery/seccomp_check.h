/* record --pid under seccomp (seccomp_check.c): the process's filters read
 * with ptrace and run over every system call an attach and a recording
 * session make; attached only when all of them pass. x86-64 only. */
#ifndef MPQ_SECCOMP_CHECK_H
#define MPQ_SECCOMP_CHECK_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A system call as the filters see it: the arguments the library really
 * passes where a filter may test them (clone's flags, mmap's prot). */
struct seccomp_call {
    const char *name;
    int nr;
    uint64_t args[6];
};

/* Runs a classic-BPF seccomp program (n instructions) over d: 0 and its
 * return value in *ret, or -1 when it is not a program seccomp accepts
 * (an instruction it refuses, a jump or load out of bounds). */
int seccomp_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *d, uint32_t *ret);
/* Of two filters' return values, the one the kernel acts on: the most
 * restrictive action (KILL_PROCESS > KILL_THREAD > TRAP > ERRNO >
 * USER_NOTIF > TRACE > LOG > ALLOW); a, the newer filter's, on a tie. */
uint32_t seccomp_combine(uint32_t a, uint32_t b);
/* What ret does to a call (an unknown action: the kernel kills). */
const char *seccomp_action_name(uint32_t ret);
/* The first of calls[n] that ret[] does not let pass (ALLOW, LOG, and
 * clone3's ENOSYS, on which glibc falls back to clone): its index, or -1. */
int seccomp_first_refused(const struct seccomp_call *calls, const uint32_t *ret, size_t n);

/* The calls an attach and a session make. */
extern const struct seccomp_call seccomp_needed[];
extern const size_t seccomp_nneeded;

/* 0 when no thread of pid runs under seccomp, or each one's filters let
 * every needed call pass; else the exit code, said in one line. */
int seccomp_check(pid_t pid, const char *name);

#endif
