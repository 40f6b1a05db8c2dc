/* The recording path's types and calls (never installed): counters,
 * stack capture and interning, the pointer map, the flush's entry. The
 * hot-path files (interpose.c, record.c, stacks.c, ptrmap.c) include this
 * and not libdwfl. */
#ifndef MP_RECORD_H
#define MP_RECORD_H

#include "base.h"
#include "capture.h"      /* the walker's state, the stack hash */

/* ------------------------------------------------------------ counters (threads.c, slots.c, record.c, readers.c) */
/* One counter slot per (stack, allocating thread). The owner thread writes
 * its fields with plain (relaxed) stores; other threads' frees go to the
 * *_remote fields with atomic adds, so no cache line is shared on the
 * common path. One cache line per slot. Fixed point (WEIGHT_ONE).
 *
 * Two sides: the allocations attributed to the stack (ncalls, memtot) and
 * the blocks of it that the pointer map tracks (live_n, live_b: added at
 * the allocation, taken off by the owner's frees; other threads' frees in
 * the *_remote fields). With every block tracked (full capture, or tags
 * without sampling) both sides count the same blocks, exactly. Sampled,
 * the tracked blocks stand for 1/p blocks each (block_weight), and so do
 * the attributed ones, except with MP_STACKS=tags, where every allocation
 * is attributed exactly and only the live side is an estimate.
 * nfree = ncalls - (live_n - nfree_remote). */
struct mp_slot {
    uint32_t stack_id;          /* its leaf node (stacks.c); 0 = recorded without a stack */
    uint16_t thread_seq;        /* 0 = unused slot */
    uint16_t epoch;             /* owner: the peak epoch of its latest save (peak.h) */
    uint64_t ncalls, memtot;    /* owner: attributed allocations */
    uint64_t live_n, live_b;    /* owner: tracked blocks and bytes, less the owner's frees */
    uint64_t maxlive;           /* exact: peak of live_b - freed_remote; sampled: unused (a
                                 * sampled stack's maxlive is its live bytes at the peak) */
    _Atomic uint64_t nfree_remote, freed_remote;  /* frees by other threads */
};

/* A slot's raw values (fixed point), now or as at the process's peak. */
struct slot_raw { uint64_t ncalls, memtot, live_n, live_b, maxlive, ntemp, nfree_remote, freed_remote, time; };

/* What a slot needs besides its counters, beside its chunk so that a slot
 * stays one cache line: its temporary blocks (freed by their thread before
 * it allocated anything else; owner-written, fixed point), its time, the
 * size class of its first block, and the epoch of its *_remote values as
 * at the peak (slot_peak). */
struct mp_slot_side {
    uint64_t ntemp;
    uint64_t time;                      /* MP_TIME: nanoseconds credited (owner) */
    _Atomic uint32_t remote_epoch;      /* of the *_remote values saved at the peak */
    uint8_t class0;                     /* hist_class of its first block + 1 (0: none yet) */
};

#define MP_MAX_TAGS 16
#define MP_CACHE_SIZE 2048      /* per-thread cache of recently seen stacks (sets of 2), 48 KiB */
#define MP_HIST_CLASSES 65     /* size 0, then [2^(k-1), 2^k) for k = 1..64 */
/* the highest bit of size * 2 + 1: one bsr, size 0 included (no block
 * reaches 2^63 bytes, the one size this would class wrong) */
static inline unsigned hist_class(uint64_t size) { return 63u - (unsigned)__builtin_clzll(size << 1 | 1); }

/* A stack this thread saw recently: its hash (see hash_add), leaf return
 * address, depth and flags, and the thread's counter slot for it. */
struct mp_stack_cache {
    uint64_t hash;
    uintptr_t leaf;
    uint32_t shape;             /* depth | flags << 16 */
    uint32_t slot;
};

/* A thread's own counters, written by the thread alone: what the peak
 * saves of it. */
