/* Text, CSV and JSON writers of tables, and the JSON writer. A command
 * fills a `struct table` (cells typed as string,
 * integer, number, null or raw JSON) and prints it in the chosen format;
 * other JSON (info, show's header) goes through struct json, which owns
 * separators, nesting and escaping. Every string from a profile (or a
 * user) goes through escape.c's escaper for its context; a text row is one
 * line, cut to the table's width (a terminal's) with an ellipsis.
 * mpquery's HTML has no JSON or other data inside its one <script>
 * (nothing from a profile goes there: the script reads the escaped
 * elements and attributes). */
#include "mpquery.h"
#include "counters.h"
#include "escape.h"
#include "output.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6"     /* …: where text_line cut a line */

const char *const fmt_name[] = { [FMT_TEXT] = "text", [FMT_CSV] = "csv", [FMT_JSON] = "json",
                                     [FMT_DOT] = "dot", [FMT_SVG] = "svg", NULL };

int format_parse(const char *s)
{
    for (int i = 0; fmt_name[i]; i++)
        if (!strcmp(s, fmt_name[i])) return i;
    return -1;
}

/* ---------------------------------------------------------------- table */
void table_init(struct table *t, size_t ncols, const char *const *cols)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->cols = xmalloc(ncols * sizeof *t->cols);
    memcpy(t->cols, cols, ncols * sizeof *t->cols);
}

static struct cell *next_cell(struct table *t)
{
    /* t->cap counts the cells of the row being filled */
    size_t idx = t->nrows * t->ncols + t->cap;
    static const size_t chunk = 1024;
    if (idx % chunk == 0) t->cells = xrealloc(t->cells, (idx + chunk) * sizeof *t->cells);
    if (++t->cap == t->ncols) { t->cap = 0; t->nrows++; }
    return &t->cells[idx];
}

void table_strn(struct table *t, const char *s, size_t n)
{
    struct cell *c = next_cell(t);
    c->type = CELL_STR;
    c->s = xmalloc(n + 1);
    memcpy(c->s, s, n);
    c->s[n] = 0;
}

void table_str(struct table *t, const char *s) { table_strn(t, s, strlen(s)); }

void table_int(struct table *t, int64_t v)
{
    struct cell *c = next_cell(t);
    c->type = CELL_INT;
    c->s = xmalloc(24);
    snprintf(c->s, 24, "%lld", (long long)v);
}

void table_num(struct table *t, double v, int decimals)
{
    struct cell *c = next_cell(t);
    c->type = CELL_NUM;
    c->s = xmalloc(64);
    snprintf(c->s, 64, "%.*f", decimals, v);
}

void table_counter(struct table *t, int counter, int64_t v, int human)
{
    if (!human || !counter_has_unit(counter)) {
        table_int(t, v);
        return;
    }
    struct cell *c = next_cell(t);
    c->type = CELL_NUM;
    c->s = xmalloc(32);
    fmt_human(counter, v, c->s, 32);
}

void table_double(struct table *t, double v)
{
    struct cell *c = next_cell(t);
    if (!isfinite(v)) { c->type = CELL_NULL; c->s = xstrdup(""); return; }
    c->type = CELL_NUM;
    c->s = xmalloc(64);
    snprintf(c->s, 64, "%.15g", v);
}

void table_null(struct table *t)
{
    struct cell *c = next_cell(t);
    c->type = CELL_NULL;
    c->s = xstrdup("");
}

void table_json(struct table *t, const char *json)
{
    struct cell *c = next_cell(t);
    c->type = CELL_JSON;
    c->s = xstrdup(json);
}

void table_free(struct table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols + t->cap; i++) free(t->cells[i].s);
    free(t->cells);
    free(t->cols);
    memset(t, 0, sizeof *t);
}

size_t table_columns_before(const struct table *tab, size_t col)
{
    size_t used = (size_t)tab->indent;
    for (size_t c = 0; c < col; c++) {
        size_t w = utf8_chars(tab->cols[c], strlen(tab->cols[c]));
        for (size_t r = 0; r < tab->nrows; r++) {
            const struct cell *x = &tab->cells[r * tab->ncols + c];
            size_t cw = x->type == CELL_NULL ? 1 : utf8_chars(x->s, strlen(x->s));
            if (cw > w) w = cw;
        }
        used += w + 2;
    }
    return used;
}

void text_line(FILE *f, const char *s, size_t n, size_t width)
{
    static struct strbuf clean;         /* mpquery has one thread */
    clean.len = 0;
    text_clean_sb(&clean, s, n);
    s = clean.s, n = clean.len;         /* valid UTF-8: a code point starts at each non-continuation byte */
    size_t cut = n;
    if (width) {
        size_t total = 0, w = 0;
        for (size_t i = 0; i < n; i++) total += ((unsigned char)s[i] & 0xc0) != 0x80;
        if (total > width)
            for (cut = 0; cut < n; cut++)
                if (((unsigned char)s[cut] & 0xc0) != 0x80 && w++ == width - 1) break;
    }
    fwrite(s, 1, cut, f);
    if (cut < n) fputs(ELLIPSIS, f);
    fputc('\n', f);
}

