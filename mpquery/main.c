/* mpquery: the subcommand table and dispatch, nothing else. Each command
 * lives in cmd_NAME.c, parses its own options and returns an exit code:
 * 0 success, 1 failed operation, 2 bad input or usage. */
#include "mpquery.h"
#include "counters.h"
#include "commands.h"
#include "schema_version.h"   /* SCHEMA_VERSION, from schema/profile.sql */
#include "optdefs.h"          /* the MP_* settings, for the man page */
#include "opt_groups.h"
#include "options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
    int loads_profiles;
} commands[] = {
    { "record", cmd_record, "run a program under the profiler", 0 },
    { "info", cmd_info, "runs, processes, threads, snapshots, totals", 1 },
    { "top", cmd_top, "largest stacks or functions by a counter", 1 },
    { "fold", cmd_fold, "folded stacks for flamegraph.pl and speedscope", 1 },
    { "flame", cmd_flame, "an interactive flame graph (SVG)", 1 },
    { "export", cmd_export, "files for speedscope, go tool pprof, ms_print, flamegraph.pl", 1 },
    { "diff", cmd_diff, "what changed between two profiles", 1 },
    { "check", cmd_check, "a memory gate for CI: limits, and growth from a baseline", 1 },
    { "leaks", cmd_leaks, "blocks never freed, by stack, with known leaks suppressed", 1 },
    { "hist", cmd_hist, "the size histogram: allocations and live blocks by size class", 1 },
    { "rss", cmd_rss, "where the resident memory went: the ledger, adding up to the RSS", 1 },
    { "live", cmd_live, "a full-screen view of a profile being written, redrawn as it grows", 1 },
    { "timeline", cmd_timeline, "memory over time from the snapshots (SVG plot, table)", 1 },
    { "report", cmd_report, "the profile as one HTML page: summary, plots, flame graphs, tables", 1 },
    { "serve", cmd_serve, "explore the profile in the browser: a local web server of every view", 1 },
    { "tree", cmd_tree, "the tree of tag scopes (or functions): self and total per node", 1 },
    { "show", cmd_show, "one stack in full, like a backtrace", 1 },
    { "merge", cmd_merge, "several profiles into one database", 1 },
    { "sql", cmd_sql, "run an SQL query against the profile", 0 },
    { "symbolize", cmd_symbolize, "name frames again from the files on disk", 0 },
    { "push", cmd_push, "store the runs of databases in ClickHouse (for --server)", 1 },
};

/* "'NAME' is not a command", with the nearest commands as git suggests
 * them; returns 2. */
static int not_a_command(const char *name)
{
    const char *names[sizeof commands / sizeof *commands];
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) names[i] = commands[i].name;
    struct strbuf near = { 0 };
    fflush(stdout);
    fputs("mpquery: ", stderr);
    if (name[0] == '-') {
        text_printf(stderr, "unknown option %s (see mpquery --help)", name);
        fputc('\n', stderr);
        return EXIT_BAD_INPUT;
    }
    text_printf(stderr, "'%s' is not a command", name);
    if (nearest_names(name, strlen(name), names, sizeof names / sizeof *names, "'", "'", &near))
        fprintf(stderr, ". did you mean %s?", near.s);
    fputs(" (see mpquery --help)\n", stderr);
    sb_free(&near);
    return EXIT_BAD_INPUT;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mpquery COMMAND [OPTIONS] ...\n"
               "       mpquery COMMAND --help   (or: mpquery help COMMAND; --help-all: every option)\n"
               "       mpquery --version\n\n"
               "Queries profiles written by libmallocprof.so (schema version %d).\n\n"
               "commands:\n", SCHEMA_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].help);
    fputs("\nrules (filters/default.rules, --rules FILE; see filters/README.md):\n"
          "  replace REGEX => TEXT | drop REGEX | prune REGEX | root REGEX\n"
          "  thread replace REGEX => TEXT (thread names)\n"
          "  collapse-templates DEPTH (text: deeper template argument lists as <\xe2\x80\xa6>)\n", f);
    fputs("\ncounters: ncalls (allocations), memtot (bytes allocated), nfree (of these, freed),\n"
          "          nlive (blocks still allocated: ncalls - nfree), memlive (bytes still\n"
          "          allocated), maxlive (peak of memlive), ntemp (of these, temporary:\n"
          "          freed by their thread before it allocated or freed anything else),\n"
          "          time (MP_TIME); the program's own mappings (top --mmap): nmap,\n"
          "          mapped, maxmapped, rss; cold blocks (MP_COLD, leaks --cold):\n"
          "          memcold, coldage\n\n"
          "example:\n"
          "  mpquery record -o app.db -- ./app --input x\n"
          "  mpquery top app.db --by memlive -n 10\n", f);
}

/* Every command's --help in the form help_format says, in table order. */
static void each_help(void)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        char *args[] = { (char *)commands[i].name, "--help", NULL };
        optind = 0;     /* getopt starts afresh for each table */
        commands[i].fn(2, args);
    }
}

