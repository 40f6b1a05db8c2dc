/* mpquery record --pid: records a running process for a while. Refuses,
 * in one line and touching nothing, a process that is stopped, traced,
 * static, of another user (naming what ptrace needs), or that cannot see
 * the library at our path (another mount namespace without it). Then, in
 * one of its threads stopped at a safe point (inject.c), makes it call its
 * libc's dlopen on libmallocprof.so (dormant when loaded that way) and
 * mp_attach with the settings; waits for --duration, ^C, SIGTERM or the
 * process's end; makes it call mp_detach, which writes the snapshot and
 * puts the program back on its own allocator calls. The library stays
 * loaded: the next attach reuses it. */
#define _GNU_SOURCE
#include "mpquery.h"
#include "inject.h"
#include "record_db.h"
#include "attach.h"
#include "attach_mounts.h"
#include "target_fs.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RTLD_NOW_ 2

/* ------------------------------------------------------------ the process */

/* A field of /proc/PID/status ("State", "TracerPid", "Uid"), or "". */
static void status_field(pid_t pid, const char *name, char *out, size_t size)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    out[0] = 0;
    FILE *f = fopen(path, "re");
    if (!f) return;
    size_t n = strlen(name);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, name, n) && line[n] == ':') {
            char *v = line + n + 1;
            v += strspn(v, " \t");
            v[strcspn(v, "\n")] = 0;
            snprintf(out, size, "%s", v);
            break;
        }
    fclose(f);
}

static void process_name(pid_t pid, char *out, size_t size)
{
    status_field(pid, "Name", out, size);
    if (!*out) snprintf(out, size, "?");
}

static const char *ptrace_scope(void)
{
    static char text[160];
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    int scope = -1;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1) scope = -1;
        fclose(f);
    }
    if (scope < 0) snprintf(text, sizeof text, "run mpquery as the process's user, or as root (CAP_SYS_PTRACE)");
    else if (scope == 0) snprintf(text, sizeof text, "run mpquery as the process's user, or as root (CAP_SYS_PTRACE)");
    else if (scope == 3) snprintf(text, sizeof text, "kernel.yama.ptrace_scope is 3: no process may be attached to until reboot");
    else snprintf(text, sizeof text, "kernel.yama.ptrace_scope is %d: run mpquery as root (CAP_SYS_PTRACE)%s", scope,
                  scope == 1 ? ", or set it to 0 (sysctl kernel.yama.ptrace_scope=0)" : "");
    return text;
}

/* 0 when the process may be attached to, else the exit code, said. */
static int check_process(pid_t pid, const char *name)
{
    char state[64], tracer[32], uid[64];
    status_field(pid, "State", state, sizeof state);
    if (!*state) return error(EXIT_BAD_INPUT, "record: no process %d", (int)pid);
    if (state[0] == 'Z' || state[0] == 'X') return error(EXIT_FAILED, "record: process %d (%s) has ended", (int)pid, name);
    status_field(pid, "TracerPid", tracer, sizeof tracer);
    if (atoi(tracer) != 0) {
        char other[64];
        process_name((pid_t)atoi(tracer), other, sizeof other);
        return error(EXIT_FAILED, "record: process %d (%s) is traced by process %s (%s): a process has one tracer; "
                     "not attached", (int)pid, name, tracer, other);
    }
    if (state[0] == 'T' || state[0] == 't')
        return error(EXIT_FAILED, "record: process %d (%s) is stopped (%s): resume it (kill -CONT %d) and try again; "
                     "not attached", (int)pid, name, state, (int)pid);
    status_field(pid, "Uid", uid, sizeof uid);
    if (geteuid() != 0 && (uid_t)atol(uid) != geteuid())
        return error(EXIT_FAILED, "record: process %d (%s) belongs to uid %ld, not to you (uid %d): %s; not attached",
                     (int)pid, name, atol(uid), (int)geteuid(), ptrace_scope());
    return 0;
}

/* The executable has a program interpreter (the dynamic loader). */
static int is_dynamic(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    Elf64_Ehdr eh;
    int dynamic = 0;
    if (pread(fd, &eh, sizeof eh, 0) == sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
        for (int i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (size_t)i * eh.e_phentsize)) != sizeof ph) break;
            if (ph.p_type == PT_INTERP) dynamic = 1;
        }
    }
    close(fd);
    return dynamic;
}

/* ------------------------------------------------------------ its modules */

