/* mpquery record --pid's session (attach.c checked the process and placed
 * the files): in one of its threads stopped at a safe point (inject.c),
 * dlopen of libmallocprof.so and mp_attach; the wait for --duration, ^C,
 * SIGTERM, SIGHUP, SIGQUIT or the process's end; mp_detach. Those signals
 * are caught for the whole command: one arriving during a call ends the
 * session once the call is over (a second one cuts the wait for the call
 * short: it is left to finish in the process, which restores itself). A
 * process stopped (SIGSTOP) at the detach is waited for 10 s (^C cuts
 * that short); stopped longer, its detach is set up to run when it
 * continues, never half made. */
#define _GNU_SOURCE
#include "mpquery.h"
#include "attach_session.h"
#include "target_fs.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define RTLD_NOW_ 2
#define STOPPED_WAIT 10.0

/* mp_attach and mp_detach's answer when the thread stopped was inside the
 * profiler after all (prof/attach.c): let go, and tried again. */
#define ATTACH_BUSY -5
#define BUSY_TRIES 500
/* mp_attach's -3: a session is on. A session that just ended may still be
 * giving its tables back (a detach that ran when a stopped process
 * continued, its last snapshot written first: seconds on a loaded
 * machine): asked again for up to 6 s before it counts as another
 * record's. */
#define ATTACH_OTHER -3
#define OTHER_SECONDS 6.0

static volatile sig_atomic_t interrupted;       /* how many of the signals came */
static void on_signal(int sig) { (void)sig; interrupted++; }

static const int caught[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static struct sigaction old[4];

void session_signals(int catch)
{
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 4; i++) sigaction(caught[i], catch ? &sa : &old[i], catch ? &old[i] : NULL);
}

static void pause_a_moment(void)
{
    struct timespec t = { 0, 10 * 1000000L };
    nanosleep(&t, NULL);
}

static int say_failure(struct target *t, const char *what, const char *err)
{
    if (errno == EPERM && strstr(err, "ptrace"))
        return error(EXIT_FAILED, "record: cannot attach to process %d (%s): ptrace refused: %s", (int)t->pid,
                     t->name, ptrace_scope());
    return error(EXIT_FAILED, "record: process %d (%s): %s: %s", (int)t->pid, t->name, what, err);
}

/* What inject_stop checks, from the modules as now mapped: libc's lock
 * taking functions, the loader's and the profiler's code. */
static void where(struct target *t, struct inject_where *w, int with_errno)
{
    t->nlocks = inject_lock_ranges(target_open_library(t->pid, t->m.libc), t->m.libc_base, t->locks, 96);
    for (size_t i = 0; i < t->m.nunsafe && t->nlocks < sizeof t->locks / sizeof t->locks[0]; i++)
        if (!(t->m.unsafe[i].lo & 1)) t->locks[t->nlocks++] = t->m.unsafe[i];
    *w = (struct inject_where){ .unsafe = t->m.unsafe, .nunsafe = t->m.nunsafe, .locks = t->locks,
                                .nlocks = t->nlocks, .errno_location = with_errno ? t->errno_location : 0,
                                .signals = &interrupted };
}

/* The entry points found, mp_attach called (the thread still stopped):
 * 0 or -1 with the reason in err; *rc mp_attach's answer. */
static int find_and_attach(struct target *t, struct inject *in, uint64_t handle, const char *settings, uint64_t *rc,
                           char *err, size_t errsize)
{
    const char *names[2] = { "mp_attach", "mp_detach" };
    uintptr_t *found[2] = { &t->attach_fn, &t->detach_fn };
    for (int i = 0; i < 2; i++) {
        uint64_t fn = 0;
        uintptr_t s = inject_push(in, names[i], strlen(names[i]) + 1);
        if (!s) return snprintf(err, errsize, "no room for the arguments"), -1;
        if (inject_call(in, t->dlsym_, handle, s, 5, &fn, err, errsize)) return -1;
        *found[i] = fn;
    }
    uintptr_t text = inject_push(in, settings, strlen(settings) + 1);
    if (!t->attach_fn || !t->detach_fn || !text) return snprintf(err, errsize, "the library has no mp_attach"), -1;
    return inject_call(in, t->attach_fn, text, 0, 60, rc, err, errsize);
}

/* In the stopped thread: dlopen, mp_attach; the thread let go. 0,
 * ATTACH_BUSY, or the exit code, said. */
static int start_in(struct target *t, struct inject *in, const char *lib, const char *settings)
{
    char err[512];
    uint64_t handle = 0, rc = 0;
    uintptr_t path = inject_push(in, lib, strlen(lib) + 1);
    int bad = !path || inject_call(in, t->dlopen_, path, RTLD_NOW_, 60, &handle, err, sizeof err);
    if (!bad && !handle) {
        uint64_t msg = 0;
        char text[400] = "(no reason given)";
        if (inject_call(in, t->dlerror_, 0, 0, 5, &msg, err, sizeof err) == 0 && msg)
            inject_read_string(t->pid, msg, text, sizeof text);
        inject_resume(in);
        return error(EXIT_FAILED, "record: process %d (%s) could not load %s: %s", (int)t->pid, t->name, lib, text);
    }
    if (!bad) bad = find_and_attach(t, in, handle, settings, &rc, err, sizeof err);
    inject_resume(in);
    if (bad) return say_failure(t, "attach", err);
    switch ((int)rc) {
    case 0: case ATTACH_BUSY: case ATTACH_OTHER: return (int)rc;
    case -2: return error(EXIT_FAILED, "record: process %d (%s) runs with libmallocprof.so preloaded: it is recorded "
                          "already", (int)t->pid, t->name);
    default: return error(EXIT_FAILED, "record: process %d (%s): mp_attach failed (%d)", (int)t->pid, t->name, (int)rc);
    }
}

