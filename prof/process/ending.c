/* How a process image ends, and its last snapshot: a return from main,
 * exit, _exit, _Exit, quick_exit, exec (a fatal signal: signals.c). The
 * snapshot is written once, by the destructor after the program's own
 * destructors ran, or before the call that skips them (_exit, exec);
 * process.ended says how, with the status when one is known (main's
 * return value included: main_start). */
#define _GNU_SOURCE
#include "symbols.h"
#include "snapshot.h"
#include "process.h"
#include "hooks.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The snapshot of a process about to end (exit, _exit, exec), unless the
 * thread is inside the allocator or the profiler: a signal handler that
 * interrupted malloc and calls _exit (async-signal-safe) must not re-enter
 * the allocator in the middle of its call. */
/* The status given to exit() by the program (its calls reach ours), and
 * the one libc's exit was given, whoever called it (on_exit_status): a
 * return from main reaches libc's exit directly. -1: none. */
static int exit_status = -1, libc_exit_status = -1;

/* how: "exit", "_exit"...; status < 0: none known */
static void last_flush(enum flush_reason reason, const char *how, int status)
{
    /* A vfork child (its exec or its _exit) runs in our memory, as our
     * pid's child: its end is not ours (flush_snapshot refuses it too). */
    if (mp_pid && getpid() != mp_pid) return;
    if (status >= 0) snprintf(mp_ended, sizeof mp_ended, "%s %d", how, status);
    else snprintf(mp_ended, sizeof mp_ended, "%s", how);
    if (mp_tls.in_profiler && !background_is_self()) {     /* a session's child ends from its thread */
        if (mp_opt.final)
            mp_log("warning", "the process ends from a signal handler inside the allocator: no %s snapshot",
                   reason == FLUSH_EXEC ? "exec" : "exit");
        return;
    }
    if (reason != FLUSH_EXEC) ticks_stop();     /* the points end with the program's own work */
    if (mp_opt.final && tree_may_write()) flush_snapshot(reason, "");
    if (reason != FLUSH_EXEC) flush_close();    /* an exec that fails goes on */
    tree_process_ended();
}

/* A detach: the snapshot's reason and process.ended say so. */
void lifecycle_end_session(int detach, const char *how)
{
    last_flush(detach ? FLUSH_DETACH : FLUSH_EXIT, how, -1);
}

static void on_quick_exit(void)
{
    last_flush(FLUSH_EXIT, "quick_exit", -1);
}

void ending_init(void)
{
    at_quick_exit(on_quick_exit);
}

/* "exit N": the program called exit(N); "return N": libc's exit had N
 * from elsewhere, main's return (or the last thread's pthread_exit:
 * exit(0)); "exit": not seen (a library attached to a running program,
 * a program that does not start through __libc_start_main). */
__attribute__((destructor)) static void mp_destructor(void)
{
    if (!atomic_load(&mp_initialized)) return;      /* dormant all along */
    if (exit_status < 0 && libc_exit_status >= 0) last_flush(FLUSH_EXIT, "return", libc_exit_status);
    else last_flush(FLUSH_EXIT, "exit", exit_status);
}

/* ------------------------------------------------------------ main */

/* The status main returns goes to libc's exit by an internal call that
 * ours does not see. An on_exit handler sees it, if it runs before the
 * destructors of the shared objects: those run from a handler (rtld_fini)
 * that __libc_start_main registers, so ours is registered after it, as
 * main starts. main_start calls main by a sibling call: no frame of ours
 * stays under main's in the stacks. on_exit may allocate its list's next
 * block (past 32 handlers): the profiler's, which libc frees at the exit
 * (an unknown free, counted). */
typedef int (*main_fn)(int, char **, char **);
static main_fn program_main;

static void on_exit_status(int status, void *arg)
{
    (void)arg;
    libc_exit_status = status & 0xff;
}

static int main_start(int argc, char **argv, char **envp)
{
    struct mp_guard g = guard_enter(MP_INSIDE);
    on_exit(on_exit_status, NULL);
    guard_leave(&g);
    return program_main(argc, argv, envp);
}

MP_EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                                void (*rtld_fini)(void), void *stack_end)
{
    typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);
    struct mp_guard g = guard_enter(MP_INSIDE);
    start_fn next = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    guard_leave(&g);
    if (!next) {
        mp_log("error", "cannot find libc's __libc_start_main: %s", dlerror());
        _exit(127);
    }
    program_main = main;
    return next(main_start, argc, argv, init, fini, rtld_fini, stack_end);
}

