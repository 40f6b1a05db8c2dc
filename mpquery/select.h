/* The selection of samples (select.c): which runs, processes, threads
 * and snapshot a command reads, as per-stack counters; the threads'
 * names and groups (threads.c); and the selection's options, the group
 * a command's table lists (OPTIONS_SELECT...) and parse_options parses
 * into its struct select_opts (select_option). */
#ifndef MPQUERY_SELECT_H
#define MPQUERY_SELECT_H

#include <regex.h>

#include "mpquery.h"
#include "profile.h"
#include "options.h"

struct ruleset;

enum { SNAP_LAST, SNAP_SEQ, SNAP_ID, SNAP_LABEL, SNAP_PEAK };
struct select_opts {
    int run_all, has_run; int64_t run_id;
    int has_pid; int64_t pid;
    int64_t image;              /* --image N (with --pid): that pid's N-th image, 1-based; 0: all */
    const char *exe;            /* --exe NAME|PATH: the processes of that executable
                                   (with --server, runs: server_opts.exe) */
    int has_tid; int64_t tid;   /* --thread TID */
    const char *thread_re;      /* --thread RE: the threads whose whole name (as shown) matches */
    const struct ruleset *rules; /* their `thread replace` lines name the threads (load_rules); NULL: as recorded */
    int snap_kind; int64_t snap_value; const char *snap_label;
    int live_only;              /* leaks: only stacks with blocks or bytes still live */
    int keep_rows;              /* fill selection.rows (--per-thread views) */
    int per_thread;             /* --per-thread (implied by --group-threads; sets keep_rows) */
    const char *thread_groups[64]; size_t nthread_groups;   /* --group-threads */
    int group_by;               /* --group: GROUP_HOST, _EXE, _PID (sets keep_rows); 0: none */
    const char *since, *until;  /* --since, --until as typed (window.c): the allocations made
                                   between them; NULL: from the start, to the end */
    int window_quiet;           /* no line on stderr on the window's snapshots (csv, json) */
};
struct selection {
    uint8_t *run_on;            /* per run: selected */
    size_t nruns_on;
    uint32_t run;               /* the run index when one run is selected, else NONE */
    uint32_t *proc_snapshot;    /* per process: selected snapshot index, NONE = not selected */
    size_t nselected;           /* selected processes */
    counters *stack_c;          /* per recorded stack (profile.recorded): counters summed over threads/processes */
    uint8_t *thread_ok;         /* per thread: selected */
    const char **thread_name;   /* per thread: its name as shown (after thread rules) */
    struct arena names;         /* their text */
    uint32_t *rows; size_t nrows; /* keep_rows: the sample rows summed into stack_c, one per
                                   (stack, thread); live_only does not apply to them */
    const struct sample *samples; /* what rows index: p->samples, or with a window of a file
                                   (row_change, owned) each row's change over it */
    struct sample *row_change;
    uint32_t *proc_since;       /* --since, --until: per process, its snapshot at since (NONE:
                                   its start; stack_c is then the counters at proc_snapshot,
                                   the one at until, minus those at proc_since) */
};
int select_parse_snapshot(const char *arg, struct select_opts *o);
int select_apply(const struct profile *p, const struct select_opts *o,
                 struct selection *s, char *err, size_t errlen);
void selection_free(struct selection *s);
/* The process totals row (thread = whole process) of a snapshot, or NULL. */
const struct total *snapshot_total(const struct profile *p, uint32_t snapshot);

/* ---------------------------------------------------------------- window.c */
/* A time of --since or --until: seconds from the start of its run (+S:
 * the start of the run's first process, from which info and timeline
 * count), or seconds since the epoch (a number, a local date
 * YYYY-MM-DD[ HH:MM[:SS]], an age such as 2h: now less it). */
