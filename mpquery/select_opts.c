/* The selection's options (select.h): --run, --pid, --thread, --snapshot,
 * --exe, --image, --since/--until (a time window), --per-thread and
 * --group-threads parsed into struct select_opts, diff's per-side ones
 * with them; select.c applies them. */
#include "mpquery.h"
#include "profile.h"
#include "opt_groups.h"
#include "options.h"
#include "select.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

void select_opts_init(struct select_opts *o)
{
    memset(o, 0, sizeof *o);
    o->snap_kind = SNAP_LAST;
}

int select_wants_peak(const struct select_opts *o)
{
    return o->snap_kind == SNAP_PEAK || o->snap_kind == SNAP_SEQ || o->snap_kind == SNAP_ID;
}

/* A thread name pattern compiles; else the usage error, reported. */
static int check_pattern(const char *cmd, const char *opt, const char *arg)
{
    regex_t re;
    char msg[256];
    if (thread_pattern_compile(arg, &re, msg, sizeof msg))
        return usage_error(cmd, "bad regex '%s' for %s (%s)", arg, opt, msg);
    regfree(&re);
    return 0;
}

static int thread_option(struct select_opts *o, const char *cmd, const char *arg)
{
    if (thread_spec_is_tid(arg)) {
        if (parse_int64(arg, &o->tid)) return bad_value(cmd, "--thread", arg, "a thread id (tid)");
        o->has_tid = 1;
        o->thread_re = NULL;
        return 0;
    }
    if (check_pattern(cmd, "--thread", arg)) return EXIT_BAD_INPUT;
    o->thread_re = arg;
    o->has_tid = 0;
    return 0;
}

int select_option(struct select_opts *o, const char *cmd, int id, const char *arg)
{
    switch (id) {
    case OPT_RUN:
        if (!strcmp(arg, "all")) { o->run_all = 1; return 0; }
        if (!strcmp(arg, "latest")) { o->run_all = o->has_run = 0; return 0; }
        if (parse_int64(arg, &o->run_id)) return bad_value(cmd, "--run", arg, "a run id, latest or all");
        o->has_run = 1;
        o->run_all = 0;
        return 0;
    case OPT_PID:
        if (parse_int64(arg, &o->pid)) return bad_value(cmd, "--pid", arg, "a process id");
        o->has_pid = 1;
        return 0;
    case OPT_IMAGE:
        if (parse_int64(arg, &o->image) || o->image < 1) return bad_value(cmd, "--image", arg, "a number from 1");
        return 0;
    case OPT_EXE:
        if (!*arg) return bad_value(cmd, "--exe", arg, "an executable's name or path");
        o->exe = arg;
        return 0;
    case OPT_THREAD: return thread_option(o, cmd, arg);
    case OPT_WIN_SINCE: case OPT_WIN_UNTIL: {
        struct when w;
        const char *name = id == OPT_WIN_SINCE ? "--since" : "--until";
        if (when_parse(arg, 1, &w)) return bad_value(cmd, name, arg, WHEN_EXPECTED);
        *(id == OPT_WIN_SINCE ? &o->since : &o->until) = arg;
        return 0;
    }
    case OPT_PER_THREAD: o->per_thread = o->keep_rows = 1; return 0;
    case OPT_GROUP:
        for (int k = GROUP_HOST; k <= GROUP_PID; k++)
            if (!strcmp(arg, group_by_name[k])) return o->group_by = k, o->keep_rows = 1, 0;
        return bad_value(cmd, "--group", arg, "host, exe or pid");
    case OPT_GROUP_THREADS:
        if (check_pattern(cmd, "--group-threads", arg)) return EXIT_BAD_INPUT;
        o->per_thread = o->keep_rows = 1;
        return option_list_add(o->thread_groups, &o->nthread_groups, cmd, "--group-threads", arg,
                               "at most 64 of them");
    }
    if (select_parse_snapshot(arg, o))
        return bad_value(cmd, "--snapshot", arg,
                         "last, peak, a sequence number N >= 1, id:N or label:TEXT, TEXT not empty");
    return 0;
}

int parse_select(struct common *c, const struct opt *o, const char *arg, int placed)
{
    int rc = select_option(&c->sel, c->cmd, o->id, arg);
    if (rc || placed < 0) return rc;
    struct select_sides *s = &c->sides;     /* where it stood among the operands */
    if (s->ngiven == sizeof s->given / sizeof s->given[0])
        return usage_error(c->cmd, "too many selection options (at most %zu)", s->ngiven);
    s->given[s->ngiven].id = o->id, s->given[s->ngiven].arg = arg;
    s->given[s->ngiven++].operands = placed;
    return 0;
}

const char *select_option_name(int id)
{
    switch (id) {
    case OPT_RUN: return "run";
    case OPT_PID: return "pid";
    case OPT_IMAGE: return "image";
    case OPT_EXE: return "exe";
    case OPT_THREAD: return "thread";
    case OPT_SNAPSHOT: return "snapshot";
    case OPT_WIN_SINCE: return "since";
    case OPT_WIN_UNTIL: return "until";
    case OPT_GROUP: return "group";
    }
    return "?";
}

int select_sides_placed(struct select_sides *s, struct select_opts *shared, const char *cmd)
{
    size_t between = 0;
    for (size_t i = 0; i < s->ngiven; i++) between += s->given[i].operands == 1;
    if (!between) return 0;
    select_opts_init(shared);
    for (size_t i = 0; i < s->ngiven; i++) {
        int side = s->given[i].operands - 1, id = s->given[i].id, rc;
        if (side < 0) rc = select_option(shared, cmd, id, s->given[i].arg);
        else if ((rc = select_side_option(s, cmd, side, id, s->given[i].arg)) == 0)
            s->args[side][s->nargs[side] - 1].placed = 1;
        if (rc) return rc;
    }
    return 0;
}

int select_side_option(struct select_sides *s, const char *cmd, int side, int id, const char *arg)
{
    struct select_opts probe = { 0 };
    int rc = select_option(&probe, cmd, id, arg);      /* checked now, reported as --ID */
    if (rc) return rc;
    if (s->nargs[side] == sizeof s->args[side] / sizeof s->args[side][0])
        return usage_error(cmd, "too many --%c- options", 'a' + side);
    s->args[side][s->nargs[side]].id = id;
    s->args[side][s->nargs[side]++].arg = arg;
    return 0;
}

void select_sides_apply(struct select_sides *s, const struct select_opts *shared)
{
    for (int k = 0; k < 2; k++) {
        s->sel[k] = *shared;
        for (size_t i = 0; i < s->nargs[k]; i++) select_option(&s->sel[k], "", s->args[k][i].id, s->args[k][i].arg);
    }
    s->on = s->nargs[0] || s->nargs[1];
}
