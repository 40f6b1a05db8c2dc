/* What every file of the recorder shares (never installed): the basic
 * macros and helpers, the options, the log, the arena, the guard that marks
 * a thread inside the profiler, signals and the process's life. The
 * recording path adds record.h, the symbol side symbols.h (no umbrella
 * header: a file includes its own layer's and those below). Everything that runs inside malloc obeys: no call to the
 * real malloc, no stdio, no lock held across the unwinder, and the
 * per-thread `mp_tls.in_profiler` flag set while the profiler runs so that any
 * allocation made on its behalf passes straight through. */
#ifndef MP_BASE_H
#define MP_BASE_H

#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MP_EXPORT __attribute__((visibility("default")))
#define MP_TLS __thread __attribute__((tls_model("initial-exec")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define RELAXED memory_order_relaxed
/* the hot path's inline parts: inlined whatever the compiler's size
 * estimate (a call costs the cheap path a tenth of its instructions) */
#define MP_HOT static inline __attribute__((always_inline))

/* Relaxed access to counters that one thread writes and the flush reads. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

#define CACHE_LINE 64
#define PAGE_SIZE 4096

#include "hash.h"        /* fib_hash, fnv1a */

/* The documented invariants, checked in an MP_DEBUG build (make debug; the
 * unit tests and tests/recorder/debug_build.sh run with it): a broken one is said on
 * stderr with its place, and the process aborts. Nothing in other builds.
 * The expensive level checks whole structures at once (ptrmap_validate,
 * slots_validate: record.h; node_map_validate: node_map.h), each 0 or -1
 * with the broken invariant said: the unit tests run them after their
 * operations and plant a break of each kind for them to find. */
#ifdef MP_DEBUG
void mp_assert_failed(const char *what, const char *file, int line) __attribute__((noreturn));
#define MP_ASSERT(cond) ((cond) ? (void)0 : mp_assert_failed(#cond, __FILE__, __LINE__))
#else
#define MP_ASSERT(cond) ((void)0)
#endif

/* The one spin lock: for short sections that never call out. A waiter
 * that spins long yields its CPU: with more threads than CPUs the holder
 * may be the one waiting to run (a system call: safe inside malloc). */
void spin_lock_wait(atomic_flag *l);    /* arena.c */
static inline void spin_lock(atomic_flag *l)
{
    if (unlikely(atomic_flag_test_and_set_explicit(l, memory_order_acquire))) spin_lock_wait(l);
}
static inline void spin_unlock(atomic_flag *l) { atomic_flag_clear_explicit(l, memory_order_release); }

/* ------------------------------------------------------------ options.c */
#include "optdefs.h"     /* the MP_* table, UNWIND_* */

struct mp_options {
    char out[4096];        /* MP_OUT, placeholders put in, made absolute */
    double interval;       /* MP_INTERVAL seconds, 0 = only at exit */
    double tick;           /* MP_TICK: first seconds between points of memory over time, 0 = none */
    int depth;             /* MP_DEPTH */
    long threshold;        /* MP_THRESHOLD */
    uint64_t sample;       /* MP_SAMPLE mean bytes between samples, 0 = off */
    int stacks;            /* MP_STACKS: STACKS_UNWIND, _TAGS, _NONE */
    int enabled;           /* MP_ENABLED */
    int signal;            /* MP_SIGNAL number, 0 = none */
    int unwind;            /* MP_UNWIND */
    uint64_t max_memory;   /* MP_MAX_MEMORY bytes */
    char debuginfo_path[1024];  /* MP_DEBUGINFO_PATH, elfutils' search path format */
    int debuginfo_cache;        /* MP_DEBUGINFO_CACHE: uncompressed copies (common/debugcache.h) */
    int fatal_timeout;          /* MP_FATAL_TIMEOUT seconds for the last snapshot */
    int final;                  /* MP_FINAL: snapshots when the process ends */
    int sync;                   /* MP_SYNC: fdatasync each snapshot (flush.c) */
    int quiet;                  /* MP_QUIET: no info lines */
    int time;                   /* MP_TIME: the time counter */
    int mmap;                   /* MP_MMAP: the program's own mappings (maps.c) */
    int ledger;                 /* MP_LEDGER: the ledger at each snapshot (ledger.c) */
    int cold;                   /* MP_COLD: cold blocks (cold.c) */
    int python;                 /* MP_PYTHON: CPython frames and pymalloc (python.c) */
    unsigned char near_limit[MP_PERCENTS_MAX];  /* MP_NEAR_LIMIT: ascending percentages, 0 after (nearlimit.c) */
    char settings[512];    /* "MP_DEPTH=128 ..." as stored in process.settings */
};
extern struct mp_options mp_opt;
void options_load(void);
void options_load_text(const char *settings);  /* attach.c's settings ("NAME=VALUE" lines) instead of the environment */
int options_given(const char *name);           /* the user set it (not empty), rather than its default */