struct when { int rel; double t; };
/* 0, or -1 when arg is none of these (rel_ok 0: +S refused too). */
int when_parse(const char *arg, int rel_ok, struct when *w);
#define WHEN_EXPECTED "+S (seconds from the run's start: +1.5, +90s), seconds since the epoch, " \
                      "YYYY-MM-DD[ HH:MM[:SS]] or an age such as 30m, 2h, 7d"
/* The window of o (o->since or o->until set) over the selected processes
 * of s: per process, its snapshot at until (the last, peak snapshots
 * aside, at or before it: into s->proc_snapshot, NONE when none) and at
 * since (s->proc_since); the profile of a store (p->aggregate) keeps its
 * sums' snapshot, its store applied the window. A window with no
 * snapshot of a selected process in it is refused; else, unless
 * o->window_quiet, one line on stderr says which snapshots it used.
 * 0, or EXIT_BAD_INPUT with err set. */
int window_select(const struct profile *p, const struct select_opts *o, struct selection *s, char *err,
                  size_t errlen);
/* The ends of o's window (o->since, o->until) as seconds since the
 * epoch, +S from the start of run: *since -1 and *until 1e300 when not
 * given; 0, or EXIT_BAD_INPUT with err set (as window_select's). For
 * drawing the window over the whole run (timeline --shade-window). */
int window_ends(const struct profile *p, uint32_t run, const struct select_opts *o, double *since, double *until,
                char *err, size_t errlen);
/* The run's start in +S's sense: its first process's start. */
double window_run_start(const struct profile *p, uint32_t run);

/* ---------------------------------------------------------------- threads.c */
/* --thread and --group-threads patterns: POSIX ERE matched against the
 * whole name. compile: 0, or 2 with regerror's text in err. */
int thread_pattern_compile(const char *pattern, regex_t *re, char *err, size_t errlen);
int thread_pattern_match(const regex_t *re, const char *name);
/* --thread's value is a tid when it is all digits. */
int thread_spec_is_tid(const char *arg);
/* Per thread: its name after the rules' thread lines (rules NULL: the
 * recorded name); the text in `text` (malloc'd array). */
const char **thread_names(const struct profile *p, const struct ruleset *rules, struct arena *text);
/* The roots of per-thread views: every selected thread in one group
 * (group_of, NONE: not selected), each group named. */
struct thread_groups {
    uint32_t *group_of;         /* per thread */
    const char **name;          /* per group */
    size_t n;
    struct arena text;
};
/* One group per process: "NAME (pid N)" (procs_name). */
void thread_groups_by_process(const struct profile *p, const struct selection *s, struct thread_groups *g);
/* One group per pattern, the threads whose name matches it (the first that
 * does), named by the pattern; every other thread its own, "NAME (tid N)".
 * 0, or 2 with err set (bad regex). */
int thread_groups_by_name(const struct profile *p, const struct selection *s, const char *const *patterns,
                          size_t npatterns, struct thread_groups *g, char *err, size_t errlen);
void thread_groups_free(struct thread_groups *g);
/* --group: the processes' host, executable (its name as info shows it)
 * or pid; a group per value, named by it. */
enum { GROUP_NONE, GROUP_HOST, GROUP_EXE, GROUP_PID };
extern const char *const group_by_name[];      /* "thread" (none: --per-thread), "host", "exe", "pid" */
void thread_groups_by_key(const struct profile *p, const struct selection *s, int by, struct thread_groups *g);
/* The groups of a per-group view: --group's, else --per-thread's. */
int thread_groups_of(const struct profile *p, const struct selection *s, const struct select_opts *o,
                     struct thread_groups *g, char *err, size_t errlen);
/* A process's key for --group (what the store groups by too, chquery.c):
 * its host, its pid, or its executable's path and argv[0] (its name's
 * sources: procs_name_of) after a space; into sb. */
void group_key(const struct process *pr, int by, struct strbuf *sb);
/* s->rows (keep_rows) ordered by group into rows (sized s->nrows); returns
 * the start of each group's rows (g->n + 1 entries, malloc'd). */
size_t *group_rows(const struct selection *s, const struct thread_groups *g, uint32_t *rows);


