/* The options several commands share, in groups (opt_groups.c): struct
 * common gathers each group's struct, which its module's header declares
 * with its entries (OPTION_*, tagged OPTG_* with the group's parser) and
 * its parser; parse_options is the commands' way into options.c's table
 * parser: the groups' defaults first, what they decide together after. */
#ifndef MPQUERY_OPT_GROUPS_H
#define MPQUERY_OPT_GROUPS_H

#include "mpquery.h"
#include "counters.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "server.h"
#include "view.h"

/* The shared options' values, one struct per group. */
struct common {
    const char *cmd;
    struct select_opts sel;                 /* select.h: --run, --pid, --thread, --snapshot,
                                               --per-thread, --group-threads */
    struct select_sides sides;              /* select.h: diff's --a-X, --b-X */
    struct rules_opts rules;                /* rules.h: --rules, --no-default-rules, --suppressions */
    struct view_opts view;                  /* view.h: --lines, --no-inline, --module, --filter,
                                               --exclude (and the rules, once loaded) */
    struct output_opts out;                 /* output.h: --format, --by, -n, --depth, text for people */
    struct server_opts server;              /* server.h: --server URL and its run selection */
    int operands_a;                         /* cmd_opts.dashdash: the operands before "--" (the
                                               first ones from optind), or -1 without "--" */
    int peak_rows;                          /* load peak snapshots' rows whatever the selection */
    int profile_flags;                      /* more of the profile to load (report: PROFILE_LEDGER) */
};

/* info's and hist's --since: with --until a time window of files (every
 * view of serve follows one), with --server the runs started since (the
 * store's, as before; --until refused there). parse_options routes it
 * for a command whose cmd_opts.since_runs is set. `what`: what the
 * window gives, for --until's help. */
extern char *opt_since_either;
#define OPTIONS_SINCE_EITHER(what) \
    { .name = "since", .arg = "TIME", .str = &opt_since_either, .help = NULL }, \
    { OPTG_SELECT, .name = "until", .id = OPT_WIN_UNTIL, .arg = "TIME", \
      .help = "files: " what " of a time window, at its end less at\n" \
              "its start (+1.5: from the run's start; see top --help-all,\n" \
              "Time windows); with --server, --since TIME selects the runs\n" \
              "started at TIME or later (an age, a date, epoch seconds)" }

/* Parses argv against the table (parse_table): the groups' options into c
 * (set to their defaults first), the command's own as their entries say;
 * then text for people (d->readable: output_readable), --server against
 * the selection, and the number of operands. Returns PARSE_OK with optind
 * at the first operand, or the exit code: 0 after --help, 2 for a usage
 * error (reported). */
int parse_options(struct common *c, const struct cmd_opts *d, int argc, char **argv);
/* A width (flame graphs, speedscope's weights) adds up: refuses --by of a
 * counter that combines by max (coldage); 0, or 2 with the usage error. */
int counter_width_check(const char *cmd, int counter);

#endif
