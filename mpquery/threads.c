/* Threads by name: --thread's patterns (a POSIX ERE that must match the
 * WHOLE name, as a shell glob would), the names as shown (the recorded
 * name after the rules' `thread replace` lines), and the groups of
 * --per-thread views: one per process, or one per thread with the threads
 * whose names match a --group-threads pattern merged into one group named
 * by it (malloc-tag's post-processing), or (--group) one per host,
 * executable or pid of their processes. Invariant: every selected thread
 * is in exactly one group, so groups add up to the selection. */
#include "mpquery.h"
#include "profile.h"
#include "procs.h"
#include "rules.h"
#include "select.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

int thread_pattern_compile(const char *pattern, regex_t *re, char *err, size_t errlen)
{
    const char *refused = rules_regex_refused(pattern);
    if (refused) {
        snprintf(err, errlen, "%.*s", (int)strlen(refused) - 1, refused);    /* without its ':': the caller names the regex */
        return EXIT_BAD_INPUT;
    }
    int rc = regcomp(re, pattern, REG_EXTENDED);
    if (!rc) return 0;
    regerror(rc, re, err, errlen);
    return EXIT_BAD_INPUT;
}

/* The leftmost match is the longest one there (POSIX), so a match of the
 * whole name, if there is one, is the one regexec finds. Compiled as
 * written, not wrapped in ^(...)$, which would renumber back-references. */
int thread_pattern_match(const regex_t *re, const char *name)
{
    size_t n = strlen(name);
    regmatch_t m[1] = { { 0, (regoff_t)n } };
    return regexec(re, name, 1, m, REG_STARTEND) == 0 && m[0].rm_so == 0 && (size_t)m[0].rm_eo == n;
}

