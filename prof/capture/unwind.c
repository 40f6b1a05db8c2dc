/* Stack capture: return addresses, leaf first, without the profiler's own
 * frames (recognized by address: anything inside libmallocprof.so).
 *
 * Three walkers, all bounded by the thread's stack so a bad chain cannot
 * fault, all falling back to libunwind's unw_backtrace (local-only,
 * per-thread caching) when they cannot go on:
 *  - cfi (default): per return address, the unwind rule that the module's
 *    DWARF call frame information (.eh_frame) gives at the call, reduced to
 *    "CFA = rsp|rbp + k, return address at CFA + r, rbp saved at CFA + b or
 *    unchanged" and cached in a lock-free table (fronted by a per-thread
 *    direct-mapped cache of 256). Each frame then costs one probe and two
 *    loads. A rule is computed once per distinct
 *    return address, with libdw, under a lock taken with trylock (busy →
 *    this capture uses libunwind). Rules it cannot reduce (signal frames,
 *    DWARF expressions) send the capture to libunwind.
 *    A walk stops where it finds the previous walk's outer frames still in
 *    place and takes them from it (see "The previous walk").
 *  - fp: frame pointers, for code built with -fno-omit-frame-pointer.
 *  - libunwind.
 * MP_UNWIND_CHECK=1 (debugging) compares each cfi capture with a full walk. */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include "capture.h"
#include "unwind_cfi.h"
#include "ns.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <libunwind.h>

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

static void rules_init(void);

/* MP_UNWIND_CHECK=1 (a debug aid): every cfi capture that reused the
 * previous walk is walked again in full and the two compared; at exit the
 * counts go to stderr. */
static int check_on;
static _Atomic uint64_t check_walks, check_frames, check_reused, check_tries, check_bad;

static void check_report(void)
{
    if (check_on)
        mp_log("info", "MP_UNWIND_CHECK: %llu walks, %llu frames, %llu reused (%.1f %%), %llu reuse tries, %llu mismatches",
               (unsigned long long)check_walks, (unsigned long long)check_frames,
               (unsigned long long)check_reused, check_frames ? 100.0 * (double)check_reused / (double)check_frames : 0.0,
               (unsigned long long)check_tries, (unsigned long long)check_bad);
    uint64_t check_rules, check_rules_bad;
    unwind_cfi_counts(&check_rules, &check_rules_bad);
    if (check_on)
        mp_log("info", "MP_UNWIND_CHECK: %llu rules read with .eh_frame_hdr's table, %llu differ from libdw's own CFI's",
               (unsigned long long)check_rules, (unsigned long long)check_rules_bad);
}

void unwind_init(void)
{
    const char *c = getenv("MP_UNWIND_CHECK");
    check_on = c && *c && *c != '0';
    if (check_on) atexit(check_report);
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&unwind_init);
    unwind_main_stack_init();
    if (mp_opt.unwind == UNWIND_CFI) rules_init();
}

/* libdw and libunwind, the profiler's namespace (ns.c), loaded before the
 * first stack is walked and never inside malloc (dlmopen there could find
 * the loader's lock held by the allocating thread): at start when stacks
 * are recorded from the start, else by mp_activate, mp_thread_activate or
 * an attach session that records them. A process that records none
 * (MP_STACKS=none or tags, MP_ENABLED=0 never activated) skips the load,
 * 1-3 ms of its start; a snapshot that names addresses loads it then
 * (its functions' stubs load on their first call, ns_stubs.S). any_mode:
 * the program's first thread is about to start (lifecycle.c): the
 * namespace's modules with thread-local storage (libc, libunwind, libdw,
 * libelf) make each thread's vector 64 bytes larger, which the program's
 * totals count, so they are there for every thread or none. */
void unwind_prepare(int any_mode)
{
    static _Atomic int prepared;
    if ((mp_opt.stacks != STACKS_UNWIND && !any_mode) || atomic_load(&prepared)) return;
    struct mp_guard g = guard_enter(MP_INSIDE);     /* the loader's allocations are ours */
    mp_ns_load();
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    unw_set_cache_size(unw_local_addr_space, 1024, 0);
    atomic_store(&prepared, 1);
    guard_leave(&g);
}

/* ------------------------------------------------------------ cfi rules */


