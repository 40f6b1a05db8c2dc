/* What record --pid reads of the process (attach_session.h): a field of
 * /proc/PID/status, its name, why ptrace may not be allowed, its modules
 * (libc's base, the code where no thread may be stopped), its libc's
 * dlopen, dlsym, dlerror and __errno_location. The bottom of attach.c,
 * attach_session.c and seccomp_check.c, calling none of them. */
#define _GNU_SOURCE
#include "mpquery.h"
#include "attach_session.h"
#include "elf_dynsym.h"
#include "target_fs.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

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

/* ------------------------------------------------------------ its libc */

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
