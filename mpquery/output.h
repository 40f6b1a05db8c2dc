/* Output (output.c): tables written as aligned text, CSV or JSON, a JSON
 * writer (the one escaper per context: escape.h); the pager (pager.c); counters for people (units.c); and the
 * output's options (--format, --by, -n, --depth, text for people), which
 * parse_options parses into struct output_opts (output_option). */
#ifndef MPQUERY_OUTPUT_H
#define MPQUERY_OUTPUT_H

#include <stdarg.h>
#include <stdio.h>

#include "escape.h"
#include "mpquery.h"
#include "counters.h"
#include "options.h"

struct view_opts;

/* ---------------------------------------------------------------- output.c */
/* The formats; a command's --format takes those its help text names
 * (OPTION_FORMAT: "text (default), csv, json or dot"). */
enum { FMT_TEXT, FMT_CSV, FMT_JSON, FMT_DOT, FMT_SVG };
int format_parse(const char *s);    /* -1 when unknown */
extern const char *const fmt_name[];
enum { CELL_STR, CELL_INT, CELL_NUM, CELL_NULL, CELL_JSON };
struct cell { int type; char *s; };
struct table {
    size_t ncols, nrows, cap;   /* cap: cells of the row being filled */
    int indent;                 /* text: spaces before each line */
    size_t width;               /* text: lines cut to this many columns (0: whole) */
    const char **cols;
    struct cell *cells;         /* nrows * ncols */
};
void table_init(struct table *t, size_t ncols, const char *const *cols);
void table_str(struct table *t, const char *s);    /* append cells row-major */
void table_strn(struct table *t, const char *s, size_t n);
void table_int(struct table *t, int64_t v);
/* v of a counter: with human, sizes and times in units (fmt_human, right
 * aligned like numbers); counts, and everything without human, whole. */
void table_counter(struct table *t, int counter, int64_t v, int human);
void table_num(struct table *t, double v, int decimals);
void table_double(struct table *t, double v);  /* shortest form; NaN/inf: null */
void table_null(struct table *t);
void table_json(struct table *t, const char *json);  /* raw JSON value */
/* Text: aligned columns, numbers right-aligned, last column unpadded.
 * CSV: RFC 4180. JSON: array of objects; a column "a.b" nests b in a. */
void table_print(const struct table *t, int format, FILE *f);
void table_free(struct table *t);
/* A JSON writer: values in order; separators, nesting and escaping are its
 * job. json_break(w, indent) puts the next element, or the closing bracket,
 * on a new line indented by indent spaces. */
struct json {
    FILE *f;
    int depth, after_key, brk;      /* brk: pending line break's indent, -1 none */
    unsigned char first[32];        /* per level: no element written yet */
};
void json_init(struct json *w, FILE *f);
void json_open(struct json *w, char bracket);      /* '{' or '[' */
void json_close(struct json *w, char bracket);
void json_key(struct json *w, const char *key);
void json_int(struct json *w, int64_t v);
void json_fixed(struct json *w, double v, int decimals);
void json_str(struct json *w, const char *s);
void json_strn(struct json *w, const char *s, size_t n);
void json_null(struct json *w);
void json_raw(struct json *w, const char *json);   /* a value already in JSON */
void json_break(struct json *w, int indent);
/* The table as one JSON value: an array of objects, one a row. */
void table_json_value(const struct table *t, struct json *w);
/* Ends an object written to w->f with "key": the table, then a newline. */
void json_rows_last(struct json *w, const char *key, const struct table *t);
/* The columns the text of columns 0..col-1 of tab takes on each line: their
 * widest cell, two spaces after each (a last column fitted to the rest of
 * the terminal: where.c's labels, hist's bars). */
size_t table_columns_before(const struct table *tab, size_t col);
/* One line of text: cleaned, cut to width columns (code points; 0: whole)
 * ending in '…' when longer, then a newline. */
void text_line(FILE *f, const char *s, size_t n, size_t width);

/* ---------------------------------------------------------------- pager.c */
/* The width of the terminal stdout is (COLUMNS when set, else the
 * terminal's own, else 80), or 0 when stdout is not a terminal; the
 * first call's answer. */
size_t terminal_width(void);
/* Its height (LINES when set, else the terminal's own, else 24), or 0. */
size_t terminal_height(void);
/* When stdout is a terminal, from now until the program exits: each line
 * written to stdout is cut to width code points (0: whole), its last one
 * '…' when it goes on; with page, an output longer than the screen (more
 * than terminal_height() - 1 lines) goes through $PAGER (less -SFRX when
 * unset; none when empty or cat), a shorter one straight to the terminal.
 * The first call decides; output_readable makes it for text commands. */
void terminal_output(size_t width, int page);
/* terminal_output(0, 1): paged, lines whole (csv, json on a terminal). */
void pager_start(void);

/* ---------------------------------------------------------------- units.c */
/* v of a counter for people, into buf (returned): bytes in B, KiB, MiB...
 * (powers of 1024), time in ns, µs, ms, s, counts as 999, 1.23k, 45.6M;
 * at most three significant digits once scaled, exact below the first
 * step (1000 B, 999); negative values with '-'. */
