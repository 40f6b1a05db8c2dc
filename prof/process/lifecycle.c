/* The profiler's life in a process: start, snapshots over time, fork, exec,
 * dlclose and exit.
 *
 * Init runs once (the constructor, or the first allocation if that comes
 * earlier). A background thread "mallocprof" takes the points of memory
 * over time (ticks.c), writes interval snapshots and the ones MP_SIGNAL
 * asks for (the handler only posts a semaphore). fork
 * handlers take every profiler lock so the child starts consistent;
 * unshare and setns into a user namespace run with the thread stopped
 * (they want a process of one thread). fork (fork.c), dlclose (dlclose.c)
 * and the end (ending.c: exit, _exit, main's return, exec) have files of
 * their own. */
#define _GNU_SOURCE
#include "symbols.h"
#include "snapshot.h"
#include "process.h"
#include "hooks.h"
#include "cold.h"
#include "python.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t wakeup;
static _Atomic int signal_pending;

/* Another allocator preloaded before this library (LD_PRELOAD=libjemalloc.so
 * :libmallocprof.so) owns malloc: the program never calls ours. The malloc
 * the program's own calls reach is called once to see whether it is ours
 * (an executable that takes malloc's address exports a stub of its own,
 * which leads here all the same). */
static void interpose_check(void)
{
    void *(*owner)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "malloc");
    void (*owner_free)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "free");
    if (!owner || !owner_free) return;
    struct mp_guard g = guard_enter(MP_IN_PROBE);
    mp_probe_seen = 0;
    void *p = owner(1);
    guard_set(MP_INSIDE);
    owner_free(p);
    guard_leave(&g);
    if (mp_probe_seen) return;
    Dl_info info = { 0 };
    const char *lib = dladdr((void *)owner, &info) && info.dli_fname ? info.dli_fname : "another library";
    mp_log("warning", "malloc is defined by %s, loaded before libmallocprof.so: nothing will be recorded; "
           "put libmallocprof.so first in LD_PRELOAD", lib);
}

/* ------------------------------------------------------------ background */

/* The earlier of two times, 0 meaning none. */
static double earliest(double a, double b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

/* The thread, joinable: a program that needs to be single-threaded for a
 * moment (unshare or setns into a user namespace) has it stopped, and
 * started again after (background_pause).
 *
 * It starts when it is wanted (issue 31): at init when it has work from
 * the start (full capture, whose stack tree and peak it writes ahead of
 * the exit; MP_INTERVAL, MP_SIGNAL, an MP_TICK the user gave; an attach
 * session), else when the program starts its first thread. A second
 * thread makes glibc's malloc take its arenas' locks for good (its
 * single-thread shortcut ends): an idle profiler's thread cost churn
 * +20 % of its own CPU time (0.15 -> 0.18 s). Until then, the points of
 * memory over time come from the allocations (record_poll). */
static pthread_t background;
static _Atomic int background_running, background_wanted;
static _Atomic int background_quit;
/* A detach's last snapshot, written by this thread (background_run), not
 * by the thread that detaches (a program's thread, stopped in mpquery's
 * injected call). */
static void (*_Atomic background_job)(void);
static sem_t job_done;

/* The thread's state, and base's copy that the layers below read
 * (background_is_self, background_running_now) */
static void set_running(int on)
{
    atomic_store(&background_running, on);
    atomic_store(&mp_background, on ? (unsigned long)background : 0);
}

static int background_eager(void)
{
    return mp_track_all || mp_opt.interval > 0 || mp_opt.signal || mp_attach_mode || options_given("MP_TICK");
}

/* The thread's stack is the profiler's memory (the ledger). */
static void own_stack_known(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) mp_range_add(RANGES_PROFILER, addr, size);
    pthread_attr_destroy(&attr);
}

/* A session's child whose session is over: recording ends, and with it
 * this thread (nobody joins it). */
static void *background_end_session(void)
{
    attach_end_here();
    pthread_detach(pthread_self());
    set_running(0);
    return NULL;
}

