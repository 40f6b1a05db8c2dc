/* The profiler's libraries in a link-map namespace of their own (ns.c, the
 * loader; ns_shim.c, libmallocprof_ns.so, the first object there): what the
 * recorder hands the shim. The namespace's allocations are the recorder's
 * own (the profiler's heap, ownheap.c: ns.c hands over the wrapped malloc family), its
 * dl_iterate_phdr lists the program's modules too (libunwind's unwinding), its
 * pipes go above the program's descriptors (fds.c), its thread keys are
 * the program's libc's (the namespace's libc has a table of its own, and
 * both would hand out the same numbers for one slot in the thread), its
 * error() and exit() are the recorder's (signals.c, lifecycle.c). */
#ifndef MP_NS_H
#define MP_NS_H

#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define MP_NS_VERSION 1

struct mp_ns_host {
    int version;
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*memalign)(size_t, size_t);
    size_t (*usable_size)(void *);
    int (*iterate_phdr)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
    int (*fd_high)(int);
    /* the program's libc keeps the table of thread keys (the values are
     * in the thread, shared): libunwind's key comes from there */
    int (*key_create)(pthread_key_t *, void (*)(void *));
    int (*key_delete)(pthread_key_t);
    void *(*getspecific)(pthread_key_t);
    int (*setspecific)(pthread_key_t, uintptr_t);    /* the value as a number */
    /* the process's ends: libdw's out-of-memory error() (the recorder gives
     * up what it was doing), libbz2's exit() (the exit snapshot) */
    void (*error)(int, int, const char *, ...);
    void (*exit)(int);
};

/* Load the namespace (ns.c; once, before the first use of libunwind's
 * variable; the stubs load it too, at their first call). */
void mp_ns_load(void);

/* libmallocprof_ns.so's one entry: 0 if it takes the host. */
int mp_ns_init(const struct mp_ns_host *host);

#endif