/* Messages on stderr without allocating: "mallocprof: LEVEL: ...", only
 * while fd 2 is still the file it was at mp_log_init (process start). */
void mp_log_init(void);
void mp_log(const char *level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------ arena.c */
/* Zeroed memory from mmap, never returned. When capped, NULL once
 * MP_MAX_MEMORY (less what is reserved) is reached (the caller degrades:
 * record_memory_full samples, or a new stack is counted as "no stack");
 * uncapped for what exact totals need (threads). */
void *arena_alloc(size_t size, int capped);
void arena_forget(void);        /* a detach: every arena_alloc block given back (nothing may use one) */
/* The profiler's own heap (ownheap.c): this library's malloc family
 * (the linker's --wrap), the namespace's; never the program's allocator. */
void ownheap_lock_all(void);    /* fork.c: around a fork */
void ownheap_unlock_all(void);
void ownheap_trim(void);        /* a detach: the spans with no live block unmapped */
/* Raw mappings for tables that grow; capped = counts against MP_MAX_MEMORY
 * (everything but the pointer map). */
void *mp_map(size_t size, int capped);
void mp_unmap(void *p, size_t size);
int mp_grow_mapped(void *pp, size_t *n, size_t need, size_t elem);     /* grow_array's, in mappings of ours */
void mp_ungrow_mapped(void *pp, size_t *n, size_t elem);               /* its mapping given back */
void *mp_map_unforked(size_t size);     /* not inherited by a fork child (MADV_DONTFORK) */
void mp_arena_after_fork_child(void);   /* its locks free, the unforked mappings forgotten */
/* The profiler's own mappings: the system calls themselves, never through
 * the program's mmap and munmap, which maps.c records. */
void *mp_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int mp_sys_munmap(void *addr, size_t len);
uint64_t mp_memory_used(void);
int mp_memory_exhausted(void);             /* a capped request was refused */
void mp_memory_reserve(uint64_t bytes);     /* capped requests leave `bytes` of the cap */
void mp_memory_use_reserve(void);           /* ...until now: that much more, whatever else the cap holds */
/* The profiler's own memory for the ledger (ledger.c): the ranges it
 * mapped (mp_map's: its heap, ownheap.c, among them; its own stacks), and
 * the live bytes libc's own calls made for its internal work (the flush,
 * the background thread) hold in the program's allocator, counted on the
 * pass-through path only where the thread counts (mp_own_counting): the
 * program's allocations are never counted here. */
struct own_range { uintptr_t lo, hi; };
enum range_owner { RANGES_PROFILER, RANGES_HEAP, RANGES_N };    /* HEAP: pymalloc's arenas (python.c) */
void mp_range_add(enum range_owner o, void *p, size_t size);
int mp_range_remove(enum range_owner o, void *p, size_t size);     /* 1: it was an unforked mapping's */
size_t mp_ranges(enum range_owner o, struct own_range *out, size_t max);    /* how many there are */
extern MP_TLS int mp_own_counting;
extern _Atomic int64_t mp_own_heap;
void ledger_own_block(void *p, int sign);  /* ledger_heap.c: the profiler's own mmapped chunks, by address */

/* ------------------------------------------------------------ the guard */
/* Where the thread is, one per-thread value (threads.c): every entry point
 * reads it first, and every hook that may re-enter (dlsym, libunwind,
 * SQLite, libdw, pthread_create) finds it set. */
enum mp_state {
    MP_OUTSIDE = 0,     /* the program's own code: its allocations are recorded */
    MP_INSIDE,          /* the allocator or the profiler: allocations pass through */
    MP_IN_HANDLER,      /* a program's signal handler that interrupted MP_INSIDE: what it
                         * allocates and frees is logged, recorded on the way out (handler_log.c) */
    MP_IN_PROBE,        /* interpose_check's probe: is this malloc the program's? */
};

/* The thread's state that every entry point reads, in one thread-local
 * struct: each initial-exec variable of its own costs a load of its
 * offset, these three share one. pending: PENDING_* below. */
struct mp_thread;
struct mp_tls {
    enum mp_state in_profiler;
    volatile int pending;
    struct mp_thread *self;     /* the thread's record, NULL until thread_self() (threads.c) */
};
extern MP_TLS struct mp_tls mp_tls;

/* What an entry point found, given back as it leaves: the state, and
 * errno (err < 0: not kept, guard_keep_errno). */
struct mp_guard { enum mp_state was; int err; };

/* the compiler takes malloc for a builtin that reads no global: without
 * the fences it may drop the state's store before a malloc call as dead */
static inline void guard_set(enum mp_state s)
{
    atomic_signal_fence(memory_order_seq_cst);
    mp_tls.in_profiler = s;
    atomic_signal_fence(memory_order_seq_cst);
}

/* The profiler's entry points (API, flush, init, hooks other than the
 * malloc family): marked `to`, errno kept from here. */
static inline struct mp_guard guard_enter(enum mp_state to)
{
    struct mp_guard g = { mp_tls.in_profiler, errno };
    guard_set(to);
    return g;
}
/* The malloc family's: errno is the real call's, which comes next; the
 * recording keeps it (guard_keep_errno) before anything that may change it. */
static inline struct mp_guard guard_enter_call(void)
{
    struct mp_guard g = { MP_OUTSIDE, -1 };
    guard_set(MP_INSIDE);
    return g;
}
static inline void guard_keep_errno(struct mp_guard *g)
{
    if (g->err < 0) g->err = errno;
}
/* errno given back now and no longer kept: a real call that sets its own
 * comes next (realloc). */
static inline void guard_give_errno(struct mp_guard *g)
{
    if (g->err >= 0) errno = g->err;
    g->err = -1;
}

/* Work left for the thread's way out of the profiler (guard_leave back to
 * MP_OUTSIDE): a fatal signal's last snapshot, the signal handlers' log. */
#define PENDING_FATAL 1
#define PENDING_HANDLER 2
/* The work's runner: process/signals.c's, installed before any of its
 * handlers can leave work (they alone do), so that the guard, which every
 * layer uses, calls nothing above it. */
extern void (*mp_run_pending)(void);
static inline void guard_leave(struct mp_guard *g)
{
    atomic_signal_fence(memory_order_seq_cst);
    if (g->err >= 0) errno = g->err;    /* mp_run_pending keeps it too */
    mp_tls.in_profiler = g->was;
    if (g->was == MP_OUTSIDE) {
        atomic_signal_fence(memory_order_seq_cst);
        if (unlikely(mp_tls.pending)) mp_run_pending();
    }
}
/* ------------------------------------------------------------ descriptors (fds.c) */
/* A descriptor the profiler or a library it uses keeps: moved above the
 * program's range (from 64 below the soft RLIMIT_NOFILE, close-on-exec),
 * so that a program that closes every descriptor and opens its own gets
 * the numbers it expects. fd < 0 is returned as is; where there is no
 * room up there, the descriptor stays where it is. */
int mp_fd_high(int fd);

/* The files the profiler keeps open to read with pread, out of the
 * program's way: opened by mp_kept_open_all in the program's own thread
 * (init, a new attach session, the fork child), and again at once when the
 * program closes their number (fds.c). mp_kept_fd: the descriptor, -1 if
 * the file cannot be opened. */
enum mp_kept_file { KEPT_STATM, KEPT_PAGEMAP, KEPT_SMAPS, KEPT_MEM, KEPT_CG_USAGE, KEPT_CG_LIMIT, NKEPT };
void mp_kept_open_all(void);
/* The file a kept file without a fixed path is (the memory cgroup's:
 * nearlimit.c), opened now; "": none. In the program's thread. */
void mp_kept_path(enum mp_kept_file which, const char *path);
int mp_kept_fd(enum mp_kept_file which);
/* The descriptor if it is still ours, else -1 without opening anything:
 * for the points of memory over time, which the background thread takes
 * while the program runs (its close reopens the file at once, in its
 * own thread: another thread's open there would take a number the
 * program is about to be given). */
int mp_kept_fd_ours(enum mp_kept_file which);
/* SQLite's files opened for the profiler go above the program's range */
void mp_sqlite_fds_high(void);

/* ------------------------------------------------------------ ownstack.c */
/* A stack of the profiler's own for heavy work (ownstack.c), used by the
 * holder of one lock at a time: own_stack_run calls fn(arg) on it. */
#include <ucontext.h>
struct own_stack { size_t size; char *base; int failed; void (*fn)(void *); void *arg; ucontext_t ctx[2]; };
extern MP_TLS struct own_stack *own_stack_current;
void own_stack_run(struct own_stack *s, void (*fn)(void *), void *arg);
void own_stack_release(struct own_stack *s);    /* its pages given back (its lock held) */

/* ------------------------------------------------------------ signals.c */
#include <signal.h>
#include <setjmp.h>
/* A stretch of the profiler's own work that can be given up (libdw's:
 * on out of memory it calls error() with EXIT_FAILURE, and some of its
 * allocation failures fault): while mp_recover is set on the thread,
 * inside the profiler, error() and a fault jump back to it (1: error, 2:
 * fault) instead of ending the program; what the stretch used is then
 * dropped, never used again. RECOVERABLE runs `body` so; `lost` after a
 * jump. */
extern MP_TLS sigjmp_buf *mp_recover;
#define RECOVERABLE(body, lost)                                              \
    do {                                                                     \
        sigjmp_buf jb_;                                                      \
        sigjmp_buf *outer_ = mp_recover;                                     \
        if (sigsetjmp(jb_, 1) == 0) {                                        \
            mp_recover = &jb_;                                               \
            body;                                                            \
        } else {                                                             \
            lost;                                                            \
        }                                                                    \
        mp_recover = outer_;                                                 \
    } while (0)
/* sigmask.c: signals held around the profiler's own malloc calls (and
 * cancellation off); the fatal signal being handled stays deliverable */
void signals_hold(sigset_t *old);
void signals_release(const sigset_t *old);
extern volatile sig_atomic_t mp_signal_dying;

/* ------------------------------------------------------------ proc.c */
/* The process as the lower layers read it; process/ sets it. */
double mp_now(void);
extern char mp_run_token[64];
extern double mp_start_time;    /* when profiling of this process began */
long mp_raw_syscall(long n, long a, long b, long c, long d, long e, long f);   /* errno set as syscall(2)'s */
extern _Atomic int mp_initialized;
extern pid_t mp_pid;            /* getpid() as of init or fork (not vfork) */
/* getppid() then: the process's parent is the one that started it, even
 * when that one has gone by the first snapshot (a daemon's double fork:
 * its parent then is init or a subreaper) */
extern pid_t mp_ppid;
/* How the process is ending, for process.ended ("exit 0", "exec",
 * "signal SIGSEGV"), set just before its last snapshot; "" until then. */
extern char mp_ended[32];
/* 1 when the library was loaded into a running process (mpquery record
 * --pid) rather than preloaded: dormant until mp_attach, between sessions
 * after mp_detach. */
extern int mp_attach_mode;
struct dl_phdr_info;
/* The address range [lo, hi) of an object's loadable segments (lo >= hi: none). */
void object_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi);
/* proc.c: fn for each line of a file read into buf (no malloc, no stdio) */
int mp_each_line(const char *path, char *buf, size_t size, int (*fn)(char *line, void *arg), void *arg);

/* ------------------------------------------------------------ the profiler's thread, as state */
/* The profiler's thread (process/ sets it, 0: not running), read below as
 * state: it is there (record_poll), the caller is it (flush.c's points). */
extern _Atomic unsigned long mp_background;
/* A point of memory over time if one is due (snapshot/ticks.c's
 * ticks_take, installed by process/ at init): the allocating threads'
 * clock poll (core's record_poll) calls it, not up. */
extern double (*mp_tick_hook)(double now, int overdue);
static inline int background_running_now(void) { return atomic_load_explicit(&mp_background, memory_order_relaxed) != 0; }
static inline int background_is_self(void)
{
    unsigned long b = atomic_load(&mp_background);
    return b && pthread_equal(pthread_self(), (pthread_t)b);
}

#endif