/* ------------------------------------------------------------ exec */

/* exec replaces the process without running destructors: write what this
 * process recorded first. If exec fails the program goes on, and so does
 * the profile (the exit snapshot supersedes this one). */
static void before_exec(void)
{
    last_flush(FLUSH_EXEC, "exec", -1);
}

/* A shell tries execve on each directory of PATH in turn: a file that is
 * not there or not executable (by the effective ids, as execve checks) gets
 * no snapshot of its own. */
static void before_exec_path(const char *path)
{
    if (path && faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) != 0) return;
    before_exec();
}

/* Every variant goes through these: the library's own calls to execv,
 * execve or execvp would go through its PLT, which, dlopen'd by an attach,
 * binds to libc's and skips the snapshot (issue 41). */
static int exec_ve(const char *path, char *const argv[], char *const envp[])
{
    before_exec_path(path);
    HOOKS_READY();
    return mp_next.execve(path, argv, envp);
}

static int exec_v(const char *path, char *const argv[])
{
    before_exec_path(path);
    HOOKS_READY();
    return mp_next.execv(path, argv);
}

static int exec_vp(const char *file, char *const argv[])
{
    before_exec();
    HOOKS_READY();
    return mp_next.execvp(file, argv);
}

MP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    return exec_ve(path, argv, envp);
}

MP_EXPORT int execv(const char *path, char *const argv[])
{
    return exec_v(path, argv);
}

MP_EXPORT int execvp(const char *file, char *const argv[])
{
    return exec_vp(file, argv);
}

MP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    before_exec();
    HOOKS_READY();
    return mp_next.execvpe(file, argv, envp);
}

MP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    before_exec();
    HOOKS_READY();
    return mp_next.fexecve(fd, argv, envp);
}

/* The execl family packs its arguments into an argv and calls the v
 * variant's path above. */
#define MAX_EXECL_ARGS 4096

static int collect_args(const char *arg0, va_list ap, char **argv, char ***envp)
{
    int n = 0;
    argv[n++] = (char *)arg0;
    while (arg0 && n < MAX_EXECL_ARGS - 1 && (argv[n] = va_arg(ap, char *)) != NULL) n++;
    argv[n] = NULL;
    if (envp) *envp = va_arg(ap, char **);
    return n;
}

MP_EXPORT int execl(const char *path, const char *arg, ...)
{
    char *argv[MAX_EXECL_ARGS];
    va_list ap;
    va_start(ap, arg);
    collect_args(arg, ap, argv, NULL);
    va_end(ap);
    return exec_v(path, argv);
}

MP_EXPORT int execlp(const char *file, const char *arg, ...)
{
    char *argv[MAX_EXECL_ARGS];
    va_list ap;
    va_start(ap, arg);
    collect_args(arg, ap, argv, NULL);
    va_end(ap);
    return exec_vp(file, argv);
}

MP_EXPORT int execle(const char *path, const char *arg, ...)
{
    char *argv[MAX_EXECL_ARGS];
    char **envp;
    va_list ap;
    va_start(ap, arg);
    collect_args(arg, ap, argv, &envp);
    va_end(ap);
    return exec_ve(path, argv, envp);
}

/* ------------------------------------------------------------ _exit */

/* _exit and _Exit skip destructors (a forked child commonly leaves this
 * way): write the exit snapshot first. quick_exit reaches _exit through
 * libc's internal call, so it is caught by an at_quick_exit handler. A
 * fatal signal gets its last snapshot in signals.c; SIGKILL leaves what the
 * last MP_INTERVAL snapshot wrote. */
MP_EXPORT void exit(int status)
{
    exit_status = status & 0xff;
    HOOKS_READY();
    mp_next.exit(status);
    __builtin_unreachable();
}

MP_EXPORT void _exit(int status)
{
    last_flush(FLUSH_EXIT, "_exit", status & 0xff);
    HOOKS_READY();
    mp_next._exit(status);
    __builtin_unreachable();
}

MP_EXPORT void _Exit(int status)
{
    last_flush(FLUSH_EXIT, "_exit", status & 0xff);
    HOOKS_READY();
    mp_next._Exit(status);
    __builtin_unreachable();
}