struct modules {
    char libc[4096];                /* libc's path, as the process sees it */
    uintptr_t libc_base;
    int has_profiler;               /* libmallocprof.so is mapped already */
    struct unsafe_range unsafe[64];
    size_t nunsafe;
};

static int path_is(const char *path, const char *name)
{
    const char *base = strrchr(path, '/');
    return base && !strncmp(base + 1, name, strlen(name));
}

/* Its mappings: libc's base, and where a thread must not be stopped.
 * libc's base is the start of its first segment below its code: the
 * profiler's symbolizer maps the same file elsewhere, unexecuted. */
static int read_modules(pid_t pid, struct modules *m)
{
    uintptr_t heads[16], code = 0;
    size_t nheads = 0;
    char path[64], line[4096 + 128];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    memset(m, 0, sizeof *m);
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi, off;
        char perms[8], file[4096] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095[^\n]", &lo, &hi, perms, &off, file) < 4) continue;
        int libc = path_is(file, "libc.so") || path_is(file, "libc-2.");
        if (libc && off == 0 && nheads < 16) heads[nheads++] = lo;
        if (libc && perms[2] == 'x' && !code) {
            code = lo;
            snprintf(m->libc, sizeof m->libc, "%s", file);
        }
        if (path_is(file, "libmallocprof")) m->has_profiler = 1;    /* a copy in a container: libmallocprof-DEV-INO.so */
        int loader = path_is(file, "ld-linux") || path_is(file, "ld-2.") || path_is(file, "ld64.so");
        int ours = path_is(file, "libmallocprof") || path_is(file, "libunwind") || path_is(file, "libdw") ||
                   path_is(file, "libelf") || path_is(file, "libsqlite3");
        if (perms[2] == 'x' && (libc || loader || ours) && m->nunsafe < 64)
            m->unsafe[m->nunsafe++] = (struct unsafe_range){ lo | (libc ? 1 : 0), hi };
    }
    fclose(f);
    for (size_t i = 0; i < nheads; i++)
        if (heads[i] <= code && heads[i] > m->libc_base) m->libc_base = heads[i];
    return 0;
}

/* The values of dynamic symbols in an ELF file (0: none), in one read
 * of its symbol table; fd closed. */
static void elf_symbols(int fd, const char *const *names, uint64_t *values, size_t n)
{
    memset(values, 0, n * sizeof *values);
    if (fd < 0) return;
    struct stat st;
    const char *img = fstat(fd, &st) == 0 && st.st_size > (off_t)sizeof(Elf64_Ehdr)
                      ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (img == MAP_FAILED) return;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    if (!memcmp(img, ELFMAG, SELFMAG) && eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= (uint64_t)st.st_size) {
        const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
        for (int i = 0; i < eh->e_shnum; i++) {
            if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum) continue;
            const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
            const char *str = img + sh[sh[i].sh_link].sh_offset;
            for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
                if (!sym[k].st_value || sym[k].st_shndx == SHN_UNDEF) continue;
                for (size_t j = 0; j < n; j++)
                    if (!values[j] && !strcmp(str + sym[k].st_name, names[j])) values[j] = sym[k].st_value;
            }
        }
    }
    munmap((void *)img, (size_t)st.st_size);
}

/* ------------------------------------------------------------ the session */

struct target {
    pid_t pid;
    char name[64];
    struct modules m;
    char libc_file[4200];               /* libc as we can open it: /proc/PID/root/... */
    uintptr_t dlopen_, dlsym_, dlerror_, errno_location;
    uintptr_t attach_fn, detach_fn;
};

/* dlopen, dlsym, dlerror and __errno_location in the process's libc. */
static void libc_functions(struct target *t)
{
    static const char *const names[] = { "dlopen", "dlsym", "dlerror", "__errno_location" };
    uintptr_t *at[] = { &t->dlopen_, &t->dlsym_, &t->dlerror_, &t->errno_location };
    uint64_t values[4];
    elf_symbols(target_open_library(t->pid, t->m.libc), names, values, 4);
    for (size_t i = 0; i < 4; i++) *at[i] = values[i] ? t->m.libc_base + values[i] : 0;
}

static int say_failure(struct target *t, const char *what, const char *err)
{
    if (errno == EPERM && strstr(err, "ptrace"))
        return error(EXIT_FAILED, "record: cannot attach to process %d (%s): ptrace refused: %s", (int)t->pid,
                     t->name, ptrace_scope());
    return error(EXIT_FAILED, "record: process %d (%s): %s: %s", (int)t->pid, t->name, what, err);
}