/* The rules, by return address: open addressing in a table that readers
 * take without a lock (a slot's rule is written before its key, which
 * publishes it) and that grows under rules_lock, sized to what it holds:
 * from 4096 slots (64 KiB; a program's rules are a few thousand to some
 * tens of thousands, and a fixed 4 MiB table, whose hashed slots touch
 * every page, was clang's 4 MB in every mode). A grown table replaces the
 * old one for good: the old stays mapped, its slots' pages given back
 * (read as zero by a reader still in it: "not there", the rule computed
 * again), its first page kept, with the header a late reader reads. */
#define RULE_BITS_MIN 12
#define RULE_BITS_MAX 22
#define RULE_PROBES 16

struct rule_slot {
    _Atomic uintptr_t ip;
    uint64_t rule;
};
struct rule_table {
    unsigned bits;
    size_t count;
    struct rule_slot s[];       /* 2^bits */
};

static _Atomic(struct rule_table *) rules;
static int rules_full;                  /* no room left: new addresses go to libunwind */
static pthread_mutex_t rules_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t rule_table_bytes(unsigned bits)
{
    return (sizeof(struct rule_table) + (sizeof(struct rule_slot) << bits) + PAGE_SIZE - 1) & ~(size_t)(PAGE_SIZE - 1);
}

static struct rule_table *rule_table_new(unsigned bits)
{
    struct rule_table *t = mp_map(rule_table_bytes(bits), 0);
    if (t) t->bits = bits;
    return t;
}

static void rules_init(void)
{
    struct rule_table *t = rule_table_new(RULE_BITS_MIN);
    if (!t) mp_opt.unwind = UNWIND_LIBUNWIND;
    atomic_store_explicit(&rules, t, memory_order_release);
}

/* Bumped when an object was unloaded (the rules cleared, addresses retired):
 * each thread then clears its caches of rules and of stacks. */
_Atomic unsigned mp_maps_gen;

void unwind_forget_rules(void)
{
    struct rule_table *t = atomic_load(&rules);
    if (!t) return;
    pthread_mutex_lock(&rules_lock);
    for (size_t i = 0; i < (size_t)1 << t->bits; i++) atomic_store_explicit(&t->s[i].ip, 0, memory_order_relaxed);
    t->count = 0;
    STORE(rules_full, 0);
    atomic_fetch_add(&mp_maps_gen, 1);
    pthread_mutex_unlock(&rules_lock);
}

void unwind_lock(void) { pthread_mutex_lock(&rules_lock); }

void unwind_unlock(void) { pthread_mutex_unlock(&rules_lock); }

static inline uint64_t rule_get(uintptr_t ip)
{
    const struct rule_table *t = atomic_load_explicit(&rules, memory_order_acquire);
    size_t mask = ((size_t)1 << t->bits) - 1, h = (size_t)fib_hash(ip, t->bits);
    for (int i = 0; i < RULE_PROBES; i++) {
        const struct rule_slot *s = &t->s[(h + i) & mask];
        uintptr_t k = atomic_load_explicit(&s->ip, memory_order_acquire);
        if (k == ip) return s->rule;
        if (!k) return 0;
    }
    return 0;
}

/* Into t (not published, or under rules_lock); 0 when the probe window is full. */
static int rule_insert(struct rule_table *t, uintptr_t ip, uint64_t rule)
{
    size_t mask = ((size_t)1 << t->bits) - 1, h = (size_t)fib_hash(ip, t->bits);
    for (int i = 0; i < RULE_PROBES; i++) {
        struct rule_slot *s = &t->s[(h + i) & mask];
        uintptr_t k = atomic_load_explicit(&s->ip, RELAXED);
        if (k == ip) return 1;
        if (!k) {
            s->rule = rule;         /* the rule first, then the key that publishes it */
            atomic_store_explicit(&s->ip, ip, memory_order_release);
            t->count++;
            return 1;
        }
    }
    return 0;
}

/* A table twice as large with every rule, published (under rules_lock);
 * 0 when none can be had (the largest reached, or no memory). A rule
 * whose window is full in the new table is dropped (computed again). */
