/* Which pages the program wrote since the previous scan, as the kernel
 * knows it. Soft-dirty: bit 55 of /proc/self/pagemap, cleared for the
 * whole process by writing "4" to /proc/self/clear_refs (the next write to
 * each page then faults once to set it again). Kernels built without
 * CONFIG_MEM_SOFT_DIRTY (Firecracker's, some clouds') accept that write and
 * never set the bit; there, userfaultfd's asynchronous write-protection
 * (Linux 6.7) does the same for the ranges registered with it: the
 * PAGEMAP_SCAN ioctl lists the pages written since they were protected and
 * protects them again, atomically. Raw system calls only: no allocation.
 * A VMA is registered with one userfaultfd at most: a program that uses
 * userfaultfd itself (its UFFDIO_API, through ioctl below) gets every
 * range back at once (ours closed) and cold blocks end for good in the
 * process, so that its own registrations and write-protection are never
 * disturbed. */
#define _GNU_SOURCE
#include "cold.h"
#include "hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

/* The ABI of PAGEMAP_SCAN (linux/fs.h, 6.7), for older headers. */
#ifndef PAGEMAP_SCAN
struct page_region { uint64_t start, end, categories; };
struct pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#define PAGE_IS_WRITTEN (1 << 1)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

#define SOFT_DIRTY (1ull << 55)
enum { NONE, SOFTDIRTY, UFFD };
static int source;
static int pagemap = -1;
static int uffd = -1;
/* Held from pages_begin to pages_end with userfaultfd: the program's
 * first UFFDIO_API waits for a scan under way, then takes ours away. */
static pthread_mutex_t uffd_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int program_uffd;        /* the program uses userfaultfd: no more scans */

/* Our own ioctls bypass the hook below. */
static int own_ioctl(int fd, unsigned long req, void *arg)
{
    return (int)mp_raw_syscall(SYS_ioctl, fd, (long)req, (long)arg, 0, 0, 0);
}

/* ------------------------------------------------------------ soft-dirty */

static int clear_refs(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int ok = write(fd, "4", 1) == 1;
    close(fd);
    return ok ? 0 : -1;
}

static int page_soft_dirty(volatile char *page)
{
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    uint64_t e = 0;
    int ok = fd >= 0 && pread(fd, &e, sizeof e, (off_t)((uintptr_t)page / PAGE_SIZE * sizeof e)) == sizeof e;
    if (fd >= 0) close(fd);
    return ok ? !!(e & SOFT_DIRTY) : -1;
}

/* A page written then cleared must read clean, and dirty once written
 * again (a kernel without soft-dirty accepts the clear and never sets the
 * bit); the last clear starts the first interval. */
static int soft_dirty_works(volatile char *page)
{
    page[0] = 1;
    if (clear_refs() || page_soft_dirty(page) != 0) return 0;
    page[0] = 2;
    if (page_soft_dirty(page) != 1) return 0;
    return clear_refs() == 0;
}

static void soft_dirty_read(uintptr_t first, size_t n, uint8_t *written)
{
    static uint64_t e[4096];
    for (size_t done = 0; done < n;) {
        size_t k = n - done < 4096 ? n - done : 4096;
        ssize_t got = pread(pagemap, e, k * sizeof *e, (off_t)((first + done) * sizeof *e));
        size_t m = got > 0 ? (size_t)got / sizeof *e : 0;
        for (size_t i = 0; i < m; i++) written[done + i] = !!(e[i] & SOFT_DIRTY);
        if (m < k) memset(written + done + m, 1, k - m);    /* unreadable: not known cold */
        done += k;
    }
}

/* ------------------------------------------------------------ userfaultfd */

/* The descriptor is still ours: a program that closes every descriptor
 * (a daemon) may have put one of its files there. */
