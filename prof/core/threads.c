/* The thread registry: a thread's record made at its first allocation
 * (thread_self), listed newest first and by its sequence number, and
 * finished at its exit. Records are never freed: readers walk the list
 * while threads come and go. The per-thread guard state lives here too. */
#include "hot.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_THREADS 65536

static _Atomic(struct mp_thread *) threads;
static struct mp_thread *_Atomic by_seq[MAX_THREADS];
static _Atomic uint32_t nthreads, nalive;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
/* threads_quiesce: 1 from a detach to the next session; `opening`: threads
 * between their look at it and their new record's publication */
static _Atomic int closed, opening;

/* A record taken back at a detach (threads_quiesce) is no longer this
 * thread's: another thread may have it now. */
static void on_thread_exit(void *arg)
{
    struct mp_guard g = guard_enter(MP_INSIDE);
    int mine = arg == mp_tls.self && !atomic_load(&closed);     /* after the guard's store: threads_quiesce */
    if (mine) thread_exiting(arg);
    guard_leave(&g);
}

static void make_exit_key(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
}

void thread_exiting(struct mp_thread *t)
{
    struct mp_guard g = guard_enter(MP_INSIDE);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)t->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, t->name, sizeof t->name - 1);
        if (n > 0 && t->name[n - 1] == '\n') n--;
        t->name[n > 0 ? n : 0] = 0;
        close(fd);
    }
    peak_publish_live(t, 0, 1);
    if (!atomic_exchange(&t->exited, 1)) atomic_fetch_sub(&nalive, 1);
    spin_lock(&t->tls_lock);
    t->tls = NULL;          /* the thread's storage goes with it */
    spin_unlock(&t->tls_lock);
    guard_leave(&g);
}

/* Records of threads that exited before a detach (exited == 2), which
 * nothing reads any more: a thread made after it takes one (its seq, its
 * slots, its place in the list) instead of a new 100 KB record, so that a
 * server that starts a thread per request, attached to again and again,
 * does not keep a record per thread it ever had (issue 40). */
static _Atomic uint32_t nrecyclable;

void threads_recycle_exited(void)
{
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        int one = 1;
        if (!atomic_compare_exchange_strong(&t->exited, &one, 2)) continue;
        atomic_fetch_add(&nrecyclable, 1);
        /* what only the thread itself read (its caches, walks, captures:
         * most of the record) given back; the next owner starts them anew */
        uintptr_t lo = ((uintptr_t)t->cache + PAGE_SIZE - 1) & ~(uintptr_t)(PAGE_SIZE - 1);
        uintptr_t hi = (uintptr_t)&t->nfree_remote & ~(uintptr_t)(PAGE_SIZE - 1);
        if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
    }
}

/* A recycled record as a new thread's: what the thread owned alone (its
 * caches, walks, stack bounds, tags, Python frames) as new. */
static struct mp_thread *thread_recycled(void)
{
    for (struct mp_thread *t = thread_list(); t && atomic_load(&nrecyclable); t = t->next) {
        int two = 2;
        if (!atomic_compare_exchange_strong(&t->exited, &two, 0)) continue;
        atomic_fetch_sub(&nrecyclable, 1);
        t->tid = (pid_t)syscall(SYS_gettid);
        memset(t->name, 0, sizeof t->name);
        t->active = -1;
        t->ntags = 0, t->tag_slot = 0, t->last_block = 0;
        t->poll = t->poll_every = 0, t->poll_time = 0;
        t->time_mark = t->time_pending = 0;
        t->py.n = t->py.native = 0, t->py.self = 0;
        t->walker.stack_lo = t->walker.stack_hi = 0;
        t->maps_gen = atomic_load(&mp_maps_gen) - 1;   /* its caches cleared at its first capture */
        t->walker.walk_n = t->walker.walk_z = 0;
        return t;
    }
    return NULL;
}

/* A record for the calling thread: a recycled one or a new one (NULL:
 * none can be made, or the profiler is not started: the entry points
 * start it before a thread's first record, entry/start.c). */