struct thread_counts {
    /* its allocations counted without a size class (the handlers' log's
     * lost ones); its calls and bytes are these plus the histogram's
     * (thread_calls): one store less per allocation */
    uint64_t lost_n, lost_b;
    /* With every block tracked: the live bytes of its blocks (requested
     * sizes) less the frees made by other threads (freed_remote), and its
     * own frees of them. Otherwise: the allocator's bytes it allocated less
     * those it freed, whoever allocated them, and every free it made. */
    int64_t live;
    uint64_t nfree_local;
    int64_t peak;               /* of live - freed_remote */
    /* the cheap modes: the allocations that got a slot (the others are
     * counted without a stack) */
    uint64_t attr_n, attr_b;
    uint64_t nfree_unknown;
    /* size histogram, log2 classes (hist_class) of the live size (the
     * requested size with every block tracked, else the allocator's): its
     * allocations (their requested bytes, their live bytes) and its frees */
    struct { uint64_t ncalls, memtot, live_in, nfree, live_out; } hist[MP_HIST_CLASSES];
};

/* The thread's allocations, exact, sampled or not: calls and bytes. */
static inline void thread_calls(const struct thread_counts *c, uint64_t *ncalls, uint64_t *bytes)
{
    uint64_t n = c->lost_n, b = c->lost_b;
    for (int k = 0; k < MP_HIST_CLASSES; k++) n += c->hist[k].ncalls, b += c->hist[k].memtot;
    *ncalls = n;
    *bytes = b;
}

struct mp_thread {
    /* written by the thread itself (plain stores; the flush reads relaxed) */
    struct thread_counts c;
    int64_t pending_live;       /* not yet published to the process's live */
    int64_t sample_countdown;   /* sampling */
    /* allocations to the next look at the clock (record_poll: the points
     * of memory over time); every poll_every, adapted to the thread's
     * pace, at poll_time last */
    int32_t poll, poll_every;
    double poll_time;
    uintptr_t last_block;       /* its latest allocation (temporary blocks) */
    uint32_t epoch;             /* the peak epoch of its latest save (at_peak) */
    /* odd while an operation of the program's changes its records (from
     * peak_touch_thread to peak_op_end), so that the peak's reader can tell one
     * that a capture found in its middle (peak_read_begin); busy_saved:
     * busy at the latest save */
    uint32_t busy, busy_saved;
    uint32_t read_busy;         /* the peak's reader's: busy when it began */
    /* MP_TIME: when its time last started counting (monotonic ns; the
     * profiler's own time is left out), and what it counted since its
     * latest allocation credited */
    uint64_t time_mark, time_pending;
    int active;                 /* -1: follow process switch, 0 off, 1 on */
    uint32_t tag_slot;          /* MP_STACKS=tags: its slot for the current tags, 0 = not known */

    struct stack_hist_table *_Atomic stack_hist;    /* its size classes per slot (stack_hist.c) */

    /* identity: set when the thread is first seen, read by anyone */
    uint32_t seq;               /* 1.. in order of first allocation */
    pid_t tid;
    uint32_t nostack_slot;      /* its slot for what is counted without a stack */
    struct mp_thread *next;     /* global list, newest first */
    char name[16];              /* written once, by the thread as it exits */
    /* its stack_id → slot map (open addressing, key stack_id) */
    uint32_t *slot_keys, *slot_vals;
    uint32_t slot_mask, slot_count;
    uint32_t slot_next, slot_end;   /* current chunk of global slot indices */
    uint64_t rng;
    int ntags;                  /* mp_tag_push scopes */
    uintptr_t tags[MP_MAX_TAGS];
    struct mp_stack_cache cache[MP_CACHE_SIZE];
    unsigned maps_gen;          /* cache and rules are valid while it equals mp_maps_gen */
    struct mp_walker walker;    /* its stack's bounds, the cfi walker's state (capture.h) */
    /* the stack being captured (stack_slot): here, not on the program's
     * stack, which may be small (the hot path's frames take about 1 KiB) */
    uintptr_t capture[MP_CAPTURE_ROOM + MP_MAX_TAGS];
    struct mp_pyframes py;      /* its Python frames as the latest walk read them (capture.h) */
    uintptr_t spliced[MP_CAPTURE_ROOM + MP_MAX_TAGS + MP_PY_FRAMES];

    /* written by other threads: atomics, on a line of their own */
    _Alignas(CACHE_LINE) _Atomic uint64_t nfree_remote, freed_remote;  /* frees of its blocks */
    _Atomic int exited;         /* by the thread's exit, or a fork child for the others */
    /* the thread's guard state and record pointer (threads_quiesce), NULL
     * once it exits; tls_lock held while either side uses it */
    struct mp_tls *tls;
    atomic_flag tls_lock;
    _Atomic uint32_t remote_epoch;      /* of the *_remote values at the peak */
    uint64_t nfree_remote_at_peak, freed_remote_at_peak;
    /* its counters as at the peak (saved by itself, peak_touch_thread) */
    struct thread_counts at_peak;
};

