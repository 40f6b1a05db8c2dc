/* The processes of a profile as report, info and timeline show them: in
 * the order they started (ties by id, so the order is the same on every
 * run), named as they were started (the loader names each once, in the
 * profile's text: procs_name_of), their totals summed, their times as
 * dates. Else pure functions of the profile: nothing is allocated. */
#include "procs.h"

#include <string.h>
#include <time.h>

int procs_by_start(const void *a, const void *b, void *ctx)
{
    const struct profile *p = ctx;
    const struct process *x = &p->procs[*(const uint32_t *)a], *y = &p->procs[*(const uint32_t *)b];
    if (x->start_time != y->start_time) return x->start_time < y->start_time ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

const char *procs_name(const struct process *pr)
{
    return pr->name && *pr->name ? pr->name : "?";
}

const char *procs_exe_name(const struct process *pr)
{
    return path_basename(pr->exe);
}

/* The length of argv[0] at the start of the command line: its first
 * word (the recorder joins the arguments with spaces), or, when the
 * executable's file name has a space, up to that name where the command
 * line has it as a path's last part ('/x/my prog arg': '/x/my prog'). */
static size_t argv0_len(const struct process *pr, const char *cmdline)
{
    const char *base = path_basename(pr->exe);
    size_t b = strlen(base);
    for (const char *s = cmdline; strchr(base, ' ') && (s = strstr(s, base)); s++) {
        size_t end = (size_t)(s - cmdline) + b;
        if ((s == cmdline || s[-1] == '/') && (cmdline[end] == ' ' || !cmdline[end])) return end;
    }
    return strcspn(cmdline, " ");
}

const char *procs_name_of(const struct process *pr, struct arena *text)
{
    const char *argv0 = pr->cmdline ? pr->cmdline : "";
    size_t n = argv0_len(pr, argv0);
    const char *name = argv0;
    for (size_t i = 0; i < n; i++)
        if (argv0[i] == '/') name = argv0 + i + 1;
    n -= (size_t)(name - argv0);
    if (n && *name == '-') name++, n--;         /* a login shell: -bash */
    if (n && name[n - 1] == ':') n--;           /* retitled: "nginx: worker process" */
    if (n) return arena_strndup(text, name, n);
    return *pr->exe ? procs_exe_name(pr) : "?";
}

int procs_exe_matches(const struct process *pr, const char *want)
{
    if (!strchr(want, '/')) return !strcmp(procs_name(pr), want) || !strcmp(procs_exe_name(pr), want);
    size_t n = strlen(want);
    const char *cmdline = pr->cmdline ? pr->cmdline : "";
    return !strcmp(pr->exe, want) || (argv0_len(pr, cmdline) == n && !strncmp(cmdline, want, n));
}

void procs_fmt_date(double t, char *buf, size_t n)
{
    time_t s = (time_t)t;
    struct tm tm;
    if (!localtime_r(&s, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm)) snprintf(buf, n, "%.3f", t);
}

void procs_total_add(struct total *sum, const struct total *t)
{
    counters_add(&sum->c, &t->c);
    sum->ncalls_nostack = sat_add(sum->ncalls_nostack, t->ncalls_nostack);
    sum->memtot_nostack = sat_add(sum->memtot_nostack, t->memtot_nostack);
    sum->nfree_unknown = sat_add(sum->nfree_unknown, t->nfree_unknown);
}
