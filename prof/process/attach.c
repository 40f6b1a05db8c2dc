/* Recording a running process from a moment on (mpquery record --pid).
 *
 * mpquery makes the process dlopen this library, then call mp_attach with
 * the settings ("NAME=VALUE" lines: the MP_* options, MP_RUN) and, at the
 * end, mp_detach. Loaded that way the library is dormant (the constructor
 * does nothing) until mp_attach starts a session: the recorder from now,
 * as if the process had just started (the first session initializes, a
 * later one resets every counter as a fork child does), then every loaded
 * module's allocator calls rebound to our hooks (got.c). mp_detach puts
 * them back, writes the session's last snapshot (process.ended "detach")
 * and stops the profiler's thread; the library stays loaded, dormant. The
 * process's exit during a session writes that snapshot as any exit. A
 * block allocated outside the session and freed in it counts as an
 * unknown free. */
#define _GNU_SOURCE
#include "python.h"
#include "snapshot.h"
#include "process.h"
#include "symbols.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <sqlite3.h>

static int attached;
static char settings[8192];
static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;

/* Preloaded (or linked before libc), this library's malloc is the
 * process's: the loader binds symbols in the order of its list of objects,
 * which dl_iterate_phdr follows; loaded later, by dlopen, this library
 * comes after libc. (Not dlsym(RTLD_DEFAULT, "malloc"): a non-PIE
 * executable that takes malloc's address defines it as its own PLT entry,
 * Debian's python3 does.) */
struct order { uintptr_t self, libc; int self_first; };

static int holds(const struct dl_phdr_info *info, uintptr_t a)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && a >= lo && a - lo < ph->p_memsz) return 1;
    }
    return 0;
}

static int before_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct order *o = arg;
    if (holds(info, o->self)) return o->self_first = 1;
    return holds(info, o->libc);            /* libc came first: stop */
}

int attach_dormant(void)
{
    struct order o = { (uintptr_t)attach_dormant, (uintptr_t)gnu_get_libc_version, 0 };
    dl_iterate_phdr(before_libc, &o);
    mp_attach_mode = !o.self_first;
    return mp_attach_mode;
}

/* Loaded by mpquery and between sessions (or never started): the
 * profiler does nothing, not even for a fork (fork.c). */
int attach_idle(void)
{
    return mp_attach_mode && !__atomic_load_n(&attached, __ATOMIC_RELAXED);
}

int attach_run_start(void)
{
    const char *run = strstr(settings, "MP_RUN=");
    size_t n = run ? strcspn(run + 7, "\n") : 0;
    if (run && (run == settings || run[-1] == '\n') && n && n < sizeof mp_run_token) {
        memcpy(mp_run_token, run + 7, n);
        mp_run_token[n] = 0;
    } else {
        snprintf(mp_run_token, sizeof mp_run_token, "attach-%d-%.6f", (int)getpid(), mp_now());
    }
    return 1;
}

/* The recorder of a session: the first initializes, the next ones start
 * from zero. */
static void session_start(void)
{
    if (!atomic_load(&mp_initialized)) {
        mp_ensure_init();
        return;
    }
    struct mp_guard g = guard_enter(MP_INSIDE);
    options_load_text(settings);
    fork_new_session();         /* the points of memory over time start again too */
    if (mp_opt.enabled) unwind_prepare(0);      /* before the first stack */
    atomic_store(&mp_active, mp_opt.enabled);
    atomic_store(&mp_threshold, mp_opt.threshold);
    hot_path_update();
    python_session_start();
    flush_check_output(attach_run_start());
    background_pause(0);
    guard_leave(&g);
}

/* The thread mpquery stopped is inside the profiler (a hook, or the
 * exit snapshot of a process that is ending): mpquery lets it go and
 * tries again at another moment. */
#define ATTACH_BUSY -5

/* 0: recording; -1: the settings are too long; -2: the library is
 * preloaded (the process is profiled already); -3: a session is under way;
 * -4: the modules could not be rebound; ATTACH_BUSY. */