char *fmt_human(int counter, int64_t v, char *buf, size_t n);
/* A size in a sentence: "1.21 MiB" with human, else "1268777 bytes". */
char *fmt_size(int human, int64_t v, char *buf, size_t n);
/* The counter is a size or a time (fmt_human gives it a unit). */
int counter_has_unit(int counter);

/* ---------------------------------------------------------------- options */
/* The output's options, each entry tagged OPTG_OUTPUT: parse_output parses
 * it (options.h), --help lists it under Output (--by, -n: the command's own
 * lines; the others of text for people: Display). */
#define OPTG_OUTPUT .parse = parse_output, .place = PLACE_OUTPUT
#define OPTG_DISPLAY .parse = parse_output, .place = PLACE_DISPLAY
enum {
    OPT_FORMAT = 4 << 8, OPT_BY, OPT_LIMIT, OPT_DEPTH,
    OPT_FULL_NAMES, OPT_SIGNATURES, OPT_NO_SIGNATURES, OPT_BYTES, OPT_NO_PAGER, OPT_QUIET,
};
struct output_opts {
    int format, by, depth, limit;           /* --format, --by, --depth, -n */
    int depth_given;                        /* --depth given: on a terminal too, not only the width */
    int by_given;                           /* --by given (else by is the command's default) */
    /* text for people (commands with cmd_opts.readable), set from the
     * options below and the format once they are parsed (output_readable) */
    int full_names, signatures;             /* --full-names; --signatures 1, --no-signatures 0, else -1 */
    int bytes, no_pager;                    /* --bytes, --no-pager */
    int human;                              /* text: sizes and times in units (fmt_human) */
    size_t width;                           /* text on a terminal: its width, else 0 (whole lines) */
    int pager;                              /* page the output when stdout is a terminal (pager_start) */
    int quiet;                              /* -q, --quiet: no status lines (status_line) */
    const char *formats;                    /* the --format entry's help: the formats it takes */
};
#define OPTION_BY(h)        { .parse = parse_output, .name = "by", .id = OPT_BY, .arg = "COUNTER", .help = (h) }
#define OPTION_LIMIT        { .parse = parse_output, .name = "limit", .letter = 'n', .id = OPT_LIMIT, .arg = "N", \
                              .help = "show N rows (default 20, 0 = all)" }
#define OPTION_DEPTH        { OPTG_DISPLAY, .name = "depth", .id = OPT_DEPTH, .arg = "K", \
                              .help = "frames shown per stack, leaf first (default 5, 0 = all)" }
#define OPTION_FORMAT(h)    { OPTG_OUTPUT, .name = "format", .id = OPT_FORMAT, .arg = "F", .help = (h) }
/* -q, --quiet: every command that says what it did (status_line) */
#define OPTION_QUIET(h)     { OPTG_OUTPUT, .name = "quiet", .letter = 'q', .id = OPT_QUIET, .help = (h) }
#define OPTION_NO_PAGER \
    { OPTG_OUTPUT, .name = "no-pager", .id = OPT_NO_PAGER, \
      .help = "on a terminal, write directly instead of through $PAGER\n" \
              "(default: less -SFRX, when longer than the screen)" }
/* text for people (commands with cmd_opts.readable) */
#define OPTIONS_READABLE \
    { OPTG_DISPLAY, .name = "full-names", .id = OPT_FULL_NAMES, .advanced = 1, \
      .help = "text: C++ names whole (the rules' collapse-templates\n" \
              "makes template argument lists <\xe2\x80\xa6>)" }, \
    { OPTG_DISPLAY, .name = "signatures", .id = OPT_SIGNATURES, .advanced = 1, \
      .help = "functions with their parameter lists (default: csv, json)" }, \
    { OPTG_DISPLAY, .name = "no-signatures", .id = OPT_NO_SIGNATURES, .advanced = 1, \
      .help = "functions without their parameter lists (default: text)" }, \
    { OPTG_DISPLAY, .name = "bytes", .id = OPT_BYTES, \
      .help = "text: sizes in bytes, times in ns (default: 1.21 MiB,\n" \
              "3.40 ms; csv and json always have raw numbers)" }, \
    OPTION_NO_PAGER
/* The defaults: text, by memtot, 20 rows, 5 frames. */
void output_opts_init(struct output_opts *o);
/* One of the options above into o; 0, or 2 for a bad value (reported). */
int output_option(struct output_opts *o, const char *cmd, int id, const char *arg);
/* The entries' parser: output_option into c->out (--format: the formats its
 * entry's help names). */
opt_parser parse_output;
/* Text is for people: C++ names shortened (the rules' collapse-templates,
 * no parameter lists: into v), sizes in units, a terminal's width, a
 * pager (terminal_output); csv and json keep whole names and raw numbers
 * and whole lines (paged too, on a terminal). */
void output_readable(struct output_opts *o, struct view_opts *v);
/* A status line, "mpquery: " and what a command did (wrote, merged,
 * stored) on stderr, unless -q (OPTION_QUIET: mpquery_quiet). */
extern int mpquery_quiet;
void status_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