extern _Atomic int mp_active;           /* process-wide switch */
/* The hot path's cases, told apart by one load per call (hot.h):
 * HOT_COUNT, the cheap modes' counters alone (no block can get a stack:
 * MP_STACKS=none, or unwind and switched off with no thread switched on its
 * own), HOT_SAMPLE, the same plus the sampling countdown (switched on, no
 * threshold, no thread's own switch), both with glibc's sizes read inline;
 * HOT_FULL: mp_track_all; HOT_GENERAL: the cheap modes' other cases.
 * hot_path_update recomputes it after any of its inputs changed (the
 * switches, the threshold, the sizes' probation, a session's settings). */
enum { HOT_COUNT, HOT_SAMPLE, HOT_FULL, HOT_GENERAL };
extern _Atomic int mp_hot_path;
void hot_path_update(void);
void hot_path_thread_switch(void);      /* a thread's own switch was set: HOT_GENERAL from now on */
/* Every block is tracked in the pointer map (full capture: MP_SAMPLE=0,
 * MP_STACKS=unwind, MP_ENABLED=1): live bytes are requested bytes, exact
 * per thread and per stack. Otherwise (the cheap modes) only blocks that
 * get a stack and are sampled are tracked; thread and process live bytes
 * are the allocator's block sizes (malloc_usable_size), taken at the
 * allocation and at the free. Set once, at initialization (record_init). */
extern int mp_track_all;
extern _Atomic long mp_threshold;
#define WEIGHT_ONE 256          /* slot counters are fixed point: 8 fraction bits */

/* threads.c: the registry */
struct mp_thread *thread_self(void);    /* creates on first use */
struct mp_thread *thread_list(void);
struct mp_thread *thread_by_seq(uint32_t seq);
uint32_t thread_count(void);
void thread_exiting(struct mp_thread *t);
void threads_recycle_exited(void);      /* a detach: exited threads' records taken by the next new threads */
/* A detach, once the modules are back on their own calls: no thread
 * makes a record or reaches its own from now on (thread_self gives NULL),
 * and every thread found outside the profiler has its record taken back as
 * an exited one's (threads_recycle_exited). Returns how many were taken
 * back; threads_reopen: a new session's threads make records again. */
int threads_quiesce(void);
int threads_settle(double seconds);     /* each thread seen outside once (the detach's snapshot); those still inside */
void threads_reopen(void);
/* After a quiesce that took every record back: the registry emptied (1),
 * else nothing done (0). Then slots_forget, stacks_forget, arena_forget
 * give back the rest (attach.c's detach). */
int threads_forget(void);
void threads_after_fork_child(int others_gone);     /* 0: a new attach session, every thread goes on */

/* slots.c: chunks of SLOT_CHUNK slots, then their sides (read inline:
 * every operation of full capture reads a slot) */
#define SLOT_CHUNK 64
#define MAX_SLOT_CHUNKS (1u << 20)
extern struct mp_slot *_Atomic mp_slot_chunks[MAX_SLOT_CHUNKS];
static inline struct mp_slot *slot_at(uint32_t idx)
{
    struct mp_slot *chunk = atomic_load_explicit(&mp_slot_chunks[idx / SLOT_CHUNK], memory_order_acquire);
    return chunk ? &chunk[idx % SLOT_CHUNK] : NULL;
}
static inline struct mp_slot_side *slot_side(uint32_t idx)
{
    struct mp_slot *chunk = atomic_load_explicit(&mp_slot_chunks[idx / SLOT_CHUNK], memory_order_acquire);
    return chunk ? (struct mp_slot_side *)(chunk + SLOT_CHUNK) + idx % SLOT_CHUNK : NULL;
}
/* The slot's values as at the peak, saved there by its first write after
 * a capture (copy on write, peak.h); zeros until then. */
struct slot_raw *slot_peak(uint32_t idx);
uint32_t slot_limit(void);              /* slots are 1 .. slot_limit()-1 */
uint32_t slot_new(struct mp_thread *t, uint32_t stack_id);         /* 0: none */
uint32_t slot_of_stack(struct mp_thread *t, uint32_t stack_id);    /* the thread's, made on first use; 0: none */
void slots_after_fork_child(void);
void slots_forget(void);

