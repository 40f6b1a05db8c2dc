/* A counting interposer (LD_PRELOAD=build/tests/libcount.so), the third
 * witness of tests/recorder/isolation.sh beside valgrind and the recorder:
 * the malloc family's calls, bytes and frees, as memcheck counts them
 * (realloc: one allocation, and a free when it had a block), written on
 * stderr at exit as "count: CALLS allocs, FREES frees, BYTES bytes". It
 * forwards to glibc's own entry points (no dlsym: no allocation of its own). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void __libc_free(void *);

static atomic_ulong calls, frees, bytes;

static void *counted(void *p, size_t size)
{
    if (p) atomic_fetch_add(&calls, 1), atomic_fetch_add(&bytes, size);
    return p;
}

void *malloc(size_t n) { return counted(__libc_malloc(n), n); }
void *calloc(size_t n, size_t s) { return counted(__libc_calloc(n, s), n * s); }
void *memalign(size_t a, size_t n) { return counted(__libc_memalign(a, n), n); }
void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
void *valloc(size_t n) { return memalign(4096, n); }

void free(void *p)
{
    if (p) atomic_fetch_add(&frees, 1);
    __libc_free(p);
}

void *realloc(void *p, size_t n)
{
    if (p && !n) {
        free(p);
        return NULL;
    }
    void *q = __libc_realloc(p, n);
    if (q && p) atomic_fetch_add(&frees, 1);
    return counted(q, n);
}

void *reallocarray(void *p, size_t n, size_t s) { return realloc(p, n * s); }
void *pvalloc(size_t n) { return memalign(4096, (n + 4095) & ~(size_t)4095); }

int posix_memalign(void **out, size_t a, size_t n)
{
    void *p = memalign(a, n);
    if (!p) return 12;
    *out = p;
    return 0;
}

__attribute__((destructor(101))) static void report(void)
{
    char line[128];
    int len = snprintf(line, sizeof line, "count: %lu allocs, %lu frees, %lu bytes\n",
                       atomic_load(&calls), atomic_load(&frees), atomic_load(&bytes));
    if (write(2, line, (size_t)len) < 0) return;
}
