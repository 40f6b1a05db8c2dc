/* The process as the layers below process/ read it: the clock, its
 * identity (pid, parent, run token, start, how it ended), whether it is
 * initialized or attached, the thread's guard state (mp_tls, base.h), a
 * loaded object's address range, and system calls made without libc.
 * process/ sets the values (init, fork, the end, attach); nothing here
 * calls up. */
#define _GNU_SOURCE
#include "base.h"

#include <errno.h>
#include <unistd.h>
#include <string.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <time.h>

MP_TLS struct mp_tls mp_tls;
_Atomic int mp_initialized;
_Atomic unsigned long mp_background;
double (*mp_tick_hook)(double now, int overdue);
pid_t mp_pid, mp_ppid;
char mp_run_token[64];
double mp_start_time;
char mp_ended[32];
int mp_attach_mode;

double mp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The system call itself: no cancellation point, no libc wrapper that
 * another hook (clone.c's syscall) would see; errno set as syscall(2)'s. */
long mp_raw_syscall(long n, long a, long b, long c, long d, long e, long f)
{
    register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    if ((unsigned long)ret > -4096UL) {
        errno = (int)-ret;
        return -1;
    }
    return ret;
}

/* The lowest and highest addresses of a loaded object's PT_LOAD segments. */
void object_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX, *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < *lo) *lo = a;
        if (a + ph->p_memsz > *hi) *hi = a + ph->p_memsz;
    }
}

/* fn(line, arg) for each line of the file at path, read in pieces into
 * buf (size bytes; a line longer than that is skipped), until fn returns
 * nonzero. Plain system calls: no malloc, no stdio (it runs inside malloc,
 * for an unwind rule, and at init). -1 if the file cannot be opened. */
int mp_each_line(const char *path, char *buf, size_t size, int (*fn)(char *line, void *arg), void *arg)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t have = 0;
    int skipping = 0, done = 0;
    ssize_t n;
    while (!done && (n = read(fd, buf + have, size - 1 - have)) > 0) {
        have += (size_t)n;
        char *start = buf, *nl;
        while (!done && (nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
            *nl = 0;
            done = !skipping && fn(start, arg);
            skipping = 0;
            start = nl + 1;
        }
        have -= (size_t)(start - buf);
        memmove(buf, start, have);
        if (have == size - 1) have = 0, skipping = 1;
    }
    close(fd);
    return 0;
}