/* ---------------------------------------------------------------- options */
/* The selection's options, each entry tagged OPTG_SELECT: parse_select
 * parses it (options.h), --help lists it under Selection. */
#define OPTG_SELECT .parse = parse_select, .place = PLACE_SELECT
enum {
    OPT_RUN = 1 << 8, OPT_PID, OPT_THREAD, OPT_SNAPSHOT, OPT_PER_THREAD, OPT_GROUP_THREADS, OPT_EXE, OPT_IMAGE,
    OPT_WIN_SINCE, OPT_WIN_UNTIL, OPT_GROUP,
};
#define OPTION_RUN(h)       { OPTG_SELECT, .name = "run", .id = OPT_RUN, .arg = "N|latest|all", .help = (h) }
#define OPTION_PID(h)       { OPTG_SELECT, .name = "pid", .id = OPT_PID, .arg = "PID", .help = (h) }
#define OPTION_THREAD(h)    { OPTG_SELECT, .name = "thread", .id = OPT_THREAD, .arg = "TID|RE", .help = (h) }
#define OPTION_SNAPSHOT(h)  { OPTG_SELECT, .name = "snapshot", .id = OPT_SNAPSHOT, .arg = "S", .help = (h) }
/* A process row is one image: a pid that exec'd has a row per program it
 * ran, each its own --exe, numbered in the order they started (--image). */
#define OPTION_EXE(h)       { OPTG_SELECT, .name = "exe", .id = OPT_EXE, .arg = "NAME|PATH", .help = (h) }
#define OPTION_IMAGE(h)     { OPTG_SELECT, .name = "image", .id = OPT_IMAGE, .arg = "N", .advanced = 1, .help = (h) }
#define HELP_EXE            "only the processes of this program: NAME as info shows\n" \
                            "it (python3, python3.11) or PATH; --server: its runs"
#define HELP_IMAGE          "with --pid: only the N-th program that pid ran (1 =\n" \
                            "before its first exec; mpquery info lists them)"
#define HELP_RUN            "which run: N (its id, as info lists it), latest (default:\n" \
                            "each file's latest run) or all"
#define HELP_PID            "only this process"
/* on one line, or each option with its own help */
#define OPTIONS_SELECT(h)   OPTION_RUN(NULL), OPTION_PID(NULL), OPTION_IMAGE(NULL), OPTION_EXE(NULL), \
                            OPTION_THREAD(NULL), OPTION_SNAPSHOT(h)
#define OPTIONS_SELECT_EACH \
    OPTION_RUN(HELP_RUN), OPTION_PID(HELP_PID), OPTION_IMAGE(HELP_IMAGE), OPTION_EXE(HELP_EXE), \
    OPTION_THREAD("only allocations made by this thread (a tid), or by the\n" \
                  "threads whose whole name matches RE (POSIX ERE)"), \
    OPTION_SNAPSHOT("last (default), peak (each process when its live bytes\n" \
                    "were highest), N (the last snapshot with seq <= N in\n" \
                    "each process), id:N (that snapshot's process only) or\n" \
                    "label:TEXT (each process's last snapshot with that label)")
/* --since, --until: the allocations made in a time window (window.c) */
#define OPTIONS_WINDOW \
    { OPTG_SELECT, .name = "since", .id = OPT_WIN_SINCE, .arg = "TIME", .help = NULL }, \
    { OPTG_SELECT, .name = "until", .id = OPT_WIN_UNTIL, .arg = "TIME", \
      .help = "only the allocations made between these times (+1.5: from\n" \
              "the run's start; epoch, date, age: --help-all, Time windows)" }