static int rules_grow(struct rule_table *old)
{
    struct rule_table *t = old->bits < RULE_BITS_MAX ? rule_table_new(old->bits + 1) : NULL;
    if (!t) return 0;
    for (size_t i = 0; i < (size_t)1 << old->bits; i++) {
        uintptr_t ip = atomic_load_explicit(&old->s[i].ip, RELAXED);
        if (ip) rule_insert(t, ip, old->s[i].rule);
    }
    atomic_store_explicit(&rules, t, memory_order_release);
    size_t bytes = rule_table_bytes(old->bits);
    if (bytes > PAGE_SIZE) madvise((char *)old + PAGE_SIZE, bytes - PAGE_SIZE, MADV_DONTNEED);
    return 1;
}

/* Under rules_lock, the table kept at most half full. Returns 0 when it
 * no longer takes new addresses: those captures go to libunwind (slower,
 * still right). */
static int rule_put(uintptr_t ip, uint64_t rule)
{
    struct rule_table *t = atomic_load_explicit(&rules, RELAXED);
    if ((t->count + 1) * 2 > (size_t)1 << t->bits && rules_grow(t)) t = atomic_load_explicit(&rules, RELAXED);
    while (!rule_insert(t, ip, rule)) {
        if (!rules_grow(t)) return 0;
        t = atomic_load_explicit(&rules, RELAXED);
    }
    return 1;
}

static struct own_stack rules_stack = { .size = 1 << 20 };

/* The end of an attach session: the rules' pages given back (the table
 * stays mapped, empty: a hook reached afterwards through a copy of its
 * address still reads it), libdw's session and the files' tables ended. */
void unwind_release(void)
{
    pthread_mutex_lock(&rules_lock);
    struct rule_table *t = atomic_load(&rules);
    if (t) {        /* its slots zero, as their pages given back read */
        size_t bytes = rule_table_bytes(t->bits);
        memset(t->s, 0, PAGE_SIZE - sizeof *t);
        if (bytes > PAGE_SIZE) madvise((char *)t + PAGE_SIZE, bytes - PAGE_SIZE, MADV_DONTNEED);
        t->count = 0;
    }
    STORE(rules_full, 0);
    unwind_cfi_release();
    own_stack_release(&rules_stack);
    pthread_mutex_unlock(&rules_lock);
}


/* libdw failed inside rule_compute (out of memory: RECOVERABLE): its
 * session left as it is, no new rules (new addresses go to libunwind). */
static uint64_t rules_lost(void)
{
    unwind_cfi_lost();
    STORE(rules_full, 1);
    mp_log("warning", "out of memory in libdw while reading unwind tables: new code is unwound by libunwind");
    return R_KNOWN | R_NONE;
}

/* rule_compute on the rules' own stack (ownstack.c; the rules' lock held). */
struct rule_call { uintptr_t ip; uint64_t rule; };
static void rule_work(void *arg)
{
    struct rule_call *c = arg;
    RECOVERABLE(c->rule = unwind_rule_compute(c->ip, check_on), c->rule = rules_lost());
}

/* The rule for ip, computing it if this thread can take the lock now. */
static uint64_t rule_for(uintptr_t ip)
{
    uint64_t r = rule_get(ip);
    if (likely(r != 0)) return r;
    if (LOAD(rules_full) || pthread_mutex_trylock(&rules_lock) != 0) return 0;
    r = rule_get(ip);
    if (!r) {
        sigset_t old;
        signals_hold(&old);     /* libdw allocates */
        struct rule_call c = { ip, 0 };
        int counting = mp_own_counting;
        mp_own_counting = 1;    /* libdw's blocks are the profiler's (the ledger) */
        own_stack_run(&rules_stack, rule_work, &c);
        mp_own_counting = counting;
        r = c.rule;
        signals_release(&old);
        if (!rule_put(ip, r)) STORE(rules_full, 1);
    }
    pthread_mutex_unlock(&rules_lock);
    return r;
}

static inline int on_stack(const struct mp_walker *wk, uintptr_t a)
{
    /* in [stack_lo, stack_hi - 8] (a + 8 could wrap), aligned (the previous
     * walk marks slots by their low bit) */
    return a - wk->stack_lo <= wk->stack_hi - 8 - wk->stack_lo && !(a & 7);
}

#include "unwind_walk.h"

/* Our own frames keep frame pointers: walked from fp to the frame whose
 * return address is the program's code (NULL: the chain broke). */