static struct mp_thread *thread_make(void)
{
    if (unlikely(!atomic_load_explicit(&mp_initialized, memory_order_acquire))) return NULL;
    struct mp_thread *r = atomic_load(&nrecyclable) ? thread_recycled() : NULL;
    if (r) {
        ptrmap_share();
        if (mp_opt.unwind != UNWIND_LIBUNWIND) unwind_thread_init(&r->walker);
        peak_thread_born(r);
        atomic_fetch_add(&nalive, 1);
        r->tls = &mp_tls;
        mp_tls.self = r;
        time_in_profiler(0);
        pthread_setspecific(exit_key, r);
        return r;
    }
    uint32_t seq = atomic_fetch_add(&nthreads, 1) + 1;
    if (seq > 1) ptrmap_share();    /* before this thread's first map operation */
    if (seq >= MAX_THREADS) return NULL;
    struct mp_thread *t = arena_alloc(sizeof *t, 0);
    if (!t) return NULL;
    t->seq = seq;
    t->tid = (pid_t)syscall(SYS_gettid);
    t->active = -1;
    t->rng = 0x2545F4914F6CDD1Dull ^ ((uint64_t)seq << 17);
    if (mp_opt.unwind != UNWIND_LIBUNWIND) unwind_thread_init(&t->walker);
    peak_thread_born(t);
    t->nostack_slot = slot_new(t, 0);
    t->tls = &mp_tls;
    atomic_store(&by_seq[seq], t);
    t->next = atomic_load(&threads);
    while (!atomic_compare_exchange_weak(&threads, &t->next, t)) {}
    atomic_fetch_add(&nalive, 1);
    mp_tls.self = t;
    time_in_profiler(0);        /* MP_TIME: its time counts from here */
    pthread_once(&exit_key_once, make_exit_key);
    pthread_setspecific(exit_key, t);
    return t;
}

/* The calling thread's record, made on first use (NULL: none can be
 * made, or a detach closed the registry; the thread's operations then
 * count only where they must). Its guard state was set before (every
 * caller is inside the profiler): `opening`'s increment, a full barrier,
 * then the look at `closed` (threads_quiesce's side in reverse). */
struct mp_thread *thread_self(void)
{
    if (likely(mp_tls.self != NULL)) return mp_tls.self;
    if (atomic_load_explicit(&closed, RELAXED)) return NULL;    /* between sessions: no shared write */
    atomic_fetch_add(&opening, 1);
    struct mp_thread *t = atomic_load(&closed) ? NULL : thread_make();
    atomic_fetch_sub(&opening, 1);
    return t;
}

struct mp_thread *thread_list(void) { return atomic_load(&threads); }
uint32_t thread_count(void) { return atomic_load(&nthreads); }

struct mp_thread *thread_by_seq(uint32_t seq)
{
    struct mp_thread *t = seq < MAX_THREADS ? atomic_load_explicit(&by_seq[seq], memory_order_acquire) : NULL;
    MP_ASSERT(!t || t->seq == seq);
    return t;
}

/* A fork child: only the forking thread goes on; the others are gone
 * (their records stay, exited, with empty counters). */
void threads_after_fork_child(int others_gone)
{
    record_memory_after_fork(others_gone);
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        memset(&t->c, 0, sizeof t->c);
        t->pending_live = 0;
        atomic_store(&t->nfree_remote, 0);
        atomic_store(&t->freed_remote, 0);
        if (others_gone && t != mp_tls.self) atomic_store(&t->exited, 1), t->tls = NULL;  /* not the child's */
    }
    if (!others_gone) return;
    if (mp_tls.self) mp_tls.self->tid = (pid_t)syscall(SYS_gettid);
    atomic_store(&nalive, mp_tls.self ? 1 : 0);
}

/* ------------------------------------------------------------ the detach's quiescence */

/* The thread's state (under its record's tls_lock): 1 outside the
 * profiler, its record pointer cleared; 0 inside; -1 gone (exited). */
static int thread_outside(struct mp_thread *t)
{
    spin_lock(&t->tls_lock);
    struct mp_tls *tls = t->tls;
    int out = !tls ? -1 : __atomic_load_n(&tls->in_profiler, __ATOMIC_ACQUIRE) == MP_OUTSIDE;
    spin_unlock(&t->tls_lock);
    return out;
}

/* thread_outside, asked again until it is not 0 or the time is past until. */
static int seen_outside(struct mp_thread *t, double until)
{
    int out;
    while (!(out = thread_outside(t)) && mp_now() < until) sched_yield();
    return out;
}