/* mp_attach and mp_detach's answer when the thread stopped was inside the
 * profiler after all (prof/attach.c): let go, and tried again. */
#define ATTACH_BUSY -5
#define BUSY_TRIES 500

static void pause_a_moment(void)
{
    struct timespec t = { 0, 10 * 1000000L };
    nanosleep(&t, NULL);
}

/* In the stopped thread: dlopen, the entry points found, mp_attach
 * called; the thread let go. 0, ATTACH_BUSY, or the exit code, said. */
static int start_in(struct target *t, struct inject *in, const char *lib, const char *settings)
{
    char err[512];
    uint64_t handle = 0, fn = 0, rc = 0;
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
    const char *names[2] = { "mp_attach", "mp_detach" };
    uintptr_t *found[2] = { &t->attach_fn, &t->detach_fn };
    for (int i = 0; !bad && i < 2; i++) {
        uintptr_t s = inject_push(in, names[i], strlen(names[i]) + 1);
        bad = !s || inject_call(in, t->dlsym_, handle, s, 5, &fn, err, sizeof err);
        *found[i] = fn;
    }
    uintptr_t text = bad ? 0 : inject_push(in, settings, strlen(settings) + 1);
    if (!bad && (!t->attach_fn || !t->detach_fn || !text)) bad = snprintf(err, sizeof err, "the library has no mp_attach");
    if (!bad) bad = inject_call(in, t->attach_fn, text, 0, 60, &rc, err, sizeof err);
    inject_resume(in);
    if (bad) return say_failure(t, "attach", err);
    switch ((int)rc) {
    case 0: case ATTACH_BUSY: return (int)rc;
    case -2: return error(EXIT_FAILED, "record: process %d (%s) runs with libmallocprof.so preloaded: it is recorded "
                          "already", (int)t->pid, t->name);
    case -3: return error(EXIT_FAILED, "record: process %d (%s) is being recorded by another mpquery record --pid",
                          (int)t->pid, t->name);
    default: return error(EXIT_FAILED, "record: process %d (%s): mp_attach failed (%d)", (int)t->pid, t->name, (int)rc);
    }
}

/* A thread stopped at a safe point, start_in there; again a moment later
 * while the thread turns out to be inside the profiler. */
static int start(struct target *t, const char *lib, const char *settings)
{
    struct inject in;
    char err[512];
    for (int tries = 0;; tries++) {
        if (inject_stop(&in, t->pid, t->m.unsafe, t->m.nunsafe, t->errno_location, err, sizeof err))
            return say_failure(t, "cannot stop a thread", err);
        int rc = start_in(t, &in, lib, settings);
        if (rc != ATTACH_BUSY) return rc;
        if (tries == BUSY_TRIES)
            return error(EXIT_FAILED, "record: process %d (%s): no thread came out of the profiler", (int)t->pid, t->name);
        pause_a_moment();
    }
}

static int process_gone(pid_t pid)
{
    char state[64];
    status_field(pid, "State", state, sizeof state);
    return !*state || state[0] == 'Z' || state[0] == 'X';
}

/* mp_detach in the process: 0, or the exit code, said; *gone when the
 * process ended first, or replaced itself by exec (whose snapshot the
 * library wrote before: the new program has no library to call). */
static int stop(struct target *t, int *gone)
{
    struct inject in;
    char err[512];
    for (int tries = 0;; tries++) {
        uint64_t rc = 0;
        if (read_modules(t->pid, &t->m) == 0 && !t->m.has_profiler) return *gone = 1, 0;
        if (read_modules(t->pid, &t->m) != 0 ||
            inject_stop(&in, t->pid, t->m.unsafe, t->m.nunsafe, t->errno_location, err, sizeof err)) {
            if ((*gone = process_gone(t->pid))) return 0;
            return say_failure(t, "cannot stop a thread to detach", err);
        }
        int bad = inject_call(&in, t->detach_fn, 0, 0, 300, &rc, err, sizeof err);
        inject_resume(&in);
        if (bad && !(*gone = process_gone(t->pid))) return say_failure(t, "detach", err);
        if (bad || (int)rc != ATTACH_BUSY) return 0;
        if (tries == BUSY_TRIES || (*gone = process_gone(t->pid))) return 0;
        pause_a_moment();
    }
}

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { (void)sig; interrupted = 1; }

/* ^C and SIGTERM end the session: caught from record_attach's start, so
 * that one arriving while a thread of the process is stopped and called
 * into only ends the session once that thread has its registers back. */
