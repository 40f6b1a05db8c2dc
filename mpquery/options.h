/* Command options, git's parse-options way (options.c): each command
 * declares its options once, in one table (struct opt), which yields the
 * getopt_long array, the option lines of its --help, its section of the
 * man page and its words in the bash completion. Each entry carries its
 * own parser (as git's OPT_CALLBACK does) and its place in --help, so this
 * parser knows no group and no command: the options several commands
 * share come in groups, each owned by the module that uses it (its header
 * declares the group's struct, its entries OPTION_* and its parser), and
 * opt_groups.h gathers the groups' structs into struct common. */
#ifndef MPQUERY_OPTIONS_H
#define MPQUERY_OPTIONS_H

#include "mpquery.h"

struct common;                              /* the groups' values (opt_groups.h) */
struct opt;
/* An entry's parser: its value into c; 0, or 2 for a bad value (reported).
 * placed: with cmd_opts.dashdash, the operands before it (diff's A.db
 * --run 1 B.db), else -1. */
typedef int opt_parser(struct common *c, const struct opt *o, const char *arg, int placed);
/* Where --help lists an entry, in this order: the command's own (no
 * heading), Selection, Display, Output, Rules, ClickHouse. */
enum { PLACE_OWN, PLACE_SELECT, PLACE_DISPLAY, PLACE_OUTPUT, PLACE_RULES, PLACE_SERVER, NPLACES };

/* One entry of a command's option table. An entry is a group's option
 * (parse, with its id), a flag or a value of the command's own (flag,
 * str), or else goes to the command's `own` callback. */
struct opt {
    const char *name;       /* long name without "--"; NULL: short only; NULL
                               and no letter: the end of the table */
    char letter;            /* short form (-n), or 0 */
    int id;                 /* a group's option: OPT_* of its module's header */
    opt_parser *parse;      /* a group's option: its parser (the group's OPTG_* sets it) */
    int place;              /* PLACE_*: its heading in --help */
    const char *arg;        /* the value's name in --help; NULL: takes no value */
    const char *help;       /* its text in --help, lines after the first indented
                               by the writer; NULL: listed on the next entry's line */
    int *flag;              /* a flag of the command: *flag = value */
    int value;
    char **str;             /* a value of the command: *str = the text */
    int optional;           /* the value may be left out: --name or --name=VALUE
                               (*str is then ""; "--name VALUE" is an operand) */
    int advanced;           /* listed by --help-all only (a group's rare options,
                               ClickHouse's) */
};

/* A command's options and its --help around them. */
struct cmd_opts {
    const char *cmd;            /* the command, for messages */
    const char *usage, *more;   /* --help: the text before and after the options */
    const struct opt *opts;
    int operands;               /* how many operands it takes; 0: one or more */
    const char *missing;        /* the usage error when operands are missing */
    int in_order;               /* options end at the first operand (record) */
    int operands_optional;      /* none at all is fine too (record --pid) */
    int dashdash;               /* "--" splits the operands in two lists (diff: operands_a) */
    int server_and_files;       /* --server reads a baseline: files are still operands (check) */
    int since_runs;             /* OPTIONS_SINCE_EITHER: --since a window of files or runs of --server */
    int readable;               /* takes OPTIONS_READABLE: set c->view's names and c->out's
                                   human, width and pager from them and the format
                                   (parse_options, opt_groups.c) */
    void (*help)(void);         /* writes --help instead (record) */
    int (*own)(void *ctx, const struct opt *o, const char *arg);  /* 0 or exit code */
    void *ctx;
};
enum { PARSE_OK = -1 };
/* Parses argv against the table, each entry by its parser (c passed on)
 * or as its flag or value; with d->dashdash, *operands_a is the number of
 * operands before "--", or -1 without it. Returns PARSE_OK with optind
 * at the first operand, or the exit code: 0 after --help, 2 for a usage
 * error (reported). parse_options (opt_groups.h) is the commands' way in. */
int parse_table(struct common *c, const struct cmd_opts *d, int argc, char **argv, int *operands_a);
/* The number of operands argv[optind..argc) against d's: PARSE_OK, or 2
 * with the usage error. */
int check_operands(const struct cmd_opts *d, int argc);
/* What --help prints: the text, a man page section, or the words of the
 * completion script (main.c's --man, --bash-completion). The text comes
 * in two sizes: --help, the synopsis, the description's first sentence,
 * the common options under headings by use (the command's own, then
 * Selection, Display, Output, Rules) and the examples; --help-all, all of the usage text,
 * every option (the rare ones and ClickHouse's too) and the details. The
 * man page and the completion have every option. */
enum { HELP_TEXT, HELP_MAN, HELP_WORDS };
extern int help_format;
/* The names among names[0..n) nearest to typed, as git suggests: an edit
 * distance (a transposition counting one) of at most a third of typed's
 * length (at least 1); the nearest ones, each between pre and post,
 * "'a', 'b' or 'c'", appended to out. Returns how many. */
size_t nearest_names(const char *typed, size_t len, const char *const *names, size_t n, const char *pre,
                     const char *post, struct strbuf *out);
/* Usage error "mpquery: CMD: what (see mpquery CMD --help)"; returns 2. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "bad value 'ARG' for OPT (expected EXPECTED)", reported; returns 2. */
int bad_value(const char *cmd, const char *opt, const char *arg, const char *expected);
/* Appends arg to one of the 64-entry lists of a group (--rules, --filter
 * ...); 0, or bad_value's 2 when it is full. */
int option_list_add(const char **list, size_t *n, const char *cmd, const char *opt, const char *arg,
                    const char *expected);

#endif
