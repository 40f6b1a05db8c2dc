/* Every libc function the recorder interposes (and malloc_usable_size,
 * which it calls the next allocator's of and does not define), declared
 * once: X(name, return type, parameters). The definitions are entry/'s
 * and process/'s (interpose.c: the malloc family; lifecycle.c: threads,
 * unshare, setns; ending.c: exec, exit, _exit; dlclose.c: dlclose;
 * signals.c: sigaction, error; maps.c: mmap, mmap64, munmap, mremap, brk,
 * sbrk; fds.c: close, close_range, closefrom, pipe2; clone.c: syscall,
 * clone; cold_pages.c: ioctl); mp_next holds each original, the next
 * definition in the lookup order (RTLD_NEXT), all resolved together by
 * hooks_resolve (hooks.c) at the first call of any of them: no hook looks
 * itself up. */
#ifndef MP_HOOKS_H
#define MP_HOOKS_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MP_HOOKS(X)                                                                         \
    X(malloc, void *, (size_t))                                                             \
    X(calloc, void *, (size_t, size_t))                                                     \
    X(realloc, void *, (void *, size_t))                                                    \
    X(free, void, (void *))                                                                 \
    X(posix_memalign, int, (void **, size_t, size_t))                                       \
    X(aligned_alloc, void *, (size_t, size_t))                                              \
    X(memalign, void *, (size_t, size_t))                                                   \
    X(valloc, void *, (size_t))                                                             \
    X(pvalloc, void *, (size_t))                                                            \
    X(malloc_usable_size, size_t, (void *))                                                 \
    X(pthread_create, int, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)) \
    X(execve, int, (const char *, char *const[], char *const[]))                            \
    X(execv, int, (const char *, char *const[]))                                            \
    X(execvp, int, (const char *, char *const[]))                                           \
    X(execvpe, int, (const char *, char *const[], char *const[]))                           \
    X(fexecve, int, (int, char *const[], char *const[]))                                    \
    X(exit, void, (int))                                                                    \
    X(_exit, void, (int))                                                                   \
    X(_Exit, void, (int))                                                                   \
    X(dlclose, int, (void *))                                                               \
    X(sigaction, int, (int, const struct sigaction *, struct sigaction *))                   \
    X(error, void, (int, int, const char *, ...))                                           \
    X(mmap, void *, (void *, size_t, int, int, int, off_t))                                 \
    X(mmap64, void *, (void *, size_t, int, int, int, __off64_t))                           \
    X(munmap, int, (void *, size_t))                                                        \
    X(mremap, void *, (void *, size_t, size_t, int, ...))                                   \
    X(brk, int, (void *))                                                                   \
    X(sbrk, void *, (intptr_t))                                                             \
    X(close, int, (int))                                                                    \
    X(close_range, int, (unsigned int, unsigned int, int))                                  \
    X(closefrom, void, (int))                                                               \
    X(syscall, long, (long, ...))                                                           \
    X(clone, int, (int (*)(void *), void *, int, void *, ...))                              \
    X(ioctl, int, (int, unsigned long, ...))                                                \
    X(unshare, int, (int))                                                                  \
    X(setns, int, (int, int))                                                               \
    X(pipe2, int, (int[2], int))

#define MP_HOOK_FIELD(name, ret, params) ret (*name) params;
struct mp_next { MP_HOOKS(MP_HOOK_FIELD) };
#undef MP_HOOK_FIELD
/* hidden: the entry points reach it PC-relative, not through the GOT (a
 * load less in every malloc and free than an extern default symbol) */
extern struct mp_next mp_next __attribute__((visibility("hidden")));

/* Resolves every original once (the malloc family first: dlsym may
 * allocate, served meanwhile from interpose.c's bootstrap buffer, which
 * mp_hooks_resolving tells it to use). */
void hooks_resolve(void);
extern int mp_hooks_resolving __attribute__((visibility("hidden")));
/* 1 when the probe (MP_IN_PROBE: lifecycle.c interpose_check) reached
 * this library's malloc: the program's malloc is ours. */
extern int mp_probe_seen __attribute__((visibility("hidden")));
#define HOOKS_READY() do { if (unlikely(!mp_next.sigaction)) hooks_resolve(); } while (0)

#endif
