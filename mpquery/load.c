/* What commands read, as their options name it (load.h): profiles, from
 * files (several merged into one) or a ClickHouse store, their selection,
 * the rules and suppressions (filters/ found next to the executable), and
 * -o checked against all of them. Errors are reported ("mpquery: FILE:
 * what is wrong") and their exit code returned; only main exits. */
#include "mpquery.h"
#include "profile.h"
#include "hists.h"
#include "load.h"
#include "merge.h"
#include "tempfile.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int load_profile(const char *path, int peak_rows, struct profile **p)
{
    char err[4400];
    int rc = profile_load(path, p, peak_rows, err, sizeof err);
    if (rc) return error(rc, "%s: %s", path, err);
    return 0;
}

struct dbfiles dbfiles_of(int argc, char **argv, int first)
{
    return (struct dbfiles){ argv + first, (size_t)(argc - first) };
}

/* Files merged into one profile: its name for messages, where each run
 * came from, and the runs selected by default (each file's latest). */
static void attach_sources(struct profile *p, const struct dbfiles *f, struct merge_stats *st)
{
    struct strbuf name = { 0 };
    sb_printf(&name, "%s (and %zu more)", f->paths[0], f->n - 1);
    p->path = arena_strndup(&p->text, name.s, name.len);
    sb_free(&name);
    p->db_path = arena_strndup(&p->text, p->db_path, strlen(p->db_path));
    p->sources = st->files;
    p->nsources = st->nfiles;
    p->latest_runs = xcalloc(p->nruns, 1);
    for (size_t i = 0; i < p->nsources; i++)
        for (size_t r = 0; r < p->nruns; r++)
            if (p->runs[r].id == p->sources[i].latest) p->latest_runs[r] = 1;
}

struct profile *(*load_preloaded)(const struct dbfiles *f, int peak_rows);

int load_profiles(const struct dbfiles *f, int peak_rows, struct profile **p)
{
    if (load_preloaded && (*p = load_preloaded(f, peak_rows))) return 0;
    if (f->n == 1) return load_profile(f->paths[0], peak_rows, p);
    char err[4400];
    const char *tmp;
    struct merge_stats st;
    int rc = merge_temporary(f->paths, f->n, peak_rows, &tmp, &st, err, sizeof err);
    if (rc) return error(rc, "%s", err);
    if ((rc = profile_load(tmp, p, peak_rows, err, sizeof err))) {
        merge_stats_free(&st);
        return error(rc, "%s: %s", tmp, err);
    }
    attach_sources(*p, f, &st);
    return 0;
}

int load_selected(const struct common *c, const struct dbfiles *f, int side, int peak_rows, struct profile **p)
{
    if (!c->server.url) return load_profiles(f, peak_rows, p);
    char err[4400];
    const struct select_opts *o = side >= 0 && c->sides.on ? &c->sides.sel[side] : &c->sel;
    struct server_opts so = c->server;
    so.win_since = o->since, so.win_until = o->until, so.group_by = o->group_by;
    int rc = server_load(&so, side, (o->snap_kind == SNAP_PEAK) | (peak_rows & PROFILE_HISTS), p, err, sizeof err);
    return rc ? error(rc, "%s", err) : 0;
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
    if (!c->rules.no_default) {
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
    for (size_t i = 0; !rc && i < c->rules.nfiles; i++) {
        char *path = find_rules_file(c->rules.files[i], dir);
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
    c->sel.rules = rs;          /* thread names: its `thread replace` lines */
    c->sides.sel[0].rules = c->sides.sel[1].rules = rs;  /* diff's sides, copied from sel before */
    return 0;
}

static int refuse(const char *out, const char *input)
{
    return error(EXIT_BAD_INPUT, "%s: the output (-o) is the input %s: refusing to overwrite it", out, input);
}

int check_output(const struct common *c, const char *out, const struct dbfiles *files, size_t n)
{
    if (!out) return 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < files[k].n; i++)
            if (output_is(out, files[k].paths[i])) return refuse(out, files[k].paths[i]);
    for (size_t i = 0; i < c->rules.nsuppressions; i++)
        if (output_is(out, c->rules.suppressions[i])) return refuse(out, c->rules.suppressions[i]);
    char *dir = filters_dir();
    int rc = 0;
    struct strbuf sb = { 0 };
    if (dir && !c->rules.no_default) {
        sb_printf(&sb, "%s/default.rules", dir);
        if (output_is(out, sb.s)) rc = refuse(out, sb.s);
    }
    for (size_t i = 0; !rc && i < c->rules.nfiles; i++) {
        char *path = find_rules_file(c->rules.files[i], dir);
        if (output_is(out, path)) rc = refuse(out, path);
        free(path);
    }
    sb_free(&sb);
    free(dir);
    return rc;
}

/* The built-in list (rules_opts.builtin_suppressions): filters/
 * suppressions.rules; NULL with a warning when filters/ is not found. */
static int load_builtin_suppressions(struct ruleset **out)
{
    char err[8192];
    char *dir = filters_dir();
    *out = NULL;
    if (!dir) {
        warning("filters/suppressions.rules not found next to the executable; "
                "continuing without the built-in suppressions");
        return 0;
    }
    struct strbuf sb = { 0 };
    sb_printf(&sb, "%s/suppressions.rules", dir);
    struct ruleset *rs = rules_new();
    int rc = rules_load(rs, sb.s, err, sizeof err);
    sb_free(&sb);
    free(dir);
    if (rc) {
        rules_free(rs);
        return error(rc, "%s", err);
    }
    *out = rs;
    return 0;
}

int load_suppressions(struct common *c, struct ruleset **out, struct ruleset **builtin)
{
    char err[8192];
    *out = *builtin = NULL;
    if (c->rules.builtin_suppressions) {
        int rc = load_builtin_suppressions(builtin);
        if (rc) return rc;
        c->view.builtin = *builtin;
    }
    if (!c->rules.nsuppressions) return 0;
    struct ruleset *rs = rules_new();
    for (size_t i = 0; i < c->rules.nsuppressions; i++) {
        int rc = rules_load(rs, c->rules.suppressions[i], err, sizeof err);
        if (rc) {
            rules_free(rs);
            rules_free(*builtin);       /* nothing loaded on failure */
            *builtin = NULL;
            c->view.builtin = NULL;
            return error(rc, "%s", err);
        }
    }
    *out = rs;
    c->view.suppress = rs;
    return 0;
}