static void print_text(const struct table *t, FILE *f)
{
    size_t *w = xcalloc(t->ncols, sizeof *w);
    int *right = xcalloc(t->ncols, sizeof *right);
    struct strbuf line = { 0 };
    for (size_t c = 0; c < t->ncols; c++) w[c] = text_width(t->cols[c]);
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            const struct cell *x = &t->cells[r * t->ncols + c];
            size_t cw = x->type == CELL_NULL ? 1 : text_width(x->s);
            if (cw > w[c]) w[c] = cw;
            if (x->type == CELL_INT || x->type == CELL_NUM) right[c] = 1;
        }
    for (size_t r = 0; r <= t->nrows; r++) {
        line.len = 0;
        sb_printf(&line, "%*s", t->indent, "");
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = r == 0 ? t->cols[c] : t->cells[(r - 1) * t->ncols + c].s;
            if (r > 0 && t->cells[(r - 1) * t->ncols + c].type == CELL_NULL) s = "-";
            size_t pad = w[c] - text_width(s);
            int last = c + 1 == t->ncols;
            if (c) sb_puts(&line, "  ");
            if (right[c]) for (size_t i = 0; i < pad; i++) sb_putc(&line, ' ');
            sb_puts(&line, s);
            if (!right[c] && !last) for (size_t i = 0; i < pad; i++) sb_putc(&line, ' ');
        }
        while (line.len && line.s[line.len - 1] == ' ') line.len--;    /* empty last cells */
        text_line(f, line.s, line.len, t->width);
    }
    sb_free(&line);
    free(w);
    free(right);
}

static void print_csv(const struct table *t, FILE *f)
{
    for (size_t c = 0; c < t->ncols; c++) {
        if (c) fputc(',', f);
        csv_field(f, t->cols[c], strlen(t->cols[c]));
    }
    fputc('\n', f);
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const struct cell *x = &t->cells[r * t->ncols + c];
            if (c) fputc(',', f);
            csv_field(f, x->s, strlen(x->s));
        }
        fputc('\n', f);
    }
}

/* ---------------------------------------------------------------- JSON writer */
void json_init(struct json *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->f = f;
    w->brk = -1;
}

static void json_newline(struct json *w)
{
    if (w->brk < 0) return;
    fprintf(w->f, "\n%*s", w->brk, "");
    w->brk = -1;
}

/* Before an element: ", " between elements, or the pending line break;
 * nothing between a key and its value. */
static void json_element(struct json *w)
{
    if (w->after_key) { w->after_key = 0; return; }
    if (w->depth == 0) return;
    int first = w->first[w->depth];
    w->first[w->depth] = 0;
    if (!first) fputc(',', w->f);
    if (w->brk >= 0) json_newline(w);
    else if (!first) fputc(' ', w->f);
}

void json_break(struct json *w, int indent) { w->brk = indent; }

void json_open(struct json *w, char bracket)
{
    json_element(w);
    fputc(bracket, w->f);
    if (w->depth + 1 < (int)sizeof w->first) w->depth++;
    w->first[w->depth] = 1;
}

void json_close(struct json *w, char bracket)
{
    json_newline(w);
    fputc(bracket, w->f);
    if (w->depth > 0) w->depth--;
}

static void json_keyn(struct json *w, const char *key, size_t n)
{
    json_element(w);
    json_string(w->f, key, n);
    fputs(": ", w->f);
    w->after_key = 1;
}

void json_key(struct json *w, const char *key) { json_keyn(w, key, strlen(key)); }

void json_raw(struct json *w, const char *json)
{
    json_element(w);
    fputs(json, w->f);
}

void json_int(struct json *w, int64_t v)
{
    json_element(w);
    fprintf(w->f, "%lld", (long long)v);
}

void json_fixed(struct json *w, double v, int decimals)
{
    json_element(w);
    fprintf(w->f, "%.*f", decimals, v);
}

void json_strn(struct json *w, const char *s, size_t n)
{
    json_element(w);
    json_string(w->f, s, n);
}

void json_str(struct json *w, const char *s) { json_strn(w, s, strlen(s)); }

void json_null(struct json *w) { json_raw(w, "null"); }

/* Columns named "group.key" become nested objects {"group": {"key": ...}}. */
static void json_row(const struct table *t, const struct cell *row, struct json *w)
{
    const char *group = NULL;
    size_t glen = 0;
    json_open(w, '{');
    for (size_t c = 0; c < t->ncols; c++) {
        const char *name = t->cols[c], *dot = strchr(name, '.');
        size_t plen = dot ? (size_t)(dot - name) : 0;
        if (group && (!dot || plen != glen || strncmp(name, group, glen))) {
            json_close(w, '}');
            group = NULL;
        }
        if (dot && !group) {
            json_keyn(w, name, plen);
            json_open(w, '{');
            group = name;
            glen = plen;
        }
        json_key(w, dot ? dot + 1 : name);
        const struct cell *x = &row[c];
        if (x->type == CELL_NULL) json_null(w);
        else if (x->type == CELL_STR) json_str(w, x->s);
        else json_raw(w, x->s);
    }
    if (group) json_close(w, '}');
    json_close(w, '}');
}

void table_json_value(const struct table *t, struct json *w)
{
    json_open(w, '[');
    for (size_t r = 0; r < t->nrows; r++) {
        json_break(w, 1);
        json_row(t, &t->cells[r * t->ncols], w);
    }
    if (t->nrows) json_break(w, 0);
    json_close(w, ']');
}

void json_rows_last(struct json *w, const char *key, const struct table *t)
{
    json_key(w, key);
    table_json_value(t, w);
    json_close(w, '}');
    fputc('\n', w->f);
}

static void print_json(const struct table *t, FILE *f)
{
    struct json w;
    json_init(&w, f);
    table_json_value(t, &w);
    fputc('\n', f);
}

void table_print(const struct table *t, int format, FILE *f)
{
    if (format == FMT_CSV) print_csv(t, f);
    else if (format == FMT_JSON) print_json(t, f);
    else print_text(t, f);
}
