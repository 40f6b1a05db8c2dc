/* A program that uses userfaultfd itself (tests/recorder/cold_uffd_program.sh):
 * a 4 MiB malloc'd buffer written once, left alone for 1 s (snapshots
 * meanwhile under MP_INTERVAL: with MP_COLD=1 the profiler's scans
 * write-protect it through a userfaultfd of their own), then one page of
 * it registered with the program's own userfaultfd (missing pages),
 * dropped, and filled by its handler thread (UFFDIO_COPY) when read.
 * Prints each step's outcome; exit 0 when all went as the kernel says. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int uffd;
static char fill[4096] __attribute__((aligned(4096)));

static void *handler(void *arg)
{
    (void)arg;
    struct pollfd p = { .fd = uffd, .events = POLLIN };
    struct uffd_msg m;
    if (poll(&p, 1, 5000) != 1 || read(uffd, &m, sizeof m) != sizeof m || m.event != UFFD_EVENT_PAGEFAULT) return "no fault";
    struct uffdio_copy c = { .dst = m.arg.pagefault.address & ~4095ull, .src = (uintptr_t)fill, .len = 4096 };
    return ioctl(uffd, UFFDIO_COPY, &c) ? "copy failed" : NULL;
}

static const char *result(int rc) { return rc ? strerror(errno) : "ok"; }

int main(void)
{
    size_t n = 4 << 20;
    char *buf = malloc(n);
    if (!buf) return 2;
    memset(buf, 1, n);
    usleep(1000000);
    uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
    struct uffdio_api api = { .api = UFFD_API };
    if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
        printf("userfaultfd: %s\n", strerror(errno));
        return 3;
    }
    char *page = (char *)(((uintptr_t)buf + 8191) & ~(uintptr_t)4095);
    struct uffdio_register r = { .range = { (uintptr_t)page, 4096 }, .mode = UFFDIO_REGISTER_MODE_MISSING };
    int rc = ioctl(uffd, UFFDIO_REGISTER, &r);
    printf("register: %s\n", result(rc));
    if (rc) return 1;
    memset(fill, 'z', sizeof fill);
    madvise(page, 4096, MADV_DONTNEED);
    pthread_t t;
    pthread_create(&t, NULL, handler, NULL);
    char seen = page[100];          /* the fault, served by the handler */
    void *err;
    pthread_join(t, &err);
    printf("handler: %s, read: %c\n", err ? (char *)err : "ok", seen);
    struct uffdio_range u = { (uintptr_t)page, 4096 };
    printf("unregister: %s\n", result(ioctl(uffd, UFFDIO_UNREGISTER, &u)));
    free(buf);
    return seen == 'z' && !err ? 0 : 1;
}