/* record.c (the hot path's dispatch and cheap modes: hot.h) */
void record_init(void);
/* realloc's two halves: take the old block out, then account the outcome. */
struct mp_block { uint32_t slot; uint64_t size, usable; };   /* slot 0: not tracked */
void record_realloc_take(void *old, struct mp_block *b);
void record_realloc_done(struct mp_thread *t, void *old, const struct mp_block *b, void *p, size_t new_size);
void record_handler_block(struct mp_thread *t, void *p, uint64_t size, int freed);
void record_handler_lost(struct mp_thread *t, uint64_t ncalls, uint64_t bytes);
void time_in_profiler(int enter);       /* MP_TIME: a snapshot on the thread is the profiler's time */

/* readers.c: exact totals, as the totals table has them, now or as at the
 * peak: a thread's, and the process's (summed; maxlive is the process's
 * peak). live is signed (a thread's share in the cheap modes can be
 * negative). */
struct mp_totals {
    uint64_t ncalls, memtot, nfree, maxlive, ncalls_nostack, memtot_nostack, nfree_unknown;
    int64_t live;
};
/* Readers, now (e = 0) or as at the peak of epoch e, while the threads
 * go on: a record saved in epoch e is read from its copy; one not saved
 * yet, from its current values, checked again after (its owner may save
 * and change it meanwhile). Exact when e stays the latest capture
 * (peak_hold) and no operation under an older epoch changes records
 * meanwhile (peak_read_begin, peak_read_end). */
void thread_totals(const struct mp_thread *t, uint32_t e, struct mp_totals *out);
void process_totals(uint32_t e, struct mp_totals *out);
/* The same from counters already read (thread_counts): a thread's totals,
 * and the process's as the sum of its threads' (process_add each, then
 * process_end). */
void thread_totals_of(const struct mp_thread *t, uint32_t e, const struct thread_counts *c, struct mp_totals *out);
void process_add(struct mp_totals *sum, const struct mp_totals *thread);
void process_end(uint32_t e, struct mp_totals *sum);
/* A thread's own counters. */
void thread_counts(const struct mp_thread *t, uint32_t e, struct thread_counts *out);
/* A slot's counters in whole numbers (slots are fixed point, WEIGHT_ONE). */
struct slot_counts { uint64_t ncalls, memtot, nfree, memlive, maxlive, ntemp, time; };
void slot_raw(uint32_t idx, uint32_t e, struct slot_raw *out);     /* fixed point, as stored */
void slot_read(uint32_t idx, uint32_t e, struct slot_counts *out);

/* handler_log.c: a signal handler that interrupted the allocator or the
 * profiler (MP_IN_HANDLER): its allocations and frees, logged without
 * touching the profiler's state, are recorded by handler_drain at the way
 * out (blocks without a stack; totals exact). handler_free returns 1 when
 * the block's real free must wait for the drain (a block of the map), 0 to
 * free it now. */
void handler_alloc(void *p, size_t size);
int handler_free(void *p);
int handler_owns(const void *p);
void handler_drain(void);

/* ------------------------------------------------------------ stack_hist.c */
/* Size classes per stack: a thread's counts for (slot, class), key
 * slot << 7 | class, fixed point like slots. Allocations count in the
 * allocating thread's table (cw attributed, lw tracked), frees of tracked
 * blocks in the freeing thread's. */
struct stack_hist_entry { uint64_t key, ncalls, memtot, live_n, live_b; };
struct stack_hist_table {
    uint32_t mask, count;
    struct stack_hist_entry e[];
};
struct stack_hist_entry *stack_hist_insert(struct mp_thread *t, uint64_t key);     /* NULL: no memory */
/* The thread's entry for (slot, size's class): found inline, else made. */
static inline struct stack_hist_entry *stack_hist_entry(struct mp_thread *t, uint32_t slot, uint64_t size)
{
    struct stack_hist_table *h = atomic_load_explicit(&t->stack_hist, memory_order_relaxed);
    uint64_t key = (uint64_t)slot << 7 | hist_class(size);
    if (likely(h != NULL)) {
        for (uint32_t i = (uint32_t)fib_hash(key, 32) & h->mask;; i = (i + 1) & h->mask) {
            if (likely(h->e[i].key == key)) return &h->e[i];
            if (!h->e[i].key) break;
        }
    }
    return stack_hist_insert(t, key);
}
void stack_hist_each(void (*fn)(const struct stack_hist_entry *e, void *arg), void *arg);
void stack_hist_after_fork_child(void);

