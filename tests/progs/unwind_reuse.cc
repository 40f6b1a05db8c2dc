// Built -O2 without frame pointers (CFA from rsp) and with them (from rbp:
// unwind_reuse_fp), the two cases of the cfi walker's reuse of its previous
// walk's outer frames: stacks that look alike at the leaf but differ outside, for tests/recorder/unwind_reuse.sh. Each scene
// allocates through rp_alloc a known number of times, 24 + scene bytes:
//  1 same_slot: rp_common called from rp_caller_a or rp_caller_b in turn
//    (same frame sizes: rp_alloc's return address lands in the same slot
//    with the same value; only the caller's slot differs), 100 each
//  2 recursion: rp_rec at depths 6, 3, 6, 1, 3 ... (10 rounds x 5 depths)
//  3 longjmp: an allocation 3 frames down, longjmp out, then one 3 frames
//    down through other functions, 50 rounds
//  4 exception: rp_throw allocates and throws through 2 frames, caught;
//    then an allocation through rp_after_throw, 50 rounds
//  5 signal: a SIGUSR1 handler allocates (raised from rp_raise), then
//    rp_after_signal allocates, 20 rounds
//  6 coroutine: swapcontext to a coroutine on its own stack that
//    allocates, back, then an allocation from main's stack, 20 rounds
#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <ucontext.h>

#define NOINLINE __attribute__((noinline))
#define KEEP asm volatile("" ::: "memory")   /* no tail call, no merging */

void *volatile sink;
static int scene;

extern "C" NOINLINE void rp_alloc()
{
    sink = malloc(24 + scene);
    KEEP;
    free(sink);
    KEEP;
}

// 1: same slot, same return address, another caller
extern "C" NOINLINE void rp_common(int x) { if (x >= 0) rp_alloc(); KEEP; }
extern "C" NOINLINE void rp_caller_a(int x) { rp_common(x + 1); KEEP; }
extern "C" NOINLINE void rp_caller_b(int x) { rp_common(x + 2); KEEP; }

// 2: recursion to a changing depth
extern "C" NOINLINE void rp_rec(int d)
{
    if (d == 0) rp_alloc();
    else rp_rec(d - 1);
    KEEP;
}

// 3: longjmp out of frames, then other frames at the same depth
static jmp_buf jump;
extern "C" NOINLINE void rp_jump3() { rp_alloc(); longjmp(jump, 1); }
extern "C" NOINLINE void rp_jump2() { rp_jump3(); KEEP; }
extern "C" NOINLINE void rp_jump1() { rp_jump2(); KEEP; }
extern "C" NOINLINE void rp_land3() { rp_alloc(); KEEP; }
extern "C" NOINLINE void rp_land2() { rp_land3(); KEEP; }
extern "C" NOINLINE void rp_land1() { rp_land2(); KEEP; }

// 4: an exception unwinding through frames
extern "C" NOINLINE void rp_throw() { rp_alloc(); throw std::runtime_error("x"); }
extern "C" NOINLINE void rp_throw_mid() { rp_throw(); KEEP; }
extern "C" NOINLINE void rp_after_throw2() { rp_alloc(); KEEP; }
extern "C" NOINLINE void rp_after_throw() { rp_after_throw2(); KEEP; }

// 5: a signal handler allocating
extern "C" NOINLINE void rp_handler(int) { rp_alloc(); KEEP; }
extern "C" NOINLINE void rp_raise() { raise(SIGUSR1); KEEP; }
extern "C" NOINLINE void rp_after_signal() { rp_alloc(); KEEP; }

// 6: a coroutine on a stack of its own
static ucontext_t main_ctx, co_ctx;
extern "C" NOINLINE void rp_co_body()
{
    for (;;) {
        rp_alloc();
        swapcontext(&co_ctx, &main_ctx);
    }
}
extern "C" NOINLINE void rp_after_co() { rp_alloc(); KEEP; }

int main()
{
    scene = 1;
    for (int i = 0; i < 200; i++) (i & 1 ? rp_caller_b : rp_caller_a)(i);
    scene = 2;
    static const int depths[] = { 6, 3, 6, 1, 3 };
    for (int r = 0; r < 10; r++)
        for (int d : depths) rp_rec(d);
    scene = 3;
    for (int i = 0; i < 50; i++) {
        if (!setjmp(jump)) rp_jump1();
        rp_land1();
    }
    scene = 4;
    for (int i = 0; i < 50; i++) {
        try {
            rp_throw_mid();
        } catch (const std::exception &) {
        }
        rp_after_throw();
    }
    scene = 5;
    signal(SIGUSR1, rp_handler);
    for (int i = 0; i < 20; i++) {
        rp_raise();
        rp_after_signal();
    }
    scene = 6;
    static char co_stack[1 << 16];
    getcontext(&co_ctx);
    co_ctx.uc_stack.ss_sp = co_stack;
    co_ctx.uc_stack.ss_size = sizeof co_stack;
    co_ctx.uc_link = &main_ctx;
    makecontext(&co_ctx, rp_co_body, 0);
    for (int i = 0; i < 20; i++) {
        swapcontext(&main_ctx, &co_ctx);
        rp_after_co();
    }
    return 0;
}