static inline __attribute__((always_inline)) uintptr_t *walk_own_frames(const struct mp_walker *wk, uintptr_t *fp)
{
    for (;;) {
        if (!on_stack(wk, (uintptr_t)fp) || !on_stack(wk, (uintptr_t)(fp + 1))) return NULL;
        if (!mp_in_self(fp[1])) return fp;
        uintptr_t *next = (uintptr_t *)fp[0];
        if (next <= fp) return NULL;
        fp = next;
    }
}

/* The rule at rip, from the thread's cache first (0: none known). */
static inline __attribute__((always_inline)) uint64_t rule_cached(struct mp_walker *wk, uintptr_t rip)
{
    unsigned c = (unsigned)rip & (MP_RULE_CACHE - 1);     /* call sites differ in their low bits */
    if (wk->rules[c].ip == rip) return wk->rules[c].rule;
    uint64_t r = rule_for(rip);
    if (r) wk->rules[c].ip = rip, wk->rules[c].rule = r;
    return r;
}

/* One frame up by rule r: the caller's rip, rsp and rbp, where its rip
 * was read (at), and where rbp was (rbp_at, if the rule restores it). -1: the rule cannot be followed here. */
static inline __attribute__((always_inline)) int frame_up(const struct mp_walker *wk, uint64_t r, uintptr_t *rip,
                                                          uintptr_t *rsp, uintptr_t *rbp, int *rbp_known, uintptr_t *at,
                                                          uintptr_t *rbp_at)
{
    if ((r & R_CFA_RBP) && !*rbp_known) return -1;
    uintptr_t cfa = ((r & R_CFA_RBP) ? *rbp : *rsp) + rule_cfa_offset(r);
    uintptr_t ra_at = cfa + rule_ra_offset(r);
    if (!on_stack(wk, ra_at) || cfa <= *rsp) return -1;
    if (r & R_RBP_SAVED) {
        uintptr_t slot = cfa + rule_rbp_offset(r);
        if (!on_stack(wk, slot)) return -1;
        *rbp = *(uintptr_t *)slot;
        *rbp_at = slot;
    } else if (r & R_RBP_UNDEF) {
        *rbp_known = 0;
    }
    *at = ra_at;
    *rip = *(uintptr_t *)ra_at;
    *rsp = cfa;
    return 0;
}

/* Frame n of the walk under way kept: its return address rip (read at at,
 * rbp as the walk had it, rule r) into buf, the hash and the tail. */
static inline __attribute__((always_inline)) void walk_keep(struct walk_tail *tail, uintptr_t *buf, int n, uintptr_t rip,
                                                            uintptr_t at, uintptr_t rbp, uint64_t r, struct mp_hash *h)
{
    buf[n] = rip;
    uint64_t mixed = hash_mix(rip);
    hash_add_mixed(h, mixed);
    if (n < MP_WALK_CACHE) {
        tail->at[n] = at, tail->mixed[n] = mixed, tail->rbp[n] = rbp;
        tail->kind[n] = (uint8_t)((r & R_CFA_RBP ? 1 : 0) | (r & R_RBP_SAVED ? 2 : 0) | (r & R_RBP_UNDEF ? 4 : 0));
        tail->rbp_at[n] = 0;
    }
}

/* Returns the frame count (at most max, *more set if the stack goes on),
 * or -1 to fall back to libunwind. Feeds the frames to *hash. Starts at
 * start, the frame of a profiler's function under way (the walk's own
 * frames and its callers' up to there are not looked at). */