static void *background_main(void *arg)
{
    (void)arg;
    guard_set(MP_INSIDE);       /* everything this thread allocates is ours */
    mp_own_counting = 1;
    pthread_setname_np(pthread_self(), "mallocprof");
    own_stack_known();
    double next = mp_opt.interval > 0 ? mp_now() + mp_opt.interval : 0;
    for (;;) {
        struct timespec ts;
        double until = earliest(earliest(next, ticks_take(mp_now(), 0)), nearlimit_look(mp_now()));
        if (!until) until = mp_now() + 3600;
        if (tree_watching()) until = earliest(until, mp_now() + 0.02);     /* attach_tree.c */
        ts.tv_sec = (time_t)until;
        ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
        int woke = sem_timedwait(&wakeup, &ts) == 0;
        if (atomic_load(&background_quit)) return NULL;
        void (*job)(void) = atomic_exchange(&background_job, NULL);
        if (job) {
            job();
            sem_post(&job_done);
            continue;
        }
        if (tree_session_over()) return background_end_session();
        if (woke && atomic_exchange(&signal_pending, 0)) flush_snapshot(FLUSH_SIGNAL, "");
        if (next && mp_now() >= next) {
            flush_snapshot(FLUSH_INTERVAL, "");
            while (next <= mp_now()) next += mp_opt.interval;
        }
        if (mp_opt.final) flush_ahead();
    }
    return NULL;
}

/* The background thread runs by default, for the ticks (ticks.c);
 * without ticks, interval snapshots or a snapshot signal, there is none. */
static void start_background(void)
{
    set_running(0);
    if (!background_wanted ||
        (mp_opt.interval <= 0 && !mp_opt.signal && mp_opt.tick <= 0 && !tree_watching() && !nearlimit_watching()))
        return;
    atomic_store(&background_quit, 0);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* signals go to the program's threads */
    if (pthread_create(&background, NULL, background_main, NULL) == 0) set_running(1);
    else mp_log("warning", "cannot start the profiler's thread; only the exit snapshot and its point of memory over "
                "time will be written");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The thread gone (stop) or back (start): around a call that fails in a
 * process of several threads. */
void background_pause(int stop)
{
    if (!stop) {
        if (atomic_load(&mp_initialized)) start_background();
        return;
    }
    if (!background_running) return;
    atomic_store(&background_quit, 1);
    sem_post(&wakeup);
    pthread_join(background, NULL);
    set_running(0);
}

/* job run by the profiler's thread, waited for; by the caller when
 * there is no such thread. */
void background_run(void (*job)(void))
{
    if (!atomic_load(&background_running) || background_is_self()) {
        job();
        return;
    }
    sem_init(&job_done, 0, 0);
    atomic_store(&background_job, job);
    sem_post(&wakeup);
    while (sem_wait(&job_done) != 0) continue;
}

static void on_snapshot_signal(int sig)
{
    (void)sig;
    atomic_store(&signal_pending, 1);
    sem_post(&wakeup);      /* async-signal-safe */
}

/* ------------------------------------------------------------ threads */

/* Every thread the program makes starts in thread_start, which learns the
 * thread's stack bounds while no lock is held (unwind_thread_start) and then
 * jumps to the program's function: a sibling call, so no frame of ours stays
 * under the thread's stacks. */
struct thread_start { void *(*fn)(void *); void *arg; };

static void *thread_start(void *p)
{
    struct thread_start s = *(struct thread_start *)p;
    mp_next.free(p);
    struct mp_guard g = guard_enter(MP_INSIDE);
    unwind_thread_start();
    guard_leave(&g);
    return s.fn(s.arg);
}

MP_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    HOOKS_READY();
    if (atomic_load(&mp_initialized)) unwind_prepare(1);       /* before any thread's vector (unwind.c) */
    if (!atomic_load(&background_wanted) && atomic_load(&mp_initialized) && !atomic_exchange(&background_wanted, 1)) {
        struct mp_guard g = guard_enter(MP_INSIDE);
        start_background();         /* the program's second thread: then ours costs it nothing more */
        guard_leave(&g);
    }
    struct thread_start *s = mp_next.malloc(sizeof *s);      /* the profiler's, not the program's */
    if (!s) return mp_next.pthread_create(th, attr, fn, arg);
    *s = (struct thread_start){ fn, arg };
    int rc = mp_next.pthread_create(th, attr, thread_start, s);
    if (rc != 0) mp_next.free(s);
    return rc;
}

