/* libmallocprof_ns.so: the first object of the profiler's own link-map
 * namespace (ns.c dlmopens it), which brings libdw, libelf and libunwind
 * (and their libz, liblzma, libbz2, a libc of their own) there, out of the
 * program's: the program's dlopen of the same library loads it, and its
 * symbols never bind to ours. First in the namespace's lookup order, it
 * gives the namespace the recorder's allocator (blocks the recorder frees,
 * as dwarf_cfi_addrframe's, and its guard), the program's modules for
 * dl_iterate_phdr (libunwind unwinds the program's frames), and moves
 * libunwind's pipe above the program's descriptors, and its thread key
 * from the program's libc, its error() and exit() the recorder's (ns.h).
 * Until mp_ns_init,
 * allocations (the namespace's constructors) come from a static buffer and
 * are never freed. */
#define _GNU_SOURCE
#include "ns.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static const struct mp_ns_host *host;

/* ------------------------------------------------------------ before init */

#define EARLY_SIZE (256 * 1024)
#define EARLY_ALIGN 16
static _Alignas(EARLY_ALIGN) char early[EARLY_SIZE];
static size_t early_used;      /* under the loader's lock: constructors run one at a time */

static int is_early(const void *p)
{
    return (const char *)p >= early && (const char *)p < early + EARLY_SIZE;
}

static size_t early_size(const void *p)
{
    return *(const size_t *)((const char *)p - EARLY_ALIGN);
}

static void *early_alloc(size_t size, size_t align)
{
    if (align < EARLY_ALIGN) align = EARLY_ALIGN;
    if (align > 4096 || size > EARLY_SIZE) return errno = ENOMEM, NULL;
    size_t at = (early_used + EARLY_ALIGN + align - 1) & ~(align - 1);
    if (at + size > EARLY_SIZE) return errno = ENOMEM, NULL;
    *(size_t *)(early + at - EARLY_ALIGN) = size;
    early_used = at + size;
    return early + at;
}

/* ------------------------------------------------------------ the allocator */

EXPORT void *malloc(size_t size)
{
    return host ? host->malloc(size) : early_alloc(size, EARLY_ALIGN);
}

EXPORT void free(void *p)
{
    if (p && !is_early(p) && host) host->free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
    if (host) return host->calloc(n, size);
    if (size && n > SIZE_MAX / size) return errno = ENOMEM, NULL;
    return early_alloc(n * size, EARLY_ALIGN);       /* the buffer is zeroed, never reused */
}

EXPORT void *realloc(void *p, size_t size)
{
    if (!p || !is_early(p)) return host ? host->realloc(p, size) : early_alloc(size, EARLY_ALIGN);
    void *q = malloc(size);
    if (q) memcpy(q, p, early_size(p) < size ? early_size(p) : size);
    return q;
}

EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return errno = ENOMEM, NULL;
    return realloc(p, n * size);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (host) return host->posix_memalign(out, align, size);
    void *p = early_alloc(size, align);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

EXPORT void *memalign(size_t align, size_t size)
{
    return host ? host->memalign(align, size) : early_alloc(size, align);
}

EXPORT void *aligned_alloc(size_t align, size_t size) { return memalign(align, size); }
EXPORT void *valloc(size_t size) { return memalign(4096, size); }
EXPORT void *pvalloc(size_t size) { return memalign(4096, (size + 4095) & ~(size_t)4095); }

EXPORT size_t malloc_usable_size(void *p)
{
    if (!p) return 0;
    return is_early(p) ? early_size(p) : host ? host->usable_size(p) : 0;
}

/* ------------------------------------------------------------ the rest */

/* This namespace's modules (libunwind's own frames come first in a
 * stack), then the program's: glibc lists the caller's namespace, and the
 * host's function is called from the host's. */
EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    static int (*own)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
    if (!own) own = (int (*)(int (*)(struct dl_phdr_info *, size_t, void *), void *))dlsym(RTLD_NEXT, "dl_iterate_phdr");
    int rc = own ? own(cb, data) : 0;
    return rc || !host ? rc : host->iterate_phdr(cb, data);
}

EXPORT int pipe2(int fds[2], int flags)
{
    static int (*real)(int[2], int);
    if (!real) real = (int (*)(int[2], int))dlsym(RTLD_NEXT, "pipe2");
    if (!real) return errno = ENOSYS, -1;
    int rc = real(fds, flags);
    if (rc == 0 && host) {
        int saved = errno;
        fds[0] = host->fd_high(fds[0]);
        fds[1] = host->fd_high(fds[1]);
        errno = saved;
    }
    return rc;
}

/* Thread keys: the program's libc's table (before init, nobody asks). */
EXPORT int pthread_key_create(pthread_key_t *key, void (*destroy)(void *))
{
    return host ? host->key_create(key, destroy) : EAGAIN;
}

EXPORT int pthread_key_delete(pthread_key_t key) { return host ? host->key_delete(key) : EINVAL; }
EXPORT void *pthread_getspecific(pthread_key_t key) { return host ? host->getspecific(key) : NULL; }

EXPORT int pthread_setspecific(pthread_key_t key, const void *value)
{
    return host ? host->setspecific(key, (uintptr_t)value) : EINVAL;
}

/* The recorder's error() (it gives up what it was doing, or ends the
 * process as libc's does), the message formatted here. */
EXPORT void error(int status, int errnum, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (host) host->error(status, errnum, "%s", msg);
    else if (status) _exit(status);
}

/* The program's exit (its handlers, the recorder's exit snapshot), not
 * this namespace's libc's. */
EXPORT void exit(int status)
{
    if (host) host->exit(status);
    _exit(status);
}

EXPORT int mp_ns_init(const struct mp_ns_host *h)
{
    if (!h || h->version != MP_NS_VERSION) return -1;
    host = h;
    return 0;
}
