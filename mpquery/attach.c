/* mpquery record --pid: records a running process for a while. Refuses,
 * in one line and touching nothing, a process that is stopped, traced,
 * under a seccomp filter that would stop a call the attach makes
 * (seccomp_check.c), static, of another user (naming what ptrace needs), or
 * that cannot see the library at our path (another mount namespace
 * without it). Then finds libc's functions and places the library and
 * the output; the session itself (dlopen of libmallocprof.so, dormant
 * when loaded that way, mp_attach, the wait, mp_detach) is
 * attach_session.c's. The library stays loaded: the next attach reuses
 * it. */
#define _GNU_SOURCE
#include "mpquery.h"
#include "attach_session.h"
#include "record_db.h"
#include "attach.h"
#include "attach_mounts.h"
#include "target_fs.h"
#include "elf_dynsym.h"
#include "seccomp_check.h"

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

/* ------------------------------------------------------------ the process */

/* A field of /proc/PID/status ("State", "TracerPid", "Uid"), or "". */
void status_field(pid_t pid, const char *name, char *out, size_t size)
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

void process_name(pid_t pid, char *out, size_t size)
{
    status_field(pid, "Name", out, size);
    if (!*out) snprintf(out, size, "?");
}

const char *ptrace_scope(void)
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
    /* issue 41: a filter may kill it at a call the attach makes */
    int rc = seccomp_check(pid, name);
    if (rc) return rc;
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


static int path_is(const char *path, const char *name)
{
    const char *base = strrchr(path, '/');
    return base && !strncmp(base + 1, name, strlen(name));
}

/* Its mappings: libc's base, and where a thread must not be stopped.
 * libc's base is the start of its first segment below its code: the
 * profiler's symbolizer maps the same file elsewhere, unexecuted. */
int read_modules(pid_t pid, struct modules *m)
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

/* ------------------------------------------------------------ the session */

/* The first value of each of n names among a file's symbols (0: none). */
struct wanted { const char *const *names; size_t n; uint64_t values[4]; };

static void want_value(const char *name, const Elf64_Sym *sym, void *ctx)
{
    struct wanted *w = ctx;
    for (size_t j = 0; j < w->n; j++)
        if (!w->values[j] && !strcmp(name, w->names[j])) w->values[j] = sym->st_value;
}

/* dlopen, dlsym, dlerror and __errno_location in the process's libc. */
void libc_functions(struct target *t)
{
    static const char *const names[] = { "dlopen", "dlsym", "dlerror", "__errno_location" };
    uintptr_t *at[] = { &t->dlopen_, &t->dlsym_, &t->dlerror_, &t->errno_location };
    struct wanted w = { names, 4, { 0 } };
    elf_each_dynsym(target_open_library(t->pid, t->m.libc), want_value, &w);
    for (size_t i = 0; i < 4; i++) *at[i] = w.values[i] ? t->m.libc_base + w.values[i] : 0;
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
    session_signals(1);
    int rc = attach_and_wait(pid, lib, out, settings, token, duration, quiet);
    session_signals(0);
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