static int __attribute__((noinline)) walk_cfi(struct mp_walker *wk, void *start, uintptr_t *buf, int max, int *more,
                                              struct mp_hash *hash, int reuse)
{
    uintptr_t *fp = walk_own_frames(wk, start);
    if (!fp) return -1;
    uintptr_t rip = fp[1], rsp = (uintptr_t)(fp + 2), rbp = fp[0];
    uintptr_t at = (uintptr_t)(fp + 1);     /* where rip was read */
    int rbp_known = 1, n = 0, cacheable = 1, tries = 0;
    unsigned ci = WALK_END - wk->walk_n;     /* first entry of the previous walk to try */
    struct walk_tail *tail = &wk->walk_tail;
    struct mp_hash h = *hash;
    const uintptr_t own_lo = self_lo, own_len = self_hi - self_lo;     /* in registers: buf may alias */
    *more = 0;
    while (rip) {
        if (n == max) {
            *more = 1;
            break;
        }
        const int kept = rip - own_lo >= own_len;    /* our signal trampoline: walked through, not kept */
        if (likely(kept) && reuse && tries < 3) {     /* each try loads the outer frames once */
            while (ci < WALK_END && wk->walk[ci].at < at) ci++;
            const struct walk_entry *e = &wk->walk[ci];
            if (ci < WALK_END && (e->at & ~(uintptr_t)7) == at && wk->walk_ra[ci] == rip &&
                (!(e->at & 1) || (rbp_known && e->rbp == rbp))) {
                tries++;
                int m = walk_reuse(wk, ci, buf, n, max, more, &h, &ci);
                if (unlikely(check_on)) check_tries++;
                if (m >= 0) {
                    if (unlikely(check_on)) check_reused += (uint64_t)(m - n);
                    if (!*more && cacheable) walk_splice(wk, buf, n, tail, ci);
                    *hash = h;
                    return m;
                }
            }
        }
        uint64_t r = rule_cached(wk, rip);
        if (unlikely(!r || (r & R_NONE))) return -1;
        if (likely(kept)) {
            walk_keep(tail, buf, n, rip, at, rbp, r, &h);
            n++;
        } else {
            cacheable = 0;
        }
        if (unlikely(r & R_END)) {
            if (cacheable && reuse) walk_save(wk, buf, n, tail, 0);
            *hash = h;
            return n ? n : -1;
        }
        uintptr_t rbp_at = 0;
        if (frame_up(wk, r, &rip, &rsp, &rbp, &rbp_known, &at, &rbp_at)) return -1;
        if (likely(kept) && n <= MP_WALK_CACHE) tail->rbp_at[n - 1] = rbp_at;
    }
    if (n == 0) return -1;
    if (!*more && cacheable && reuse) walk_save(wk, buf, n, tail, at);
    *hash = h;
    return n;
}

/* MP_UNWIND_CHECK: the capture of n frames just made (hash h) against a
 * walk that does not use the previous one (into wk->check). */
static __attribute__((noinline)) void unwind_check(struct mp_walker *wk, const uintptr_t *got, int n, int more, int max,
                                                   struct mp_hash h0, struct mp_hash h)
{
    int more2 = 0;
    int n2 = walk_cfi(wk, __builtin_frame_address(0), wk->check, max, &more2, &h0, 0);
    check_walks++;
    check_frames += (uint64_t)n;
    if (n2 != n || more2 != more || h0.sum != h.sum || h0.pow != h.pow ||
        memcmp(got, wk->check, (size_t)n * sizeof *got) != 0) {
        if (++check_bad <= 10)
            mp_log("bug", "MP_UNWIND_CHECK: a capture of %d frames differs from the full walk's %d", n, n2);
    }
}

/* runs inside malloc: no allocation, no lock (libunwind caches per thread) */
int unwind_capture(struct mp_walker *wk, void *start, uintptr_t *ret_addrs, int max, int *truncated, struct mp_hash *h)
{
    if (mp_opt.unwind == UNWIND_CFI && wk->stack_hi) {
        struct mp_hash h0 = *h;
        int n = walk_cfi(wk, start, ret_addrs, max, truncated, h, 1);
        if (unlikely(check_on) && n >= 0) unwind_check(wk, ret_addrs, n, *truncated, max, h0, *h);
        if (n >= 0) return n;
    }
    /* the others start in the profiler's own frames and may stop anywhere */
    int want = max + 17 < MP_CAPTURE_ROOM ? max + 17 : MP_CAPTURE_ROOM;
    int n = -1;
    if (mp_opt.unwind == UNWIND_FP && wk->stack_hi) n = unwind_walk_fp(wk, ret_addrs, want);
    if (n < 0) {        /* libunwind may write to a pipe (a cancellation point): see signals_hold */
        int cancel;
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
        n = unw_backtrace((void **)ret_addrs, want);
        pthread_setcancelstate(cancel, NULL);
    }
    int kept = 0;
    for (int i = 0; i < n; i++)     /* the profiler's own frames: the leading ones, and its signal trampoline */
        if (!mp_in_self(ret_addrs[i])) ret_addrs[kept++] = ret_addrs[i];
    n = kept;
    *truncated = n > max;
    if (n > max) n = max;
    if (n == 0) ret_addrs[n++] = ADDR_UNKNOWN;  /* a stack has a frame */
    for (int i = 0; i < n; i++) hash_add(h, ret_addrs[i]);
    return n;
}
