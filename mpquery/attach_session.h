/* mpquery record --pid's parts shared by attach.c (the checks, the
 * files), attach_session.c (the calls into it) and attach_proc.c (what is
 * read of the process, below both). */
#ifndef MPQ_ATTACH_SESSION_H
#define MPQ_ATTACH_SESSION_H

#include "inject.h"

struct modules {
    char libc[4096];                /* libc's path, as the process sees it */
    uintptr_t libc_base;
    int has_profiler;               /* libmallocprof.so is mapped already */
    struct unsafe_range unsafe[64];
    size_t nunsafe;
};

struct target {
    pid_t pid;
    char name[64];
    struct modules m;
    uintptr_t dlopen_, dlsym_, dlerror_, errno_location;
    uintptr_t attach_fn, detach_fn;
    struct unsafe_range locks[128];     /* where no frame of the thread called into may be (inject_safe.c) */
    size_t nlocks;
};

/* attach_proc.c: what is read of the process */
void status_field(pid_t pid, const char *name, char *out, size_t size);
void process_name(pid_t pid, char *out, size_t size);
const char *ptrace_scope(void);
int read_modules(pid_t pid, struct modules *m);
void libc_functions(struct target *t);

/* attach_session.c: the session from mp_attach to mp_detach (or the
 * process's end). 0, or the exit code, said; *gone when the process
 * ended first. */
int session(struct target *t, const char *lib, const char *settings, double duration, int *gone);
/* ^C, SIGTERM, SIGHUP and SIGQUIT caught (1) or given back (0). */
void session_signals(int catch);

#endif
