/* The capture layer's interface: the stack of return addresses under an
 * allocation (unwind.c, unwind_stack.c, the cfi walker) and the stack
 * hash they feed; a thread's walker state lives in its record (core's
 * struct mp_thread embeds one), written by the thread's own walks only. */
#ifndef MP_CAPTURE_H
#define MP_CAPTURE_H

#include "base.h"

#define MP_CAPTURE_ROOM 1041        /* MP_DEPTH max (1024) + own frames + 1 */
#define MP_RULE_CACHE 256       /* per-thread cache of unwind rules */
#define MP_WALK_CACHE 256       /* frames of the cfi walker's previous walk kept */

/* Tags are pseudo return addresses: TAG_BASE + index into the tag names. */
#define TAG_BASE ((uintptr_t)0xfffffffffff00000ull)
/* Pseudo addresses below the tags: the "[truncated]" frame at the root of a
 * stack cut at MP_DEPTH, and the one frame of a stack found empty. */
#define ADDR_TRUNCATED (TAG_BASE - 1)
#define ADDR_UNKNOWN (TAG_BASE - 2)

struct mp_walker {
    uintptr_t stack_lo, stack_hi;   /* its stack, bounding every walk */
    /* the cfi walker's recently used rules (an L1-sized front of its table) */
    struct { uintptr_t ip; uint64_t rule; } rules[MP_RULE_CACHE];
    /* the cfi walker's previous walk, outward, its walk_n entries the last
     * ones before entry MP_WALK_CACHE + 1: its return addresses, and
     * per entry where it was read (| 1 if the walk from there on used the
     * value rbp had there, | 2 if it restored rbp from a slot), the hash of the frames from there on (sum, pow:
     * see hash_join), rbp's value there and the slot its rule restored rbp
     * from when the walk outside used it (else 0); walk_z: the last entry
     * is the slot that held 0 (unwind.c) */
    uint32_t walk_n, walk_z;
    uintptr_t walk_ra[MP_WALK_CACHE + 2];
    struct walk_entry { uintptr_t at; uint64_t sum, pow; uintptr_t rbp, rbp_at; } walk[MP_WALK_CACHE + 2];
    /* the walk under way: per frame where its return address was read, its
     * mixed value (hash_mix), rbp's value, the slot rbp was restored from
     * (0: none) and its rule's flags (unwind.c) */
    struct walk_tail {
        uintptr_t at[MP_WALK_CACHE];
        uint64_t mixed[MP_WALK_CACHE];
        uintptr_t rbp[MP_WALK_CACHE], rbp_at[MP_WALK_CACHE];
        uint8_t kind[MP_WALK_CACHE];
    } walk_tail;
    /* MP_UNWIND_CHECK's second walk (untouched pages otherwise) */
    uintptr_t check[MP_CAPTURE_ROOM];
};

/* A thread's Python frames as python_walk read them, innermost first: code
 * object, byte offset of the instruction, and the evaluation loop's
 * invocation (segment, 0 = innermost) each runs in; native: the native
 * frames of the capture (tags follow them). */
#define MP_PY_FRAMES 256        /* Python frames read per stack (python.c) */
struct mp_pyframes {
    int n, native;
    uintptr_t code[MP_PY_FRAMES];
    uint32_t off[MP_PY_FRAMES];
    uint16_t seg[MP_PY_FRAMES];
    unsigned long self;                 /* pthread_self(), once known */
};

/* The stack hash: a polynomial over the mixed addresses, leaf first,
 * sum of mix(x_i) * K^i mod 2^64 (mix: a 64x64->128 multiply folded to 64
 * bits, so every input bit reaches every bit of the term), fed by the
 * walker as it finds each frame, finished with the depth and flags. Being
 * a sum, the hash of a stack whose outer frames are the previous walk's
 * joins the frames walked to the outer part's sum kept with that walk
 * (hash_join): reused frames cost no multiply (unwind.c). A thread's cache
 * of recent stacks (record.c) trusts hash, leaf address, depth and flags:
 * two distinct stacks with the same leaf and depth are taken for one with
 * probability about 2^-64 per pair (2^-54 at worst, for two addresses
 * trading places 256 frames apart: K = 3 mod 8 keeps the 2-adic valuation
 * of K^d - 1 small). Interning (stacks.c) compares all the addresses. */
struct mp_hash { uint64_t sum, pow; };
#define MP_HASH_INIT ((struct mp_hash){ 0, 1 })
#define MP_HASH_K 0xd6e8feb86659fd93ull
static inline uint64_t hash_mix(uintptr_t x)
{
    unsigned __int128 m = (unsigned __int128)(x ^ 0x9E3779B97F4A7C15ull) * 0xff51afd7ed558ccdull;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}
static inline void hash_add_mixed(struct mp_hash *h, uint64_t mixed)
{
    h->sum += mixed * h->pow;
    h->pow *= MP_HASH_K;
}
static inline void hash_add(struct mp_hash *h, uintptr_t x) { hash_add_mixed(h, hash_mix(x)); }
/* appends frames whose own hash (from MP_HASH_INIT) is {sum, pow} */
static inline void hash_join(struct mp_hash *h, uint64_t sum, uint64_t pow)
{
    h->sum += sum * h->pow;
    h->pow *= pow;
}
static inline uint64_t hash_final(struct mp_hash h, int n, unsigned flags)
{
    unsigned __int128 m = (unsigned __int128)(h.sum ^ ((uint64_t)n << 1 | flags)) * 0xc4ceb9fe1a85ec53ull;
    uint64_t x = (uint64_t)m ^ (uint64_t)(m >> 64);
    x ^= x >> 29;
    return x | 1;   /* never 0 */
}

/* Fills ret_addrs (room for MP_CAPTURE_ROOM) leaf first, the profiler's own
 * frames skipped, and feeds the first returned frames to *h. Returns the
 * number of frames (at most max); *truncated set when the stack was deeper.
 * start: the frame (__builtin_frame_address) of the caller or of one of
 * its callers inside the profiler, where the walk of its own frames may
 * begin. */
int unwind_capture(struct mp_walker *wk, void *start, uintptr_t *ret_addrs, int max, int *truncated, struct mp_hash *h);
void unwind_init(void);
void unwind_prepare(int any_mode);   /* the namespace loaded before stacks are walked (unwind.c) */
void unwind_thread_init(struct mp_walker *wk);   /* inside malloc: no libc calls */
void unwind_thread_start(void);                 /* a new thread, before its code runs */
void unwind_main_stack_init(void);              /* unwind_stack.c: the main thread's bounds */
int unwind_walk_fp(struct mp_walker *wk, uintptr_t *buf, int max);     /* -1: the chain broke */
void unwind_forget_rules(void); /* after an unload: rules may be stale; bumps mp_maps_gen */
extern _Atomic unsigned mp_maps_gen;
void unwind_release(void);      /* a detach: libdw's session, the files' tables, the rules' pages */
void unwind_lock(void);         /* the cfi walker's rule computation (fork) */
void unwind_unlock(void);
int mp_in_self(uintptr_t addr);

#endif
