/* mpquery record --pid: records a running process for a while. Refuses,
 * in one line and touching nothing, a process that is stopped, traced,
 * under a seccomp filter that would stop a call the attach makes
 * (seccomp_check.c), static, of another user (naming what ptrace needs), or
 * that cannot see the library at our path (another mount namespace
 * without it). Then finds libc's functions (attach_proc.c reads the
 * process) and places the library and the output; the session itself
 * (dlopen of libmallocprof.so, dormant when loaded that way, mp_attach,
 * the wait, mp_detach) is attach_session.c's. The library stays loaded: the next attach reuses
 * it. */
#define _GNU_SOURCE
#include "mpquery.h"
#include "profile.h"
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

/* ------------------------------------------------------------ the session */

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