/* mpquery(1), from the option tables (make writes build/mpquery.1). */
static void print_man(void)
{
    printf(".TH MPQUERY 1 \"\" \"mpquery %s\" \"mallocprof\"\n"
           ".SH NAME\nmpquery \\- query malloc profiles written by libmallocprof.so\n"
           ".SH SYNOPSIS\n.B mpquery\n.I COMMAND\n[\\fIOPTIONS\\fR] ...\n.br\n.B mpquery help\n.I COMMAND\n"
           ".SH DESCRIPTION\n"
           "Profile a program with LD_PRELOAD=libmallocprof.so (or mpquery record), then query the\n"
           "SQLite database it writes (profile schema version %d). Every command has \\-\\-help, its\n"
           "common options by use, and \\-\\-help\\-all, the text of its section below.\n.SH COMMANDS\n", MPQ_VERSION, SCHEMA_VERSION);
    help_format = HELP_MAN;
    each_help();
    help_format = HELP_TEXT;
    printf(".SH ENVIRONMENT\nThe recorder, libmallocprof.so, reads these (mpquery record sets them from its options):\n");
    for (size_t i = 0; i < MP_NOPTIONS; i++)
        printf(".TP\n\\fB%s\\fR (default \\(lq%s\\(rq)\n%s\n", mp_option_defs[i].name, mp_option_defs[i].deflt,
               mp_option_defs[i].help);
    printf(".SH FILES\n.TP\n.I PREFIX/share/mallocprof/filters/\nthe rules files (default.rules is applied"
           " unless \\-\\-no\\-default\\-rules); README.md there documents the rules language\n"
           ".SH SEE ALSO\n.BR valgrind (1),\n.BR heaptrack (1),\n.BR pkg-config (1)\n");
}

/* The bash completion script (make writes build/mpquery.bash): commands,
 * each command's options, counters after --by, formats after --format,
 * files elsewhere. */
static void print_completion(void)
{
    printf("# bash completion for mpquery %s (generated by mpquery --bash-completion)\n"
           "_mpquery() {\n"
           "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=${COMP_WORDS[1]}\n"
           "    local commands=\"help", MPQ_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) printf(" %s", commands[i].name);
    printf("\"\n"
           "    if [ \"$COMP_CWORD\" -eq 1 ]; then COMPREPLY=($(compgen -W \"$commands --help --version\" -- \"$cur\")); return; fi\n"
           "    if [ \"$cmd\" = help ]; then COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\")); return; fi\n"
           "    local opts= formats=\n"
           "    case $cmd in\n");
    fflush(stdout);
    /* each command's words, as "CMD<TAB>OPTIONS<TAB>FORMATS" lines, turned into case branches */
    help_format = HELP_WORDS;
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        printf("    %s) opts=\"", commands[i].name);
        fflush(stdout);
        char *args[] = { (char *)commands[i].name, "--help", NULL };
        optind = 0;
        commands[i].fn(2, args);
    }
    help_format = HELP_TEXT;
    printf("    esac\n"
           "    case $prev in\n"
           "        --by) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return;;\n"
           "        --format) COMPREPLY=($(compgen -W \"$formats\" -- \"$cur\")); return;;\n"
           "    esac\n"
           "    if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"));\n"
           "    else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n"
           "}\n"
           "complete -o filenames -F _mpquery mpquery\n", "ncalls memtot nfree nlive memlive maxlive ntemp time");
}

/* Loading a large profile fills hundreds of MB of arrays, and page faults
 * are a third of the time: glibc's malloc backs large blocks with
 * transparent huge pages when the tunable glibc.malloc.hugetlb=1 is set
 * (1 M stacks: top 2.7 s -> 1.7 s). Tunables are read at startup, so the
 * commands that load profiles re-exec once with it; `record` does not (its
 * command must see the environment unchanged). */
static void exec_with_huge_pages(char **argv)
{
    const char *t = getenv("GLIBC_TUNABLES");
    if (getenv("MPQUERY_NO_REEXEC") || (t && strstr(t, "glibc.malloc.hugetlb"))) return;
    char value[4096];
    if (snprintf(value, sizeof value, "%s%sglibc.malloc.hugetlb=1", t ? t : "", t && *t ? ":" : "") >=
        (int)sizeof value)
        return;
    if (setenv("GLIBC_TUNABLES", value, 1) || setenv("MPQUERY_NO_REEXEC", "1", 1)) return;
    /* The executable by its own path, so that the process keeps its name
     * (comm, what ps, pgrep and the OOM killer's log show, is the basename
     * of the path exec'd: "exe" for /proc/self/exe); /proc/self/exe only
     * when that path is not this file any more (replaced or deleted). */
    char self[4096];
    struct stat a, b;
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0 && (size_t)n < sizeof self - 1) {
        self[n] = 0;
        if (stat(self, &a) == 0 && stat("/proc/self/exe", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
            execv(self, argv);
    }
    execv("/proc/self/exe", argv);
    /* could not: go on as we are */
}

/* Everything written to stdout reached it, or "write error: why" (fflush
 * writes what is buffered again and sets errno: ENOSPC for /dev/full,
 * EBADF for a closed stdout) and exit 1. */
static int finish_output(int rc)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
    return error(EXIT_FAILED, "write error: %s", strerror(errno ? errno : EIO));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_BAD_INPUT;
    }
    /* folded stacks of big profiles are gigabytes: write in large blocks */
    static char out_buf[1 << 20];
    setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
    const char *name = argv[1];
    if (!strcmp(name, "help") && argc > 2) {         /* mpquery help CMD: CMD --help */
        for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
            if (!strcmp(argv[2], commands[i].name)) {
                char *args[] = { argv[2], "--help", NULL };
                return finish_output(commands[i].fn(2, args));
            }
        return not_a_command(argv[2]);
    }
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return finish_output(0);
    }
    if (!strcmp(name, "--man")) {
        print_man();
        return finish_output(0);
    }
    if (!strcmp(name, "--bash-completion")) {
        print_completion();
        return finish_output(0);
    }
    if (!strcmp(name, "--version")) {
        printf("mpquery %s (profile schema version %d)\n", MPQ_VERSION, SCHEMA_VERSION);
        return finish_output(0);
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(name, commands[i].name)) {
            if (commands[i].loads_profiles) exec_with_huge_pages(argv);
            return finish_output(commands[i].fn(argc - 1, argv + 1));
        }
    return not_a_command(name);
}
