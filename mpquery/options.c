/* Command options, git's parse-options way (options.h): each command
 * declares its options once, in one table (struct opt), which yields the
 * getopt_long array, the option lines of its --help, its man page section
 * and its completion words. A group's option goes to its module's parser
 * (select.c, opt_groups.c); usage errors are reported here, one line,
 * "mpquery: CMD: what (see mpquery CMD --help)", exit 2. */
#include "mpquery.h"
#include "options.h"
#include "output.h"
#include "rules.h"
#include "select.h"
#include "server.h"
#include "view.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* getopt_long's value for a table entry without a short letter: its index
 * plus this (above every character); and for --help, which every command
 * takes without listing it */
#define LONG_ONLY 1000
#define HELP_VALUE (LONG_ONLY - 1)
/* --help: the column option texts start at, and the room for names */
#define HELP_COLUMN 22

static void common_init(struct common *c, const char *cmd)
{
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    select_opts_init(&c->sel);
    output_opts_init(&c->out);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "mpquery: %s: ", cmd);
    va_start(ap, fmt);
    text_vprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see mpquery %s --help)\n", cmd);
    return EXIT_BAD_INPUT;
}

/* What getopt_long returned for an option the table does not have (':'
 * missing value, '?' unknown). */
static int bad_option(const char *cmd, int opt, char **argv)
{
    const char *arg = argv[optind - 1];
    if (opt == ':') return usage_error(cmd, "option %s needs a value", arg);
    if (optopt > 0 && optopt < 256) return usage_error(cmd, "unknown option -%c", optopt);
    return usage_error(cmd, "unknown option %s", arg);
}

int bad_value(const char *cmd, const char *opt, const char *arg, const char *expected)
{
    return usage_error(cmd, "bad value '%s' for %s (expected %s)", arg, opt, expected);
}

int option_list_add(const char **list, size_t *n, const char *cmd, const char *opt, const char *arg,
                    const char *expected)
{
    if (*n == 64) return bad_value(cmd, opt, arg, expected);
    list[(*n)++] = arg;
    return 0;
}

/* A group's option into its struct in c; 0, or 2 for a bad value
 * (reported). */
static int group_option(struct common *c, int id, const char *arg)
{
    switch (OPT_GROUP(id)) {
    case OPTG_SELECT: return select_option(&c->sel, c->cmd, id, arg);
    case OPTG_RULES: return rules_option(&c->rules, c->cmd, id, arg);
    case OPTG_VIEW: return view_option(&c->view, c->cmd, id, arg);
    case OPTG_OUTPUT: return output_option(&c->out, c->cmd, id, arg);
    case OPTG_SERVER: return server_option(&c->server, id, arg);
    }
    return 0;
}

static int table_end(const struct opt *o) { return !o->name && !o->letter; }

static int getopt_value(const struct opt *opts, size_t i)
{
    return opts[i].letter ? opts[i].letter : LONG_ONLY + (int)i;
}

/* ---------------------------------------------------------------- --help */
/* One entry's names, "-n N", "--by COUNTER", appended to sb. */
static void add_names(struct strbuf *sb, const struct opt *o)
{
    if (sb->len) sb_puts(sb, ", ");
    if (o->letter) sb_printf(sb, "-%c", o->letter);
    if (o->letter && o->name) sb_puts(sb, ", ");
    if (o->name) sb_printf(sb, "--%s", o->name);
    if (o->arg) sb_printf(sb, " %s", o->arg);
}

/* "  NAMES  TEXT", TEXT's further lines under its first; names too long
 * for the column go on a line of their own. */
static void print_option_line(const char *names, size_t len, const char *text)
{
    if (len + 4 <= HELP_COLUMN) printf("  %-*s", HELP_COLUMN - 2, names);
    else printf("  %s\n%*s", names, HELP_COLUMN, "");
    for (const char *nl; (nl = strchr(text, '\n')); text = nl + 1)
        printf("%.*s\n%*s", (int)(nl - text), text, HELP_COLUMN, "");
    printf("%s\n", text);
}

/* ---------------------------------------------------------------- docs */
/* The man page and the bash completion come from the same tables as --help
 * (mpquery --man, mpquery --bash-completion: main.c asks each command for
 * its --help in this form). */
int help_format = HELP_TEXT;