static int uffd_alive(void)
{
    char path[32], link[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", uffd);
    ssize_t n = uffd >= 0 ? readlink(path, link, sizeof link - 1) : -1;
    return n > 0 && (link[n] = 0, strstr(link, "userfaultfd") != NULL);
}

static int uffd_open(void)
{
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (fd < 0) fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED };
    if (own_ioctl(fd, UFFDIO_API, &api)) {
        close(fd);
        return -1;
    }
    uffd = mp_fd_high(fd);      /* kept: above the program's range of descriptors */
    return 0;
}

static int uffd_register(uintptr_t start, uintptr_t end)
{
    struct uffdio_register r = { .range = { start, end - start }, .mode = UFFDIO_REGISTER_MODE_WP };
    return own_ioctl(uffd, UFFDIO_REGISTER, &r);
}

/* The written pages of [start, end) marked, and protected again; -1 when a
 * mapping there is not registered (or the scan fails). */
static int uffd_scan(uintptr_t start, uintptr_t end, uintptr_t first, uint8_t *written)
{
    static struct page_region vec[512];
    while (start < end) {
        struct pm_scan_arg a = {
            .size = sizeof a, .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC, .start = start, .end = end,
            .vec = (uintptr_t)vec, .vec_len = 512, .category_mask = PAGE_IS_WRITTEN, .return_mask = PAGE_IS_WRITTEN,
        };
        long n = own_ioctl(pagemap, PAGEMAP_SCAN, &a);
        if (n < 0) return -1;
        for (long i = 0; i < n; i++)
            memset(written + (vec[i].start / PAGE_SIZE - first), 1, (vec[i].end - vec[i].start) / PAGE_SIZE);
        if (a.walk_end <= start) return -1;
        start = a.walk_end;
    }
    return 0;
}

struct meeting { uintptr_t start, end; };

static int register_line(char *line, void *arg)
{
    const struct meeting *m = arg;
    char *p;
    uintptr_t lo = strtoul(line, &p, 16), hi = *p == '-' ? strtoul(p + 1, &p, 16) : 0;
    if (lo < m->end && hi > m->start && p[0] == ' ' && p[2] == 'w' && p[4] == 'p') uffd_register(lo, hi);
    return 0;
}

/* Every writable private mapping meeting [start, end), registered whole
 * (a part would split it in three). /proc/self/maps, read in pieces. */
static void uffd_register_mappings(uintptr_t start, uintptr_t end)
{
    static char buf[16384];
    struct meeting m = { start, end };
    mp_each_line("/proc/self/maps", buf, sizeof buf, register_line, &m);
}

/* A scan that fails at a mapping not registered (a heap grown since) has
 * protected the pages before it already, their writes lost: the whole run
 * reads as written this time, its mappings registered for the next. */
static void uffd_read(uintptr_t first, size_t n, uint8_t *written)
{
    memset(written, 0, n);
    uintptr_t start = first * PAGE_SIZE, end = (first + n) * PAGE_SIZE;
    if (uffd_scan(start, end, first, written) == 0) return;
    uffd_register_mappings(start, end);
    memset(written, 1, n);
}

/* A page registered and protected must read written only after a write. */
static int uffd_works(volatile char *page)
{
    if (uffd_open()) return 0;
    pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    uint8_t w[1] = { 0 };
    uintptr_t p = (uintptr_t)page / PAGE_SIZE;
    page[0] = 1;
    int ok = pagemap >= 0 && !uffd_register((uintptr_t)page, (uintptr_t)page + PAGE_SIZE) &&
             !uffd_scan((uintptr_t)page, (uintptr_t)page + PAGE_SIZE, p, w) && w[0] == 1 &&
             (w[0] = 0, !uffd_scan((uintptr_t)page, (uintptr_t)page + PAGE_SIZE, p, w)) && w[0] == 0 &&
             (page[0] = 2, !uffd_scan((uintptr_t)page, (uintptr_t)page + PAGE_SIZE, p, w)) && w[0] == 1;
    if (pagemap >= 0) close(pagemap);
    pagemap = -1;
    if (!ok) close(uffd), uffd = -1;
    return ok;
}

/* ------------------------------------------------------------ the interface */

