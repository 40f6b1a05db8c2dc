/* What the commands that read profiles share: loading one and reporting
 * why it cannot be read ("mpquery: FILE: what is wrong"), the selection,
 * the rules (filters/ found next to the executable), and the skeleton of
 * top, fold and diff (rules, profiles, one display tree, counters per
 * node). Commands return exit codes; only main exits. */
#include "mpquery.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const counter_name[NCOUNTERS] = { "ncalls", "memtot", "nfree", "memlive", "maxlive" };

int counter_parse(const char *name)
{
    for (int i = 0; i < NCOUNTERS; i++)
        if (!strcmp(name, counter_name[i])) return i;
    return -1;
}

int load_profile(const char *path, struct profile **p)
{
    char err[4400];
    int rc = profile_load(path, p, err, sizeof err);
    if (rc) return error(rc, "%s: %s", path, err);
    return 0;
}

int select_or_report(const struct common *c, const struct profile *p, struct selection *s)
{
    char err[512];
    int rc = select_apply(p, &c->sel, s, err, sizeof err);
    if (rc) return error(rc, "%s: %s", p->path, err);
    return 0;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *filters_dir(void)
{
    static const char *const candidates[] = {
        "/../filters", "/../../filters", "/../share/mallocprof/filters",
    };
    char *dir = exe_dir();
    if (!dir) return NULL;
    struct strbuf sb = { 0 };
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
        sb.len = 0;
        sb_printf(&sb, "%s%s/default.rules", dir, candidates[i]);
        if (is_file(sb.s)) {
            sb.len -= strlen("/default.rules");
            sb.s[sb.len] = 0;
            free(dir);
            return sb.s;
        }
    }
    free(dir);
    sb_free(&sb);
    return NULL;
}

/* --rules NAME also finds filters/NAME and filters/NAME.rules. */
static char *find_rules_file(const char *name, const char *dir)
{
    if (is_file(name) || strchr(name, '/') || !dir) return xstrdup(name);
    struct strbuf sb = { 0 };
    sb_printf(&sb, "%s/%s", dir, name);
    if (is_file(sb.s)) return sb.s;
    sb_puts(&sb, ".rules");
    if (is_file(sb.s)) return sb.s;
    sb_free(&sb);
    return xstrdup(name);
}

int load_rules(struct common *c, struct ruleset **out)
{
    char err[8192];
    char *dir = filters_dir();
    struct ruleset *rs = rules_new();
    int rc = 0;
    *out = NULL;
    if (!c->no_default_rules) {
        if (dir) {
            struct strbuf sb = { 0 };
            sb_printf(&sb, "%s/default.rules", dir);
            rc = rules_load(rs, sb.s, err, sizeof err);
            sb_free(&sb);
        } else {
            warning("filters/default.rules not found next to the executable; "
                    "continuing without default rules");
        }
    }
    for (size_t i = 0; !rc && i < c->nrules_files; i++) {
        char *path = find_rules_file(c->rules_files[i], dir);
        rc = rules_load(rs, path, err, sizeof err);
        free(path);
    }
    free(dir);
    if (rc) {
        rules_free(rs);
        return error(rc, "%s", err);
    }
    *out = rs;
    c->view.rules = rs;
    return 0;
}

/* A profile loaded, selected and mapped onto t; 0 or the exit code. */
static int query_run(const struct common *c, const char *path, struct dtree *t, struct query *q)
{
    char err[512];
    memset(q, 0, sizeof *q);
    int rc = load_profile(path, &q->p);
    if (rc) return rc;
    if ((rc = select_or_report(c, q->p, &q->sel))) return rc;
    q->stack_node = xmalloc(q->p->nstacks * sizeof *q->stack_node);
    if ((rc = view_build(q->p, &c->view, t, q->stack_node, err, sizeof err)))
        return error(rc, "%s: %s", c->cmd, err);
    return 0;
}

static void query_free(struct query *q)
{
    selection_free(&q->sel);
    free(q->stack_node);
    profile_free(q->p);
}

/* Counters per node are summed once every profile is in the tree: the
 * second profile of a diff adds nodes. */
int listing_run(struct common *c, char *const *paths, size_t n,
                void (*print)(struct listing *l, void *ctx), void *ctx)
{
    struct listing l = { .c = c, .n = n };
    struct ruleset *rules;
    int rc = load_rules(c, &rules);
    if (rc) return rc;
    dtree_init(&l.t);
    for (size_t i = 0; i < n && !rc; i++) rc = query_run(c, paths[i], &l.t, &l.q[i]);
    for (size_t i = 0; i < n && !rc; i++) {
        l.own[i] = xcalloc(l.t.n, sizeof *l.own[i]);
        view_accumulate(l.q[i].p, &l.q[i].sel, l.q[i].stack_node, l.own[i]);
    }
    if (!rc) print(&l, ctx);
    for (size_t i = 0; i < n; i++) {
        free(l.own[i]);
        query_free(&l.q[i]);
    }
    dtree_free(&l.t);
    rules_free(rules);
    return rc;
}