int thread_spec_is_tid(const char *arg)
{
    if (!*arg) return 0;
    for (const char *s = arg; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

const char **thread_names(const struct profile *p, const struct ruleset *rules, struct arena *text)
{
    const char **names = xmalloc(p->nthreads * sizeof *names);
    struct strbuf sb = { 0 };
    for (size_t t = 0; t < p->nthreads; t++) {
        const char *raw = p->threads[t].name;
        if (!rules) { names[t] = raw; continue; }
        rules_apply_thread(rules, raw, strlen(raw), &sb);
        names[t] = arena_strndup(text, sb.s, sb.len);
    }
    sb_free(&sb);
    return names;
}

static uint32_t new_group(struct thread_groups *g, const char *name)
{
    g->name = xrealloc(g->name, (g->n + 1) * sizeof *g->name);
    g->name[g->n] = arena_strndup(&g->text, name, strlen(name));
    return (uint32_t)g->n++;
}

void thread_groups_by_process(const struct profile *p, const struct selection *s, struct thread_groups *g)
{
    memset(g, 0, sizeof *g);
    g->group_of = none_array(p->nthreads);
    uint32_t *proc_group = none_array(p->nprocs);
    struct strbuf sb = { 0 };
    for (size_t t = 0; t < p->nthreads; t++) {
        if (!s->thread_ok[t]) continue;
        uint32_t pr = p->threads[t].process;
        if (proc_group[pr] == NONE) {
            sb.len = 0;
            sb_printf(&sb, "%s (pid %lld)", procs_name(&p->procs[pr]), (long long)p->procs[pr].pid);
            proc_group[pr] = new_group(g, sb.s);
        }
        g->group_of[t] = proc_group[pr];
    }
    free(proc_group);
    sb_free(&sb);
}

int thread_groups_by_name(const struct profile *p, const struct selection *s, const char *const *patterns,
                          size_t npatterns, struct thread_groups *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->group_of = none_array(p->nthreads);
    regex_t *re = xmalloc((npatterns + 1) * sizeof *re);
    uint32_t *pattern_group = none_array(npatterns);
    for (size_t i = 0; i < npatterns; i++) {
        char msg[256];
        if (thread_pattern_compile(patterns[i], &re[i], msg, sizeof msg)) {
            snprintf(err, errlen, "bad regex '%s' for --group-threads (%s)", patterns[i], msg);
            for (size_t j = 0; j < i; j++) regfree(&re[j]);
            free(re);
            free(pattern_group);
            return EXIT_BAD_INPUT;
        }
    }
    struct strbuf sb = { 0 };
    for (size_t t = 0; t < p->nthreads; t++) {
        if (!s->thread_ok[t]) continue;
        const char *name = s->thread_name[t];
        size_t i = 0;
        while (i < npatterns && !thread_pattern_match(&re[i], name)) i++;
        if (i < npatterns) {
            if (pattern_group[i] == NONE) pattern_group[i] = new_group(g, patterns[i]);
            g->group_of[t] = pattern_group[i];
            continue;
        }
        sb.len = 0;
        sb_printf(&sb, "%s (tid %lld)", *name ? name : "thread", (long long)p->threads[t].tid);
        g->group_of[t] = new_group(g, sb.s);
    }
    for (size_t i = 0; i < npatterns; i++) regfree(&re[i]);
    free(re);
    free(pattern_group);
    sb_free(&sb);
    return 0;
}

const char *const group_by_name[] = { "thread", "host", "exe", "pid" };

void group_key(const struct process *pr, int by, struct strbuf *sb)
{
    sb->len = 0;
    sb_puts(sb, "");
    if (by == GROUP_HOST) sb_puts(sb, pr->host ? pr->host : "");
    else if (by == GROUP_PID) sb_printf(sb, "%lld", (long long)pr->pid);
    else {
        const char *cmdline = pr->cmdline ? pr->cmdline : "";
        sb_printf(sb, "%s %.*s", pr->exe, (int)strcspn(cmdline, " "), cmdline);
    }
}

/* Groups by their name: processes of one key have one name, and keys of
 * one name (a store's homes, chquery.c) make one group. */
void thread_groups_by_key(const struct profile *p, const struct selection *s, int by, struct thread_groups *g)
{
    memset(g, 0, sizeof *g);
    g->group_of = none_array(p->nthreads);
    uint32_t *proc_group = none_array(p->nprocs);
    struct strtab names;
    strtab_init(&names);
    char pid[32];
    for (size_t t = 0; t < p->nthreads; t++) {
        if (!s->thread_ok[t]) continue;
        uint32_t pr = p->threads[t].process;
        if (proc_group[pr] == NONE) {
            const struct process *x = &p->procs[pr];
            snprintf(pid, sizeof pid, "%lld", (long long)x->pid);
            const char *name = by == GROUP_HOST ? x->host : by == GROUP_PID ? pid : procs_name(x);
            uint32_t k = strtab_intern(&names, name, strlen(name));
            proc_group[pr] = k == g->n ? new_group(g, name) : k;
        }
        g->group_of[t] = proc_group[pr];
    }
    strtab_free(&names);
    free(proc_group);
}

int thread_groups_of(const struct profile *p, const struct selection *s, const struct select_opts *o,
                     struct thread_groups *g, char *err, size_t errlen)
{
    if (o->group_by) {
        thread_groups_by_key(p, s, o->group_by, g);
        return 0;
    }
    return thread_groups_by_name(p, s, o->thread_groups, o->nthread_groups, g, err, errlen);
}

void thread_groups_free(struct thread_groups *g)
{
    free(g->group_of);
    free(g->name);
    arena_free(&g->text);
    memset(g, 0, sizeof *g);
}

size_t *group_rows(const struct selection *s, const struct thread_groups *g, uint32_t *rows)
{
    size_t *start = xcalloc(g->n + 1, sizeof *start);
    for (size_t i = 0; i < s->nrows; i++) {
        uint32_t grp = g->group_of[s->samples[s->rows[i]].thread];
        if (grp != NONE) start[grp + 1]++;
    }
    for (size_t k = 0; k < g->n; k++) start[k + 1] += start[k];
    size_t *fill = xmalloc((g->n + 1) * sizeof *fill);
    memcpy(fill, start, (g->n + 1) * sizeof *fill);
    for (size_t i = 0; i < s->nrows; i++) {
        uint32_t grp = g->group_of[s->samples[s->rows[i]].thread];
        if (grp != NONE) rows[fill[grp]++] = s->rows[i];
    }
    free(fill);
    return start;
}