/* The fork child's background thread: a new semaphore, a new thread. */
void background_after_fork_child(void)
{
    sem_init(&wakeup, 0, 0);
    background_wanted = background_eager();     /* the child has one thread */
    start_background();
}

/* ------------------------------------------------------------ init */

/* The run token ties the processes of one run together (forks and execs
 * inherit MP_RUN); MP_OUT is made absolute for children that chdir. Both
 * reach children through the environment, in an environ array of ours
 * (arena memory, never freed) rather than by setenv: setenv would allocate
 * its array while the profiler runs, and the program's next setenv would
 * free it as a block the profiler never saw. glibc copies an environ it did
 * not allocate itself before changing its size. */
static void export_environment(void)
{
    static char run_var[sizeof mp_run_token + 8], out_var[sizeof mp_opt.out + 8];
    snprintf(run_var, sizeof run_var, "MP_RUN=%s", mp_run_token);
    snprintf(out_var, sizeof out_var, "MP_OUT=%s", mp_opt.out);
    size_t n = 0, k = 0;
    int same = 0;
    for (char **e = environ; e && *e; e++, n++)
        same += !strcmp(*e, run_var) || !strcmp(*e, out_var);
    if (same == 2) return;
    char **env = arena_alloc((n + 3) * sizeof *env, 0);
    if (!env) return;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "MP_RUN=", 7) && strncmp(environ[i], "MP_OUT=", 7)) env[k++] = environ[i];
    env[k++] = run_var;
    env[k++] = out_var;
    env[k] = NULL;
    environ = env;
}

/* MP_OUT's placeholders (optdefs.h: %p, %e, %h, %t), put in by the process
 * that starts a run, once: the run's other processes inherit the file it
 * names (export_environment), since one file holds a run's process tree.
 * An unknown placeholder stays as written, with a warning. */
static void expand_out(const char *host)
{
    const char *pattern = getenv("MP_OUT");
    if (!pattern || !strchr(pattern, '%')) return;
    char exe[4096], path[sizeof mp_opt.out], unknown;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    const char *slash = strrchr(exe, '/');
    struct mp_out_values v = { getpid(), (long)mp_start_time, slash ? slash + 1 : program_invocation_short_name, host };
    if (mp_out_expand(pattern, &v, path, sizeof path, &unknown) || mp_option_parse(VAL_PATH, path, mp_opt.out, sizeof mp_opt.out)) {
        mp_log("warning", "MP_OUT=%s is too long once its placeholders are put in; writing %s", pattern, mp_opt.out);
        return;
    }
    if (unknown)
        mp_log("warning", "MP_OUT=%s: unknown placeholder %%%c, kept as it is (%%p pid, %%e executable, %%h host, "
               "%%t start time, %%%% a '%%')", pattern, unknown);
}

/* 1 when this process starts a run (no MP_RUN inherited). */
static int init_run_environment(void)
{
    const char *run = getenv("MP_RUN");
    int first = !(run && *run && strlen(run) < sizeof mp_run_token);
    if (!first) {
        strcpy(mp_run_token, run);
    } else {
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        snprintf(mp_run_token, sizeof mp_run_token, "%.30s-%d-%.6f", host, (int)getpid(), mp_now());
        expand_out(host);
    }
    export_environment();
    return first;
}

/* A Go program (its executable carries a "Go" ELF note) ends with the
 * exit_group system call, past libc's exit and every destructor: nothing
 * can write its exit snapshot. */
static int go_note(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *nh;
            if (nh->n_namesz >= 3 && name + 3 <= end && !memcmp(name, "Go", 3)) *(int *)arg = 1;
            p = name + ((nh->n_namesz + 3) & ~3u) + ((nh->n_descsz + 3) & ~3u);
        }
    }
    return 1;       /* the first object is the executable */
}

static void check_go(void)
{
    int go = 0;
    dl_iterate_phdr(go_note, &go);
    if (go && mp_opt.interval <= 0)
        mp_log("warning", "a Go program: ended the Go way (return from main, os.Exit), it makes the exit_group "
               "system call, which no exit handler sees, and no exit snapshot is written; set MP_INTERVAL "
               "(e.g. 1) to keep snapshots while it runs");
}