static void clear_self(struct mp_thread *t)
{
    spin_lock(&t->tls_lock);
    if (t->tls) __atomic_store_n(&t->tls->self, NULL, __ATOMIC_RELEASE);
    spin_unlock(&t->tls_lock);
}

/* Every entry point marks its thread inside (a plain store) and only then
 * reads the thread's record pointer, or makes one (thread_self: after
 * `closed`). Here: `closed`, then no thread between its look at it and
 * its new record (both sides a full barrier: from now on no record is
 * made), every record pointer cleared, membarrier (a full barrier on every
 * running thread of the process: a thread either reads the cleared
 * pointer, or its mark is seen from here), then each thread seen outside
 * once: it can no longer reach its record, which is taken back (exited,
 * recycled: its own pages given back), the caller's last. A thread still
 * inside after 200 ms keeps its record as it is. Without membarrier,
 * nothing is taken back. */
static int take_back(struct mp_thread *t, double until)
{
    if (seen_outside(t, until) == 0) return 0;
    spin_lock(&t->tls_lock);
    t->tls = NULL;
    spin_unlock(&t->tls_lock);
    if (!atomic_exchange(&t->exited, 1)) atomic_fetch_sub(&nalive, 1);
    return 1;
}

/* A detach's last snapshot waits (at most `seconds`) until each thread
 * has been seen outside the profiler once: the entry points are the
 * program's own again (got_restore), so an operation still under way
 * began before, and a thread preempted in its middle (a free taken from
 * the map, its slot not yet counted) would be read half done. Returns the
 * threads still inside at the end (blocked in the real allocator). */
int threads_settle(double seconds)
{
    double until = mp_now() + seconds;
    struct mp_thread *me = mp_tls.self;
    int inside = 0;
    for (struct mp_thread *t = thread_list(); t; t = t->next)
        if (t != me && !atomic_load(&t->exited)) inside += seen_outside(t, until) == 0;
    return inside;
}

static int quiet;       /* the last threads_quiesce took every record back */

int threads_quiesce(void)
{
    quiet = 0;
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) != 0) return 0;
    double until = mp_now() + 0.2;
    atomic_store(&closed, 1);
    while (atomic_load(&opening) && mp_now() < until) sched_yield();
    if (atomic_load(&opening)) return 0;
    struct mp_thread *me = mp_tls.self;
    for (struct mp_thread *t = thread_list(); t; t = t->next)
        if (t != me) clear_self(t);
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);
    int taken = 0, kept = 0;
    for (struct mp_thread *t = thread_list(); t; t = t->next)
        if (t != me && !atomic_load(&t->exited)) {
            int back = take_back(t, until);
            taken += back, kept += !back;
        }
    if (me) {       /* the caller's own too: it goes back to the program */
        mp_tls.self = NULL;
        spin_lock(&me->tls_lock);
        me->tls = NULL;
        spin_unlock(&me->tls_lock);
        if (!atomic_exchange(&me->exited, 1)) atomic_fetch_sub(&nalive, 1);
        taken++;
    }
    threads_recycle_exited();
    quiet = !kept;
    return taken;
}

/* After a threads_quiesce that took every record back (the detach, issue
 * 40): no thread can reach a record, a counter slot or a stack node any
 * more, so the registry is emptied (the records' own tables unmapped; the
 * records themselves are arena memory, which arena_forget gives back) and
 * the next session numbers its threads from 1. 0: some thread kept its
 * record, and everything stays as it is. */
int threads_forget(void)
{
    if (!quiet) return 0;
    uint32_t n = atomic_load(&nthreads);
    for (struct mp_thread *t = thread_list(); t; t = t->next) {
        if (t->slot_keys) mp_unmap(t->slot_keys, (size_t)(t->slot_mask + 1) * 8);
        struct stack_hist_table *h = atomic_load(&t->stack_hist);
        if (h) mp_unmap(h, sizeof *h + (size_t)(h->mask + 1) * sizeof h->e[0]);
    }
    atomic_store(&threads, NULL);
    memset(by_seq, 0, (size_t)(n < MAX_THREADS ? n + 1 : MAX_THREADS) * sizeof by_seq[0]);
    atomic_store(&nthreads, 0);
    atomic_store(&nalive, 0);
    atomic_store(&nrecyclable, 0);
    quiet = 0;
    return 1;
}

void threads_reopen(void)
{
    atomic_store(&closed, 0);
}