MP_EXPORT int mp_attach(const char *text)
{
    if (!mp_attach_mode) return -2;
    if (mp_tls.in_profiler != MP_OUTSIDE) return ATTACH_BUSY;
    if (strlen(text) >= sizeof settings) return -1;
    pthread_mutex_lock(&attach_lock);
    int rc = attached ? -3 : 0;
    if (!rc) {
        strcpy(settings, text);
        threads_reopen();
        if (!atomic_load(&mp_initialized)) options_load_text(settings);
        session_start();
        rc = got_patch() == 0 ? 0 : -4;
        attached = rc == 0;
        if (attached) tree_session_start();
    }
    pthread_mutex_unlock(&attach_lock);
    return rc;
}

/* What the session made, given back once its last snapshot is written
 * (issue 40): libdw's sessions (the files they mapped, the debug-info
 * cache's copies among them) and the addresses resolved, the unwind rules'
 * pages, the pointer map; the threads' records, once no thread can reach
 * its own (threads_quiesce: a hook still under way as the slots were
 * restored, or reached through a copy of its address, finds none); then
 * the profiler's own heap's free spans and pages (ownheap.c). */
static int released_threads;     /* the last detach's, for a debugger */
static int forgotten;            /* the last detach gave the tables back too */

/* Once every record is taken back (threads_forget; a thread still inside
 * keeps its record, and then everything stays), nothing can reach a slot,
 * a stack node or a Python frame: the tables are unmapped and the arena's
 * chunks given back; the next session starts from nothing. */
static void recorder_forget(void)
{
    forgotten = threads_forget();
    if (!forgotten) return;
    slots_forget();
    stacks_forget();
    python_forget();
    got_forget();
    arena_forget();
}

static void session_release(void)
{
    struct mp_guard g = guard_enter(MP_INSIDE);
    pymalloc_forget();
    flush_lock();
    symbols_release();
    flush_unlock();
    flush_release();
    unwind_release();
    ptrmap_release();
    released_threads = threads_quiesce();
    recorder_forget();
    sqlite3_shutdown();         /* SQLite's own state (the page cache's, the VFS's): no connection is open */
    ownheap_trim();
    guard_leave(&g);
}

/* The session's last snapshot; then no session: a fork from now on is
 * the program's alone, and one already in fork_prepare resolves nothing
 * more (it would map the debug files again after session_release). */
static void session_end(void)
{
    lifecycle_end_session(1, "detach");
    atomic_store(&mp_active, 0);        /* a hook still reached (a copy of its address) takes no stack */
    hot_path_update();
    __atomic_store_n(&attached, 0, __ATOMIC_RELEASE);
}

/* 0: the snapshot written (or tried: its errors are said on the process's
 * stderr), the program back on its own allocator calls; -1: no session;
 * ATTACH_BUSY. */
MP_EXPORT int mp_detach(void)
{
    if (mp_tls.in_profiler != MP_OUTSIDE) return ATTACH_BUSY;
    pthread_mutex_lock(&attach_lock);
    int rc = attached ? 0 : -1;
    if (!rc) {
        got_restore();
        threads_settle(0.2);                /* no operation half done in the last snapshot */
        tree_session_ending();              /* the children forked in the session end too */
        background_run(session_end);        /* on the profiler's thread (lifecycle.c) */
        background_pause(1);
        tree_session_wait(3);               /* for their last snapshots */
        session_release();
    }
    pthread_mutex_unlock(&attach_lock);
    return rc;
}

/* A child forked during a session records for it (attach_tree.c); the
 * locks of a detach or a patch under way in another thread of the parent
 * are not the child's. */
void attach_after_fork_child(void)
{
    if (!mp_attach_mode) return;
    pthread_mutex_init(&attach_lock, NULL);
    got_after_fork_child();
    tree_fork_child();
}

/* A child forked during a session whose session is over (attach_tree.c):
 * its profiler's thread ends recording as mp_detach does, the program's
 * threads going on; the thread then returns (lifecycle.c). */
void attach_end_here(void)
{
    pthread_mutex_lock(&attach_lock);
    if (attached) {
        got_restore();
        threads_settle(0.2);
        session_end();          /* its snapshot not written once the profile is collected (tree_may_write) */
        session_release();
    }
    tree_process_ended();
    pthread_mutex_unlock(&attach_lock);
}