/* A thread stopped at a safe point, start_in there; again a moment later
 * while the thread turns out to be inside the profiler. */
static int start(struct target *t, const char *lib, const char *settings)
{
    struct inject in;
    struct inject_where w;
    char err[512];
    double t0 = monotonic_seconds();
    for (int busy = 0;;) {
        where(t, &w, 1);
        if (inject_stop(&in, t->pid, &w, err, sizeof err)) return say_failure(t, "cannot stop a thread", err);
        int rc = start_in(t, &in, lib, settings);
        if (rc == ATTACH_OTHER && monotonic_seconds() - t0 >= OTHER_SECONDS)
            return error(EXIT_FAILED, "record: process %d (%s) is being recorded by another mpquery record --pid",
                         (int)t->pid, t->name);
        if (rc != ATTACH_BUSY && rc != ATTACH_OTHER) return rc;
        if (rc == ATTACH_BUSY && ++busy == BUSY_TRIES)
            return error(EXIT_FAILED, "record: process %d (%s): no thread came out of the profiler", (int)t->pid, t->name);
        pause_a_moment();
    }
}

static int process_state(pid_t pid)
{
    char state[64];
    status_field(pid, "State", state, sizeof state);
    return state[0];
}

static int process_gone(pid_t pid)
{
    int s = process_state(pid);
    return !s || s == 'Z' || s == 'X';
}

/* The process stopped (SIGSTOP): waited for up to STOPPED_WAIT s, a new
 * signal of ours cutting that short. 1 when it stayed stopped. */
static int stays_stopped(struct target *t)
{
    if (process_state(t->pid) != 'T') return 0;
    fprintf(stderr, "mpquery: process %d (%s) is stopped: waiting up to %.0f s for it to continue (kill -CONT %d) "
            "to detach\n", (int)t->pid, t->name, STOPPED_WAIT, (int)t->pid);
    sig_atomic_t seen = interrupted;
    double until = monotonic_seconds() + STOPPED_WAIT;
    while (process_state(t->pid) == 'T' && monotonic_seconds() < until && interrupted == seen) pause_a_moment();
    return process_state(t->pid) == 'T';
}

/* The process stays stopped: mp_detach set up in one of its threads, to
 * run when it continues. The exit code, said. */
static int detach_later(struct target *t)
{
    struct inject in;
    struct inject_where w;
    char err[512];
    where(t, &w, 0);
    if (inject_stop(&in, t->pid, &w, err, sizeof err) == 0 && in.group_stopped &&
        inject_arm(&in, t->detach_fn, 0, err, sizeof err) == 0)
        return error(EXIT_FAILED, "record: process %d (%s) stays stopped: its detach will be made when it continues, "
                     "writing the profile then", (int)t->pid, t->name);
    if (in.tid) inject_resume(&in);
    return error(EXIT_FAILED, "record: process %d (%s) stays stopped and its detach could not be set up (%s): it "
                 "records until it ends", (int)t->pid, t->name, err);
}

/* mp_detach in the process: 0, or the exit code, said; *gone when the
 * process ended first, or replaced itself by exec (whose snapshot the
 * library wrote before: the new program has no library to call). */
static int stop(struct target *t, int *gone)
{
    struct inject in;
    struct inject_where w;
    char err[512];
    for (int tries = 0;; tries++) {
        uint64_t rc = 0;
        if (read_modules(t->pid, &t->m) != 0) return *gone = 1, 0;
        if (!t->m.has_profiler) return *gone = 1, 0;
        if (stays_stopped(t)) return detach_later(t);
        where(t, &w, 1);
        if (inject_stop(&in, t->pid, &w, err, sizeof err)) {
            if ((*gone = process_gone(t->pid))) return 0;
            if (process_state(t->pid) == 'T' && tries < BUSY_TRIES) continue;      /* stopped meanwhile */
            return say_failure(t, "cannot stop a thread to detach", err);
        }
        int bad = inject_call(&in, t->detach_fn, 0, 0, 300, &rc, err, sizeof err);
        inject_resume(&in);
        if (bad && in.left) return error(EXIT_FAILED, "record: process %d (%s): detach: %s", (int)t->pid, t->name, err);
        if (bad && !(*gone = process_gone(t->pid))) return say_failure(t, "detach", err);
        if (bad || (int)rc != ATTACH_BUSY) return 0;
        if (tries == BUSY_TRIES || (*gone = process_gone(t->pid))) return 0;
        pause_a_moment();
    }
}

/* Until the duration ends (0: none), one of the signals, or the process
 * ends: 1 when it ended. */
static int wait_session(pid_t pid, double duration)
{
    double t0 = monotonic_seconds();
    int gone = 0;
    while (!interrupted && !(gone = process_gone(pid))) {
        if (duration > 0 && monotonic_seconds() - t0 >= duration) break;
        pause_a_moment();
    }
    return gone;
}

int session(struct target *t, const char *lib, const char *settings, double duration, int *gone)
{
    libc_functions(t);
    if (!t->dlopen_ || !t->dlsym_ || !t->dlerror_)
        return error(EXIT_FAILED, "record: process %d (%s): its C library %s exports no dlopen (glibc 2.34 or later "
                     "is needed); not attached", (int)t->pid, t->name, t->m.libc);
    if (interrupted) return error(EXIT_FAILED, "record: interrupted; process %d (%s) not attached", (int)t->pid, t->name);
    int rc = start(t, lib, settings);
    if (rc) return rc;
    *gone = wait_session(t->pid, duration);
    return *gone ? 0 : stop(t, gone);
}