#define HELP_WINDOW \
"Time windows (--since, --until): the allocations made between the two\n" \
"times, from each process's snapshots: its counters at the last snapshot\n" \
"at or before --until (default: its last) less those at the last at or\n" \
"before --since (default: none, its start), peak snapshots aside. So every\n" \
"counter is its change over the window: ncalls, memtot, nfree, ntemp,\n" \
"time and nmap count what happened in it (calls and bytes allocated,\n" \
"blocks freed); memlive, nlive, mapped, rss and memcold are their growth,\n" \
"which is what the window's allocations still held at its end when the\n" \
"stack freed none of its older blocks in it (it held nothing at --since,\n" \
"or nfree is 0), and else that less the older bytes freed (a lower bound,\n" \
"below 0 when more was freed than allocated); maxlive and maxmapped how\n" \
"much their peak rose; coldage its value at --until. A snapshot holds only\n" \
"the rows that changed since the one before, so no time between two\n" \
"snapshots can be read: a line on stderr (text) says which snapshots the\n" \
"window's ends were read at, and a window with no snapshot in it is\n" \
"refused. Record with MP_INTERVAL (or mp_snapshot calls) for fine windows.\n"
/* --per-thread, --group-threads (tree, top) */
#define OPTIONS_PER_THREAD(h) \
    { OPTG_SELECT, .name = "per-thread", .id = OPT_PER_THREAD, .help = (h) }, \
    { OPTG_SELECT, .name = "group-threads", .id = OPT_GROUP_THREADS, .arg = "RE", .advanced = 1, \
      .help = "the threads whose whole name matches RE as one group,\n" \
              "named RE (repeatable; implies --per-thread)" }
/* --group host|exe|pid: a table per group, in one (top: a first column) */
#define OPTION_GROUP(adv) \
    { OPTG_SELECT, .name = "group", .id = OPT_GROUP, .arg = "BY", .advanced = (adv), \
      .help = "split the table by the processes' host, exe or pid" }
#define HELP_GROUP \
"--group host|exe|pid splits the table by the processes' host, executable\n" \
"(its name as info shows it) or pid, on files and on --server alike: a\n" \
"first column with the group's value, groups in the order of their total\n" \
"of the --by counter, largest first, each row's counters (and the totals\n" \
"row and '%') the group's alone; with a window (--since, --until) too.\n"
/* The defaults: the last run of each file, each process's last snapshot. */
void select_opts_init(struct select_opts *o);
/* One of the options above into o; 0, or 2 for a bad value (reported as
 * "mpquery: CMD: bad value ..."). */
int select_option(struct select_opts *o, const char *cmd, int id, const char *arg);
/* The entries' parser: select_option into c->sel; with placed >= 0 (diff),
 * where it stood noted in c->sides (select_sides_placed). */
opt_parser parse_select;
/* Whether a selection may name a peak snapshot (peak, N, id:N): its
 * profile must be loaded with the peak snapshots' rows. */
int select_wants_peak(const struct select_opts *o);

/* diff's per-side selection, --a-X / --b-X (X = run, pid, thread,
 * snapshot), or a selection option placed after a side's file (A.db --run
 * 1 B.db --run 2): recorded while parsing (checked then), applied over the
 * shared selection once every option is parsed (select_sides_apply), so
 * that --run and --a-run may come in any order. */
struct select_sides {
    struct { int id; const char *arg; int placed; } args[2][16];   /* placed: --X after the side's file */
    size_t nargs[2];
    struct select_opts sel[2];
    int on;                     /* any was given: the profiles use sel[i] */
    /* every selection option as parse_options met it (cmd_opts.dashdash):
     * after how many operands */
    struct { int id; const char *arg; int operands; } given[32];
    size_t ngiven;
};
int select_side_option(struct select_sides *s, const char *cmd, int side, int id, const char *arg);
void select_sides_apply(struct select_sides *s, const struct select_opts *shared);
/* A.db B.db with selection options between them: those after A.db are
 * A's, those after B.db B's, those before A.db both's (*shared made of
 * them again). 0, or 2 reported. */
int select_sides_placed(struct select_sides *s, struct select_opts *shared, const char *cmd);
/* A selection option's name (run, pid ...) by its id. */
const char *select_option_name(int id);

#endif