/* troff text: backslashes escaped, a line starting with '.' or '\'' kept
 * a text line, '-' a minus sign (options are typed as they show). */
static void troff_text(const char *s, size_t n)
{
    int bol = 1;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (bol && (ch == '.' || ch == '\'')) fputs("\\&", stdout);
        if (ch == '\\') fputs("\\e", stdout);
        else if (ch == '-') fputs("\\-", stdout);
        else putchar(ch);
        bol = ch == '\n';
    }
}

static void troff_puts(const char *s) { troff_text(s, strlen(s)); }

/* The command's section of mpquery(1): its usage text, its options as
 * tagged paragraphs, the rest as it is. */
static void print_man(const struct cmd_opts *d)
{
    printf(".SS %s\n.nf\n", d->cmd);
    if (d->help) {              /* a help of its own: its text, escaped */
        char *text = NULL;
        size_t len = 0;
        FILE *saved = stdout, *mem = open_memstream(&text, &len);
        if (!mem) return;
        stdout = mem;
        d->help();
        fclose(mem);
        stdout = saved;
        troff_text(text, len);
        free(text);
        printf(".fi\n");
        return;
    }
    troff_puts(d->usage);
    printf(".fi\n");
    struct strbuf names = { 0 };
    for (const struct opt *o = d->opts; !table_end(o); o++) {
        add_names(&names, o);
        if (!o->help) continue;
        printf(".TP\n\\fB");
        troff_text(names.s, names.len);
        printf("\\fR\n");
        troff_puts(o->help);
        printf("\n");
        names.len = 0;
    }
    printf(".PP\n.nf\n");
    troff_puts(d->more);
    printf(".fi\n");
    sb_free(&names);
}

/* The rest of the command's branch in the completion script (main.c
 * prints "    CMD) opts=\"" first): its option names, and the --format
 * values its help names. */
static void print_words(const struct cmd_opts *d)
{
    static const char *const formats[] = { "text", "csv", "json", "dot", "svg", "speedscope", "pprof", "massif",
                                           "folded" };
    printf("--help");
    const char *format_help = "";
    for (const struct opt *o = d->opts; !table_end(o); o++) {
        if (o->letter) printf(" -%c", o->letter);
        if (o->name) printf(" --%s", o->name);
        if (o->name && !strcmp(o->name, "format") && o->help) format_help = o->help;
    }
    printf("\"; formats=\"");
    for (size_t i = 0, k = 0; i < sizeof formats / sizeof *formats; i++)
        if (strstr(format_help, formats[i])) printf("%s%s", k++ ? " " : "", formats[i]);
    printf("\";;\n");
}

static void print_help(const struct cmd_opts *d)
{
    if (help_format == HELP_MAN) return print_man(d);
    if (help_format == HELP_WORDS) return print_words(d);
    struct strbuf names = { 0 };
    fputs(d->usage, stdout);
    for (const struct opt *o = d->opts; !table_end(o); o++) {
        add_names(&names, o);
        if (!o->help) continue;
        print_option_line(names.s, names.len, o->help);
        names.len = 0;
    }
    fputs(d->more, stdout);
    sb_free(&names);
}

/* ---------------------------------------------------------------- parsing */
/* getopt_long's array and short options string for the table (+ --help). */
static struct option *getopt_table(const struct cmd_opts *d, struct strbuf *shorts)
{
    size_t n = 0;
    while (!table_end(&d->opts[n])) n++;
    struct option *lo = xcalloc(n + 2, sizeof *lo), *l = lo;
    sb_puts(shorts, d->in_order ? "+:" : d->dashdash ? "-:" : ":");
    for (size_t i = 0; i < n; i++) {
        const struct opt *o = &d->opts[i];
        int has_arg = o->arg ? required_argument : no_argument;
        if (o->letter) sb_printf(shorts, "%c%s", o->letter, o->arg ? ":" : "");
        if (o->name) *l++ = (struct option){ o->name, has_arg, NULL, getopt_value(d->opts, i) };
    }
    *l = (struct option){ "help", no_argument, NULL, HELP_VALUE };
    return lo;
}

/* One option of the table: 0 or the exit code. */
static int take_option(struct common *c, const struct cmd_opts *d, const struct opt *o, char *arg)
{
    if (o->id) return group_option(c, o->id, arg);
    if (o->flag) *o->flag = o->value;
    else if (o->str) *o->str = arg;
    else return d->own(d->ctx, o, arg);
    return 0;
}

