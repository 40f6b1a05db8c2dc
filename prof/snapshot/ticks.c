/* Memory over time without setup: the process's totals (ncalls, memtot,
 * memlive), its resident size and the bytes of its own mappings (maps.c), read by the background thread every
 * MP_TICK seconds, into a buffer of at most 2 * TICK_POINTS points (static,
 * the profiler's memory). When it is full every other point is dropped and
 * the interval doubled: a run of any length keeps TICK_POINTS to twice as
 * many evenly spaced points. The totals are read as the snapshots read
 * them (readers.c, without stopping the threads), RSS with a pread of the
 * statm kept open (fds.c). Each flush copies the buffer (ticks_copy) and
 * writes it with its snapshot (flush_ticks.c).
 *
 * While the program runs, consecutive points are at most twice the kept
 * spacing apart (MP_TICK doubled once a thinning): the background thread
 * takes them on time, and when it is late (writing a snapshot, or not
 * scheduled on a busy machine: issue 40 saw 335 ms without a point) the
 * program's allocations take the point once it is a quarter of the
 * spacing overdue (record_poll), and so does the flush's SQLite work
 * (flush.c). A program that neither allocates nor gets the CPU changes
 * nothing a point would show but its RSS. */
#include "symbols.h"
#include "snapshot.h"
#include "maps.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct tick_point points[2 * TICK_POINTS];
static size_t npoints;
static double every;            /* the interval now */
/* the next point's time (0: none), and when it is overdue: written under
 * the lock, read without it first */
static _Atomic double next_due, overdue_at;
static pthread_mutex_t tick_mutex = PTHREAD_MUTEX_INITIALIZER;
/* The process is ending (ticks_stop): no more points, and the RSS of its
 * last one is as it was then, not what the last snapshot's symbol
 * resolution (the profiler's own) added. */
static _Atomic int stopped;
static uint64_t rss_at_stop;

void ticks_lock(void) { pthread_mutex_lock(&tick_mutex); }
void ticks_unlock(void) { pthread_mutex_unlock(&tick_mutex); }

static void set_due(double due)
{
    atomic_store_explicit(&next_due, due, memory_order_relaxed);
    atomic_store_explicit(&overdue_at, due ? due + every / 4 : 0, memory_order_relaxed);
}

/* The first point at once, the others every MP_TICK seconds (from start:
 * a fork child starts its own). */
void ticks_start(double now)
{
    npoints = 0;
    stopped = 0;
    rss_at_stop = 0;
    every = mp_opt.tick;
    set_due(every > 0 ? now : 0);
}

/* The forking thread holds the lock (fork_prepare) */
void ticks_after_fork_child(void)
{
    ticks_unlock();
    ticks_start(mp_start_time);
}

/* Resident bytes: /proc/self/statm's second field (pages), read without
 * stdio or malloc; 0 when it cannot be read. Nothing is opened here: in
 * the moment between the program's close of the kept statm and its
 * reopening (fds.c, in the program's thread), the last value read. */
uint64_t ticks_rss(void)
{
    static _Atomic uint64_t last;
    char buf[128];
    int fd = mp_kept_fd_ours(KEPT_STATM);
    if (fd < 0) return atomic_load_explicit(&last, memory_order_relaxed);
    /* the system call itself: pread is a cancellation point, and an
     * allocating thread takes points it is late for (record_poll): a
     * pending deferred cancel must not land inside its malloc */
    ssize_t n = mp_raw_syscall(SYS_pread64, fd, (long)buf, sizeof buf - 1, 0, 0, 0);
    if (n <= 0) return atomic_load_explicit(&last, memory_order_relaxed);
    buf[n] = 0;
    const char *p = buf;
    while (*p && *p != ' ') p++;        /* size */
    uint64_t pages = 0;
    for (p++; *p >= '0' && *p <= '9'; p++) pages = pages * 10 + (uint64_t)(*p - '0');
    uint64_t rss = pages * (uint64_t)sysconf(_SC_PAGESIZE);
    atomic_store_explicit(&last, rss, memory_order_relaxed);
    return rss;
}

/* The buffer is full: every other point kept (the first among them), the
 * interval doubled, so the points stay evenly spaced. */
static void thin_out(void)
{
    for (size_t i = 0; 2 * i < npoints; i++) points[i] = points[2 * i];
    npoints = (npoints + 1) / 2;
    every *= 2;
}

/* overdue: only a point a quarter of the interval late (the background
 * thread takes the others). Several threads may find the same point due:
 * the first to hold the lock takes it. */
double ticks_take(double now, int overdue)
{
    _Atomic double *when = overdue ? &overdue_at : &next_due;
    double due = atomic_load_explicit(&next_due, memory_order_relaxed);
    if (stopped) return 0;
    if (!due || now < atomic_load_explicit(when, memory_order_relaxed)) return due;
    struct mp_totals t;
    process_totals(0, &t);
    struct tick_point pt = { now, t.ncalls, t.memtot, t.live > 0 ? (uint64_t)t.live : 0, ticks_rss(), maps_mapped_now() };
    ticks_lock();
    due = atomic_load_explicit(&next_due, memory_order_relaxed);
    if (due && now >= atomic_load_explicit(when, memory_order_relaxed) && !stopped) {
        if (npoints == 2 * TICK_POINTS) thin_out();
        points[npoints++] = pt;
        while (due <= now) due += every;       /* the missed ones are not made up */
        set_due(due);
    }
    ticks_unlock();
    return stopped ? 0 : due;
}

size_t ticks_copy(struct tick_point *out)
{
    ticks_lock();
    size_t n = npoints;
    memcpy(out, points, n * sizeof *out);
    ticks_unlock();
    return n;
}

void ticks_stop(void)
{
    uint64_t rss = ticks_rss();
    ticks_lock();
    if (!stopped) rss_at_stop = rss;
    stopped = 1;
    ticks_unlock();
}

uint64_t ticks_last_rss(void)
{
    ticks_lock();
    uint64_t rss = stopped ? rss_at_stop : 0;
    ticks_unlock();
    return rss ? rss : ticks_rss();
}
