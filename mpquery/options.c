/* Command options, git's parse-options way (options.h): each command
 * declares its options once, in one table (struct opt), which yields the
 * getopt_long array, the option lines of its --help (short, by use) and
 * --help-all, its man page section and its completion words. An entry
 * carries its parser and its place in --help: nothing here knows a group
 * (opt_groups.c) or a command. Usage errors are reported here, one line,
 * "mpquery: CMD: what (see mpquery CMD --help)", exit 2, an unknown option
 * with the nearest names. */
#include "mpquery.h"
#include "escape.h"
#include "options.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* getopt_long's value for a table entry without a short letter: its index
 * plus this (above every character); and for --help and --help-all, which
 * every command takes without listing them */
#define LONG_ONLY 1000
#define HELP_VALUE (LONG_ONLY - 1)
#define HELP_ALL_VALUE (LONG_ONLY - 2)
/* --help: the column option texts start at, and the room for names */
#define HELP_COLUMN 22

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

static int table_end(const struct opt *o) { return !o->name && !o->letter; }

/* Optimal string alignment distance between a[0..n) and b[0..m)
 * (insertions, deletions, substitutions and transpositions of adjacent
 * characters, each one), for names of at most 63 characters. */
static size_t edit_distance(const char *a, size_t n, const char *b, size_t m)
{
    if (n > 63 || m > 63) return SIZE_MAX;
    size_t d[64][64];
    for (size_t i = 0; i <= n; i++) d[i][0] = i;
    for (size_t j = 0; j <= m; j++) d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

size_t nearest_names(const char *typed, size_t len, const char *const *names, size_t n, const char *pre,
                     const char *post, struct strbuf *out)
{
    size_t best = len / 3 > 1 ? len / 3 : 1, found = 0;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(typed, len, names[i], strlen(names[i]));
        if (d < best) best = d;
    }
    for (size_t i = 0; i < n; i++)
        if (edit_distance(typed, len, names[i], strlen(names[i])) == best) found++;
    for (size_t i = 0, k = 0; i < n; i++)
        if (edit_distance(typed, len, names[i], strlen(names[i])) == best)
            sb_printf(out, "%s%s%s%s", k++ == 0 ? "" : k == found ? " or " : ", ", pre, names[i], post);
    return found;
}

/* What getopt_long returned for an option the table does not have (':'
 * missing value, '?' unknown): an unknown long option with the nearest
 * names of the table, as git suggests commands. */
static int bad_option(const struct cmd_opts *d, int opt, char **argv)
{
    const char *arg = argv[optind - 1], *cmd = d->cmd;
    if (opt == ':') return usage_error(cmd, "option %s needs a value", arg);
    if (optopt && !strncmp(arg, "--", 2) && strchr(arg, '='))      /* a known flag given a value */
        return usage_error(cmd, "option %.*s takes no value", (int)strcspn(arg, "="), arg);
    if (optopt > 0 && optopt < 256) return usage_error(cmd, "unknown option -%c", optopt);
    size_t n = 0;
    while (!table_end(&d->opts[n])) n++;
    const char **names = xmalloc((n + 2) * sizeof *names);
    struct strbuf near = { 0 };
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (d->opts[i].name) names[k++] = d->opts[i].name;
    names[k++] = "help";
    names[k++] = "help-all";
    const char *typed = arg + (arg[0] == '-' && arg[1] == '-' ? 2 : 0), *eq = strchr(typed, '=');
    int rc;
    if (nearest_names(typed, eq ? (size_t)(eq - typed) : strlen(typed), names, k, "--", "", &near))
        rc = usage_error(cmd, "unknown option %s. did you mean %s?", arg, near.s);
    else
        rc = usage_error(cmd, "unknown option %s", arg);
    free(names);
    sb_free(&near);
    return rc;
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
    if (o->arg) sb_printf(sb, o->optional ? "[=%s]" : " %s", o->arg);
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
                                           "folded", "junit" };
    printf("--help --help-all");
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

/* --help's headings (PLACE_*, options.h), in the order printed: the
 * command's own options (and --by, -n) first, without a heading. */
static const char *const place_heading[NPLACES] = { "", "Selection", "Display", "Output", "Rules",
                                                    "ClickHouse (--server)" };

/* The options of one heading: an entry without help text shares the line
 * of the next one, which places them; without all, the line leaves out
 * the advanced ones. Returns how many were left out. */
static size_t print_place(const struct cmd_opts *d, int place, int all)
{
    struct strbuf names = { 0 };
    size_t hidden = 0;
    int headed = 0;
    const struct opt *first = d->opts;
    for (const struct opt *o = d->opts; !table_end(o); o++) {
        if (!o->help) continue;
        int here = o->place == place;
        names.len = 0;
        for (const struct opt *e = first; here && e <= o; e++) {
            if (e->advanced && !all) hidden++;
            else add_names(&names, e);
        }
        first = o + 1;
        if (!names.len) continue;
        if (!headed) printf(*place_heading[place] ? "\n%s:\n" : "\n", place_heading[place]);
        headed = 1;
        print_option_line(names.s, names.len, o->help);
    }
    sb_free(&names);
    return hidden;
}