void mp_ensure_init(void)
{
    if (likely(atomic_load_explicit(&mp_initialized, memory_order_acquire))) return;
    struct mp_guard g = guard_enter(MP_INSIDE);
    sigset_t mask;
    signals_hold(&mask);
    pthread_mutex_lock(&init_lock);
    if (!atomic_load(&mp_initialized)) {
        mp_pid = getpid();
        mp_ppid = getppid();
        mp_start_time = mp_now();
        mp_log_init();
        if (!mp_attach_mode) options_load();    /* attached: mp_attach loaded its settings */
        mp_kept_open_all();         /* in the program's thread (fds.c) */
        nearlimit_init();
        ticks_start(mp_start_time);
        mp_tick_hook = ticks_take;  /* the allocating threads' clock poll (record_poll) */
        atomic_store(&mp_active, mp_opt.enabled);
        atomic_store(&mp_threshold, mp_opt.threshold);
        unwind_init();
        if (mp_opt.enabled) unwind_prepare(0);     /* libdw, libunwind: our namespace (ns.c), if stacks are walked */
        record_init();
        block_sizes_init();
        python_init(mp_track_all);
        cold_init();
        flush_check_output(mp_attach_mode ? attach_run_start() : init_run_environment());
        sem_init(&wakeup, 0, 0);
        fork_init();
        ending_init();
        if (!mp_attach_mode) {      /* attached: the program's signals and environment are left alone */
            signals_init();
            interpose_check();
        }
        check_go();
        if (mp_opt.signal && !mp_attach_mode) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_snapshot_signal;
            sa.sa_flags = SA_RESTART;
            sigemptyset(&sa.sa_mask);
            sigaction(mp_opt.signal, &sa, NULL);
        }
        atomic_store_explicit(&mp_initialized, 1, memory_order_release);
        background_wanted = background_eager();
        /* with the thread, the first point of memory over time now, before
         * the program's first allocation (the thread's come when it runs,
         * which on a busy machine may be later); without it, the
         * allocations take them (record_poll) */
        if (background_wanted) ticks_take(mp_now(), 0);
        start_background();
    }
    pthread_mutex_unlock(&init_lock);
    signals_release(&mask);
    guard_leave(&g);
}

/* ------------------------------------------------------------ one thread */

/* unshare(CLONE_NEWUSER) and setns into a user namespace want a process
 * of one thread: the profiler's is stopped for the call and started again
 * after. Its exit is seen by the kernel a moment after pthread_join
 * returns: a call refused with EINVAL is tried again, for up to 50 ms
 * (the program's own threads make it fail for good). */
static int single_threaded_call(long (*call)(long, long), long a, long b)
{
    struct mp_guard g = guard_enter(MP_INSIDE);
    int was_running = background_running;
    background_pause(1);
    long rc;
    for (int tries = 0;; tries++) {
        rc = call(a, b);
        if (rc == 0 || errno != EINVAL || !was_running || tries == 50) break;
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    int err = errno;
    if (was_running) background_pause(0);
    guard_leave(&g);
    errno = err;
    return (int)rc;
}

static long call_unshare(long flags, long unused)
{
    (void)unused;
    HOOKS_READY();
    if (!mp_next.unshare) return errno = ENOSYS, -1;
    return mp_next.unshare((int)flags);
}

static long call_setns(long fd, long nstype)
{
    HOOKS_READY();
    if (!mp_next.setns) return errno = ENOSYS, -1;
    return mp_next.setns((int)fd, (int)nstype);
}

MP_EXPORT int unshare(int flags)
{
    if (!(flags & CLONE_NEWUSER)) return (int)call_unshare(flags, 0);
    return single_threaded_call(call_unshare, flags, 0);
}

/* nstype 0: any namespace, maybe a user namespace */
MP_EXPORT int setns(int fd, int nstype)
{
    if (nstype && !(nstype & CLONE_NEWUSER)) return (int)call_setns(fd, nstype);
    return single_threaded_call(call_setns, fd, nstype);
}