/* ------------------------------------------------------------ stacks.c */
#define STACK_TRUNCATED 1u

/* A node of the stack tree: a return address under its caller's node. */
struct mp_node {
    uintptr_t addr;
    uint32_t parent;            /* 0 = the root */
    uint32_t depth;             /* nodes from the root, this one included */
};

/* Interns ret_addrs[0..n) (leaf first, n >= 1) and returns the stack's id,
 * its leaf node; 0 if out of memory. Exact. */
uint32_t stacks_intern(const uintptr_t *ret_addrs, int n, unsigned flags, uint64_t hash);
const struct mp_node *stack_node(uint32_t id);  /* NULL if no such node */
uint32_t stack_node_count(void);        /* node ids are 1 .. stack_node_count() */
uint32_t stacks_count(void);            /* distinct stacks interned */
/* Renames every node whose address lies in [lo, hi) to rename(address). */
void stacks_retire(uintptr_t lo, uintptr_t hi, uintptr_t (*rename)(uintptr_t));
void stacks_lock_all(void);
void stacks_unlock_all(void);
void stacks_forget(void);

/* TAG_BASE, ADDR_TRUNCATED, ADDR_UNKNOWN: capture.h */
/* Addresses of an unloaded object, retired (stacks_retire): each becomes a
 * pseudo address of its own above RETIRED_BASE, named as it was, so that an
 * object mapped at the same place later gets nodes and names of its own. */
#define RETIRED_BASE ((uintptr_t)1 << 63)
uintptr_t tag_intern(const char *name);
const char *tag_name(uintptr_t addr);
/* The leaves of mappings' stacks (maps.c): pseudo addresses below the
 * tags, MAPS_NAME_BASE + the index of the kind's name (maps_name). */
#define MAPS_NAME_BASE (TAG_BASE - 0x10000)

/* ------------------------------------------------------------ ptrmap.c */
/* Block address → (slot, size). Sharded; a shard takes its lock only
 * while more than one thread works in it (see ptrmap.c). Sparse (few blocks tracked: the cheap
 * modes), a removal first asks a small lock-free filter. */
void ptrmap_init(int sparse);
#define PTRMAP_FILTER_BITS 16
extern uint8_t ptrmap_filter[1 << PTRMAP_FILTER_BITS];
static inline int ptrmap_may_hold(uintptr_t p)
{
    return __atomic_load_n(&ptrmap_filter[fib_hash(p >> 4, PTRMAP_FILTER_BITS)], __ATOMIC_RELAXED) != 0;
}
void ptrmap_share(void);                /* before a second thread's first operation */
void ptrmap_prefetch(uintptr_t ptr);     /* the line an insert of ptr probes first, loaded ahead */
void ptrmap_insert(uintptr_t ptr, uint32_t slot, uint64_t size);
int ptrmap_remove(uintptr_t ptr, uint32_t *slot, uint64_t *size);
void ptrmap_wipe_on_fork(int on);       /* ptrmap_init: 1 */
void ptrmap_reset(int fork_child);      /* forget every block (a fork child, an attach session) */
void ptrmap_release(void);       /* a detach: every block forgotten, the map's memory given back */
void ptrmap_lock_all(void);
/* The flush's walk of every live block (cold.c): shard by shard, between
 * begin and end, while the program goes on. */
#define PTRMAP_SHARDS 16384
struct ptrmap_block { uintptr_t ptr; uint64_t size; uint32_t slot; };
void ptrmap_walk_begin(void);
void ptrmap_walk_end(void);
size_t ptrmap_shard_copy(unsigned shard, struct ptrmap_block *out, size_t cap);   /* its count; copied if <= cap */
void ptrmap_unlock_all(void);
/* The expensive level (the unit tests): whole structures checked, nothing
 * else working in them; 0, or -1 with the first broken invariant in why. */
int ptrmap_validate(char *why, size_t n);
int slots_validate(const struct mp_thread *t, char *why, size_t n);    /* t's stack → slot map and slots */

/* ------------------------------------------------------------ interpose.c */
void block_sizes_init(void);    /* block_sizes.c, mp_glibc_sizes: glibc's block sizes read inline (hot.h) */

#include "peak.h"       /* the peak: its copies, epochs and claims */

#endif