/* --help: the usage text's synopsis (without the lines of advanced
 * options: --server) and its description's first sentence. */
static void print_short_usage(const char *usage)
{
    const char *para = strstr(usage, "\n\n");
    const char *end = para ? para + 1 : usage + strlen(usage);
    for (const char *l = usage, *nl; l < end; l = nl + 1) {
        nl = strchr(l, '\n');
        if (!nl) nl = l + strlen(l);
        if (!memmem(l, (size_t)(nl - l), "--server", 8)) printf("%.*s\n", (int)(nl - l), l);
        if (!*nl) break;
    }
    if (!para) return;
    const char *s = para + 2, *stop = s;
    while (*stop && !(stop[0] == '.' && (stop[1] == ' ' || stop[1] == '\n' || !stop[1])) &&
           !(stop[0] == '\n' && stop[1] == '\n'))
        stop++;
    if (*stop == '.') stop++;
    if (stop > s) printf("\n%.*s\n", (int)(stop - s), s);
}

static void print_help(const struct cmd_opts *d, int all)
{
    if (help_format == HELP_MAN) return print_man(d);
    if (help_format == HELP_WORDS) return print_words(d);
    if (all) fputs(d->usage, stdout);
    else print_short_usage(d->usage);
    size_t hidden = 0;
    for (int place = 0; place < NPLACES; place++) hidden += print_place(d, place, all);
    if (all) {
        fputs(d->more, stdout);
        return;
    }
    /* the examples that end the details */
    const char *ex = NULL;
    for (const char *m = d->more; (m = strstr(m, "\nexample")); m++) ex = m + 1;
    if (ex) printf("\n%s", ex);
    int server = 0;
    for (const struct opt *o = d->opts; !table_end(o); o++) server |= o->place == PLACE_SERVER;
    if (hidden || *d->more)
        printf("\nmpquery %s --help-all: every option%s and the details\n", d->cmd,
               server ? " (ClickHouse's too)" : "");
}

/* ---------------------------------------------------------------- parsing */
/* getopt_long's array and short options string for the table (+ --help). */
static struct option *getopt_table(const struct cmd_opts *d, struct strbuf *shorts)
{
    size_t n = 0;
    while (!table_end(&d->opts[n])) n++;
    struct option *lo = xcalloc(n + 3, sizeof *lo), *l = lo;
    sb_puts(shorts, d->in_order ? "+:" : d->dashdash ? "-:" : ":");
    for (size_t i = 0; i < n; i++) {
        const struct opt *o = &d->opts[i];
        int has_arg = !o->arg ? no_argument : o->optional ? optional_argument : required_argument;
        if (o->letter) sb_printf(shorts, "%c%s", o->letter, o->arg ? ":" : "");
        if (o->name) *l++ = (struct option){ o->name, has_arg, NULL, getopt_value(d->opts, i) };
    }
    *l++ = (struct option){ "help", no_argument, NULL, HELP_VALUE };
    *l = (struct option){ "help-all", no_argument, NULL, HELP_ALL_VALUE };
    return lo;
}

/* One option of the table: 0 or the exit code. placed: parse's. */
static int take_option(struct common *c, const struct cmd_opts *d, const struct opt *o, char *arg, int placed)
{
    if (o->parse) return o->parse(c, o, arg, placed);
    if (o->flag) *o->flag = o->value;
    else if (o->str) *o->str = arg ? arg : (char *)"";     /* "": an optional value left out */
    else if (d->own) return d->own(d->ctx, o, arg);
    else return usage_error(d->cmd, "option %s has no parser in mpquery's table (a bug)", o->name ? o->name : "-n");
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
        if (opt == HELP_VALUE || opt == HELP_ALL_VALUE) {
            if (d->help && help_format == HELP_TEXT) d->help(); else print_help(d, opt == HELP_ALL_VALUE);
            rc = 0;
            break;
        }
        while (!table_end(&d->opts[i]) && getopt_value(d->opts, i) != opt) i++;
        if (table_end(&d->opts[i])) rc = bad_option(d, opt, argv);
        else if ((rc = take_option(c, d, &d->opts[i], optarg, d->dashdash ? *nbefore : -1)) == 0) rc = PARSE_OK;
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

int parse_table(struct common *c, const struct cmd_opts *d, int argc, char **argv, int *operands_a)
{
    char **before = xmalloc((size_t)argc * sizeof *before);
    int nbefore = 0, dashdash = 0;
    int rc = next_options(c, d, argc, argv, before, &nbefore, &dashdash);
    if (rc == PARSE_OK && d->dashdash) {
        gather_operands(argv, before, nbefore);
        *operands_a = dashdash ? nbefore : -1;
    }
    free(before);
    return rc;
}

int check_operands(const struct cmd_opts *d, int argc)
{
    int operands = argc - optind;
    if (operands < (d->operands ? d->operands : 1) && !(d->operands_optional && !operands))
        return usage_error(d->cmd, "%s", d->missing);
    if (d->operands && operands > d->operands) return usage_error(d->cmd, "too many arguments");
    return PARSE_OK;
}