const char *pages_init(void)
{
    char *page = mp_map(PAGE_SIZE, 0);
    if (!page) return NULL;
    source = soft_dirty_works(page) ? SOFTDIRTY : uffd_works(page) ? UFFD : NONE;
    mp_unmap(page, PAGE_SIZE);
    return source == SOFTDIRTY ? "soft-dirty" : source == UFFD ? "userfaultfd" : NULL;
}

/* The child's mappings lost the parent's registrations (no
 * UFFD_FEATURE_EVENT_FORK): it makes its own descriptor. */
void pages_after_fork_child(void)
{
    pthread_mutex_init(&uffd_lock, NULL);       /* a thread gone may have held it */
    if (source == SOFTDIRTY) clear_refs();
    if (source != UFFD) return;
    if (uffd_alive()) close(uffd);
    uffd = -1;
    if (uffd_open()) source = NONE;
}

int pages_begin(void)
{
    int locked = source == UFFD && pthread_mutex_lock(&uffd_lock) == 0;
    if (source == UFFD && !uffd_alive()) {      /* the program closed it: not ours to close again */
        uffd = -1;
        if (uffd_open()) source = NONE;         /* its mappings are registered anew */
    }
    if (source != NONE) pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (source != NONE && pagemap >= 0) return 0;
    if (locked) pthread_mutex_unlock(&uffd_lock);
    return -1;
}

void pages_written(uintptr_t first_page, size_t n, uint8_t *written)
{
    if (source == SOFTDIRTY) soft_dirty_read(first_page, n, written);
    else uffd_read(first_page, n, written);
}

/* Soft-dirty: the next interval starts now, for the whole process (the
 * profiler's own pages too: they are no program block). */
void pages_end(void)
{
    close(pagemap);
    pagemap = -1;
    if (source == SOFTDIRTY) clear_refs();
    else pthread_mutex_unlock(&uffd_lock);     /* UFFD: taken by pages_begin, kept (program_uses_uffd waits) */
}

/* The program's first UFFDIO_API: ours closed (the kernel unregisters
 * every range of it then), no scan from now on. */
static void program_uses_uffd(void)
{
    if (atomic_exchange(&program_uffd, 1) || source != UFFD) return;
    pthread_mutex_lock(&uffd_lock);
    if (uffd_alive()) mp_raw_syscall(SYS_close, uffd, 0, 0, 0, 0, 0);
    uffd = -1;
    source = NONE;
    pthread_mutex_unlock(&uffd_lock);
    mp_log("warning", "MP_COLD=1: the program uses userfaultfd itself: the profiler's write-protection is "
           "withdrawn, no cold blocks from now on (memcold and coldage 0)");
}

/* ioctl() itself is the stub below: any request but UFFDIO_API goes on
 * to libc's with its registers untouched (a compare and a jump);
 * UFFDIO_API (and every call until libc's is known) to ioctl_slow. */
int (*ioctl_next)(int, unsigned long, ...) __attribute__((visibility("hidden")));
_Static_assert(UFFDIO_API == 0xc018aa3f, "UFFDIO_API as the stub compares it");
__asm__(".text\n.globl ioctl\n.type ioctl, @function\nioctl:\n"
        "    endbr64\n"
        "    movl $0xc018aa3f, %r11d\n    cmpq %r11, %rsi\n    je 1f\n"
        "    movq ioctl_next(%rip), %r11\n    testq %r11, %r11\n    je 1f\n"
        "    jmp *%r11\n"
        "1:  jmp ioctl_slow\n"
        ".size ioctl, .-ioctl\n");

__attribute__((visibility("hidden"), used)) int ioctl_slow(int fd, unsigned long req, ...)
{
    va_list ap;
    va_start(ap, req);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (!ioctl_next && mp_next.ioctl) ioctl_next = mp_next.ioctl;
    if (req == UFFDIO_API) program_uses_uffd();
    return mp_next.ioctl ? mp_next.ioctl(fd, req, arg) : own_ioctl(fd, req, arg);
}