/* With d->dashdash, getopt returns operands in order (as option 1): those
 * before "--" go to before[]; *dashdash tells whether "--" ended the
 * options (and was not an option's value). */
static int next_options(struct common *c, const struct cmd_opts *d, int argc, char **argv, char **before,
                        int *nbefore, int *dashdash)
{
    struct strbuf shorts = { 0 };
    struct option *lo = getopt_table(d, &shorts);
    int opt, rc = PARSE_OK;
    const char *value = NULL;               /* the last option's value */
    opterr = 0;
    while (rc == PARSE_OK && (opt = getopt_long(argc, argv, shorts.s, lo, NULL)) != -1) {
        size_t i = 0;
        if (opt == 1) {
            before[(*nbefore)++] = optarg;
            continue;
        }
        value = optarg;
        if (opt == HELP_VALUE) {
            if (d->help && help_format == HELP_TEXT) d->help(); else print_help(d);
            rc = 0;
            break;
        }
        while (!table_end(&d->opts[i]) && getopt_value(d->opts, i) != opt) i++;
        if (table_end(&d->opts[i])) rc = bad_option(c->cmd, opt, argv);
        else if ((rc = take_option(c, d, &d->opts[i], optarg)) == 0) rc = PARSE_OK;
    }
    *dashdash = rc == PARSE_OK && optind > 0 && optind <= argc && !strcmp(argv[optind - 1], "--")
                && argv[optind - 1] != value;
    free(lo);
    sb_free(&shorts);
    return rc;
}

/* Puts the operands before "--" (before[]) and after it in argv[optind..argc). */
static void gather_operands(char **argv, char **before, int nbefore)
{
    optind -= nbefore;          /* over the options and operands already read */
    memcpy(argv + optind, before, (size_t)nbefore * sizeof *argv);
}

/* --server reads a store, not files, and selects runs by their
 * attributes: what selects processes, threads or snapshots of files does
 * not apply (but --snapshot last or peak); its selection options need it. */
static int server_options(struct common *c, int operands)
{
    struct server_opts *s = &c->server;
    if (!s->url) {
        if (s->where || s->host || s->since || s->side_where[0] || s->side_where[1])
            return usage_error(c->cmd, "--where, --host and --since select runs of --server URL");
        return 0;
    }
    s->exe = c->sel.exe;        /* --exe: the store's runs of it (whole trees), not its processes */
    c->sel.exe = NULL;
    if (operands) return usage_error(c->cmd, "--server reads the store, not files: no database file");
    const struct select_opts *o = &c->sel;
    const char *bad = o->has_run || o->run_all ? "--run" : o->has_pid ? "--pid" : o->image ? "--image"
                    : o->has_tid || o->thread_re ? "--thread" : o->per_thread ? "--per-thread or --group-threads"
                    : o->snap_kind != SNAP_LAST && o->snap_kind != SNAP_PEAK ? "--snapshot other than last or peak"
                    : NULL;     /* diff's --a-run... come after parsing: cmd_diff refuses them */
    if (bad) return usage_error(c->cmd, "%s does not apply to --server (select runs with --where, --exe, --host, --since)", bad);
    return 0;
}

int parse_options(struct common *c, const struct cmd_opts *d, int argc, char **argv)
{
    common_init(c, d->cmd);
    char **before = xmalloc((size_t)argc * sizeof *before);
    int nbefore = 0, dashdash = 0;
    int rc = next_options(c, d, argc, argv, before, &nbefore, &dashdash);
    if (rc == PARSE_OK && d->dashdash) {
        gather_operands(argv, before, nbefore);
        c->operands_a = dashdash ? nbefore : -1;
    }
    free(before);
    if (rc != PARSE_OK) return rc;
    if (d->readable) output_readable(&c->out, &c->view);
    if ((rc = server_options(c, argc - optind))) return rc;
    if (c->server.url) return PARSE_OK;
    int operands = argc - optind;
    if (operands < (d->operands ? d->operands : 1)) return usage_error(c->cmd, "%s", d->missing);
    if (d->operands && operands > d->operands) return usage_error(c->cmd, "too many arguments");
    return PARSE_OK;
}
