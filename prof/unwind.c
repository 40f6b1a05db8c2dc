/* Stack capture: return addresses, leaf first, without the profiler's own
 * frames (recognized by address: anything inside libmallocprof.so).
 *
 * Default: libunwind's unw_backtrace (local-only, per-thread caching set at
 * init, so no global lock is taken per call). MP_UNWIND=fp walks frame
 * pointers, bounded by the thread's stack so a bad chain cannot fault, and
 * falls back to libunwind when the chain does not end cleanly. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "internal.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <libunwind.h>

#define MAX_CAPTURE 1040        /* MP_DEPTH max (1024) + own frames + 1 */

static uintptr_t self_lo, self_hi;

int mp_in_self(uintptr_t addr)
{
    return addr >= self_lo && addr < self_hi;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t probe = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (probe >= lo && probe < hi) {
            self_lo = lo;
            self_hi = hi;
            return 1;
        }
    }
    return 0;
}

void unwind_init(void)
{
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&unwind_init);
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    unw_set_cache_size(unw_local_addr_space, 1024, 0);
}

void unwind_thread_init(struct mp_thread *t)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            t->stack_lo = (uintptr_t)addr;
            t->stack_hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
}

/* Frame-pointer walk. Returns the frame count, or -1 when the chain breaks
 * before its end (a frame without frame pointer): the caller falls back. */
static int __attribute__((noinline)) walk_fp(struct mp_thread *t, uintptr_t *buf, int max)
{
    uintptr_t *fp = __builtin_frame_address(0);
    int n = 0;
    while (n < max) {
        uintptr_t f = (uintptr_t)fp;
        if (f < t->stack_lo || f + 16 > t->stack_hi || (f & 7)) return -1;
        uintptr_t ret = fp[1];
        uintptr_t *next = (uintptr_t *)fp[0];
        if (!ret) break;
        buf[n++] = ret;
        if (!next) break;                       /* _start's frame: clean end */
        if ((uintptr_t)next <= f) return -1;    /* stacks grow down: callers above */
        fp = next;
    }
    return n;
}

/* runs inside malloc: no allocation, no lock (libunwind caches per thread) */
int unwind_capture(struct mp_thread *t, uintptr_t *ret_addrs, int max, int *truncated)
{
    uintptr_t raw[MAX_CAPTURE];
    int want = max + 17 < MAX_CAPTURE ? max + 17 : MAX_CAPTURE;
    int n = -1;
    if (mp_opt.unwind == UNWIND_FP && t->stack_hi) n = walk_fp(t, raw, want);
    if (n < 0) n = unw_backtrace((void **)raw, want);
    int skip = 0;
    while (skip < n && mp_in_self(raw[skip])) skip++;
    n -= skip;
    *truncated = n > max;
    if (n > max) n = max;
    if (n < 0) n = 0;
    memcpy(ret_addrs, raw + skip, (size_t)n * sizeof *raw);
    return n;
}