static struct sigaction old_int, old_term;
static void catch_interrupts(void)
{
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
}

static void release_interrupts(void)
{
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
}

/* Until the duration ends (0: none), ^C or SIGTERM, or the process ends:
 * 1 when it ended. */
static int wait_session(pid_t pid, double duration)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int gone = 0;
    while (!interrupted && !(gone = process_gone(pid))) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (duration > 0 && (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= duration) break;
        struct timespec step = { 0, 10 * 1000000L };
        nanosleep(&step, NULL);
    }
    return gone;
}

/* Checked, the library and the output placed: libc's functions found,
 * the session from mp_attach to mp_detach (or the process's end). 0, or
 * the exit code, said; *gone when the process ended first. */
static int session(struct target *t, const char *lib, const char *settings, double duration, int *gone)
{
    snprintf(t->libc_file, sizeof t->libc_file, "/proc/%d/root%s", (int)t->pid, t->m.libc);
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

static int attach_and_wait(pid_t pid, const char *lib, const char *out, const char *settings, const char *token,
                           double duration, int quiet);

/* The session added to out: 0, or 1 said (the process's stderr has why,
 * or it was killed: gone). */
static int record_written(const struct target *t, const char *out, const char *token, const struct run_count *before,
                          int gone)
{
    struct run_count after;
    char err[4400];
    if (record_count(out, token, &after, err, sizeof err) != 0)
        return error(EXIT_FAILED, "record: nothing can be read from %s after the session: %s", out, err);
    if (after.processes > before->processes || after.snapshots > before->snapshots) return 0;
    if (gone)
        return error(EXIT_FAILED, "record: process %d (%s) ended while recorded and wrote no profile to %s (killed, or "
                     "its own stderr says why)", (int)t->pid, t->name, out);
    return error(EXIT_FAILED, "record: process %d (%s) wrote no profile to %s (its own stderr may say why)", (int)t->pid,
                 t->name, out);
}

int record_attach(pid_t pid, const char *lib, const char *out, const char *settings, const char *token,
                  double duration, int quiet)
{
    catch_interrupts();
    int rc = attach_and_wait(pid, lib, out, settings, token, duration, quiet);
    release_interrupts();
    return rc;
}

static int attach_and_wait(pid_t pid, const char *lib, const char *out, const char *settings, const char *token,
                           double duration, int quiet)
{
    struct target t = { .pid = pid };
    process_name(pid, t.name, sizeof t.name);
    int rc = check_process(pid, t.name);
    if (rc) return rc;
    int dynamic = is_dynamic(pid);
    if (dynamic < 0 && geteuid() != 0)
        return error(EXIT_FAILED, "record: cannot read the executable of process %d (%s): %s", (int)pid, t.name,
                     ptrace_scope());
    if (dynamic == 0)
        return error(EXIT_BAD_INPUT, "record: process %d (%s) is statically linked: it has no dynamic loader to load "
                     "libmallocprof.so into; not attached", (int)pid, t.name);
    if (read_modules(pid, &t.m) != 0 || !t.m.libc_base)
        return error(EXIT_BAD_INPUT, "record: process %d (%s) does not use the GNU C library (no libc.so.6 mapped); "
                     "not attached", (int)pid, t.name);
    struct run_count before;
    char err[4400], *with_out = NULL;
    struct mounts mounts;
    if ((rc = prepare_mounts(pid, t.name, lib, out, &mounts))) goto done;
    if (mounts.tmp >= 0) lib = mounts.lib;
    /* the first MP_OUT line counts: the process's own view of the output */
    if (*mounts.out && asprintf(&with_out, "MP_OUT=%s\n%s", mounts.out, settings) > 0) settings = with_out;
    if ((rc = record_count(out, token, &before, err, sizeof err))) {
        rc = error(rc, "%s: %s", out, err);
        goto done;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int gone = 0;
    if ((rc = session(&t, lib, settings, duration, &gone))) goto done;
    if ((rc = collect_profile(pid, t.name, &mounts, out)) || (rc = record_written(&t, out, token, &before, gone)))
        goto done;
    if (gone && !quiet)
        fprintf(stderr, "mpquery: process %d (%s) ended (or ran another program) while recorded: its exit (or exec) "
                "wrote the profile\n", (int)pid, t.name);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    record_report(out, token, &before, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, quiet);
done:
    if (mounts.tmp >= 0) close(mounts.tmp);
    free(with_out);
    return rc;
}
