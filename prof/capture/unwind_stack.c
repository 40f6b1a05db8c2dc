/* A thread's stack: its bounds, which bound every walk (learnt before the
 * thread's code runs, never on the allocation path), and the frame-pointer
 * walker (MP_UNWIND=fp), which needs nothing else. */
#define _GNU_SOURCE
#include "capture.h"

#include <pthread.h>
#include <sys/resource.h>

/* Stack bounds. Nothing on the allocation path may ask libc for them:
 * pthread_getattr_np takes the thread's lock and allocates while holding it
 * (Rust's runtime makes a thread's first allocation there), so a thread's
 * bounds are learnt before its code runs (unwind_thread_start, from the
 * pthread_create wrapper), and the main thread's from the loader's
 * __libc_stack_end (its top) and RLIMIT_STACK (how far down it may grow).
 * A thread with neither (made by clone, or the stack pointer elsewhere, as
 * on a coroutine's stack) has no bounds: its captures go to libunwind. */
extern void *__libc_stack_end;
static uintptr_t main_lo, main_hi;
static MP_TLS uintptr_t start_lo, start_hi;

void unwind_main_stack_init(void)
{
    struct rlimit rl;
    uintptr_t top = ((uintptr_t)__libc_stack_end + PAGE_SIZE - 1) & ~(uintptr_t)(PAGE_SIZE - 1);
    uintptr_t room = (uintptr_t)1 << 30;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < room)
        room = rl.rlim_cur;
    if (!top || top < room) return;
    main_lo = top - room;
    main_hi = top;
}

/* runs at the start of a thread, before the program's code: no lock held */
void unwind_thread_start(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        start_lo = (uintptr_t)addr;
        start_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
}

/* runs inside malloc: reads what was learnt before, nothing else */
void unwind_thread_init(struct mp_walker *wk)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    if (start_hi && sp >= start_lo && sp < start_hi) {
        wk->stack_lo = start_lo;
        wk->stack_hi = start_hi;
    } else if (main_hi && sp >= main_lo && sp < main_hi) {
        wk->stack_lo = main_lo;
        wk->stack_hi = main_hi;
    }
}

/* Frame-pointer walk. Returns the frame count, or -1 when the chain breaks
 * before its end (a frame without frame pointer): the caller falls back. */
int __attribute__((noinline)) unwind_walk_fp(struct mp_walker *wk, uintptr_t *buf, int max)
{
    uintptr_t *fp = __builtin_frame_address(0);
    int n = 0;
    while (n < max) {
        uintptr_t f = (uintptr_t)fp;
        if (f < wk->stack_lo || f > wk->stack_hi - 16 || (f & 7)) return -1;  /* no overflow */
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
