/* The system calls an attach and a recording session make in the process
 * (seccomp_check.c runs the process's filters over them), with the
 * arguments the library passes where a filter may test them (flags,
 * protections, commands); pointers, descriptors and sizes 0. Collected
 * with strace -f of a program that loads libmallocprof.so as an attach
 * does (dlopen, mp_attach, threads allocating, mp_detach) and of a
 * preloaded `mpquery record` of tests/progs/attach_loop.c; the injected
 * calls are inject.c's and inject_call.c's. */
#define _GNU_SOURCE
#include "seccomp_check.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>

#define CALL(name, ...) { #name, SYS_##name, { __VA_ARGS__ } }
#define AT_CWD ((uint64_t)(int64_t)AT_FDCWD)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)
/* glibc's pthread_create: clone3 with these flags, clone where clone3 fails with ENOSYS */
#define THREAD_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | \
                      CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

const struct seccomp_call seccomp_needed[] = {
    /* the attach: a thread stopped (a sleep it was in resumed after), the
     * area mapped, the calls made and returned from, the area unmapped */
    CALL(restart_syscall),
    CALL(mmap, 0, 0, PROT_READ | PROT_WRITE, ANON | MAP_NORESERVE),
    CALL(sigaltstack),
    CALL(mprotect, 0, 0, PROT_READ | PROT_EXEC),
    CALL(getpid),
    CALL(rt_sigreturn),
    CALL(munmap),
    /* dlopen of the library and of what it needs */
    CALL(openat, AT_CWD, 0, O_RDONLY | O_CLOEXEC),
    CALL(read),
    CALL(pread64),
    CALL(newfstatat, AT_CWD),
    CALL(mmap, 0, 0, PROT_READ, MAP_PRIVATE | MAP_DENYWRITE),
    CALL(mmap, 0, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED | MAP_DENYWRITE),
    CALL(mmap, 0, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_DENYWRITE),
    CALL(mmap, 0, 0, PROT_READ | PROT_WRITE, ANON | MAP_FIXED),
    CALL(mprotect, 0, 0, PROT_READ),
    CALL(mprotect, 0, 0, PROT_NONE),
    CALL(close),
    CALL(memfd_create, 0, MFD_CLOEXEC),
    CALL(pipe2, 0, O_NONBLOCK | O_CLOEXEC),
    CALL(write),
    /* the session: its background thread, the recorder's memory */
    CALL(clone3),
    CALL(clone, THREAD_FLAGS),
    CALL(set_robust_list),
    CALL(rseq),
    CALL(rt_sigprocmask),
    CALL(prctl, PR_SET_NAME),
    CALL(sched_getaffinity),
    CALL(gettid),
    CALL(futex, 0, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME),
    CALL(futex, 0, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME),
    CALL(futex, 0, FUTEX_WAIT_PRIVATE),
    CALL(futex, 0, FUTEX_WAKE_PRIVATE),
    CALL(mmap, 0, 0, PROT_READ | PROT_WRITE, ANON),
    CALL(mmap, 0, 0, PROT_NONE, ANON | MAP_NORESERVE),
    CALL(mmap, 0, 0, PROT_NONE, ANON | MAP_STACK),
    CALL(mmap, 0, 0, PROT_READ | PROT_WRITE, ANON | MAP_NORESERVE | MAP_STACK),
    CALL(mmap, 0, 0, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS),
    CALL(mmap, 0, 0, PROT_READ, MAP_PRIVATE),
    CALL(mmap, 0, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE),
    CALL(mprotect, 0, 0, PROT_READ | PROT_WRITE),
    CALL(mremap, 0, 0, 0, MREMAP_MAYMOVE),
    CALL(madvise, 0, 0, MADV_DONTFORK),
    CALL(madvise, 0, 0, MADV_DONTNEED),
    CALL(madvise, 0, 0, MADV_WIPEONFORK),
    CALL(mincore),
    CALL(brk),
    CALL(membarrier, MEMBARRIER_CMD_QUERY),
    CALL(membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED),
    CALL(process_vm_readv),
    CALL(prlimit64),
    CALL(statfs),                   /* MP_NEAR_LIMIT: where the memory cgroup is mounted */
    CALL(getrandom, 0, 0, GRND_NONBLOCK),  /* the profiler's heap: its tag's secret */
    CALL(getpid),
    CALL(getppid),
    CALL(geteuid),
    CALL(uname),
    CALL(sysinfo),
    CALL(clock_gettime),
    CALL(clock_nanosleep),
    CALL(rt_sigpending),
    CALL(rt_sigaction),
    CALL(exit),
    /* the files: /proc's, the symbols', the profile database's */
    CALL(openat, AT_CWD, 0, O_RDONLY),
    CALL(openat, AT_CWD, 0, O_RDONLY | O_NOCTTY | O_CLOEXEC),
    CALL(openat, AT_CWD, 0, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC),
    CALL(openat, AT_CWD, 0, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC),
    CALL(openat, AT_CWD, 0, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_DIRECTORY),
    CALL(openat, AT_CWD, 0, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_DIRECTORY),
    CALL(openat, AT_CWD, 0, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC),
    CALL(openat, AT_CWD, 0, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC),
    CALL(readlink),
    CALL(readlinkat, AT_CWD),
    CALL(getcwd),
    CALL(fcntl, 0, F_DUPFD_CLOEXEC),
    CALL(fcntl, 0, F_GETFD),
    CALL(fcntl, 0, F_SETLK),
    CALL(pwrite64),
    CALL(fdatasync),
    CALL(fchown),
    CALL(link),
    CALL(unlink),
};
const size_t seccomp_nneeded = sizeof seccomp_needed / sizeof seccomp_needed[0];
