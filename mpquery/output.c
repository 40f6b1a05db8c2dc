/* Text, CSV and JSON writers, and the escaping of every text mpquery
 * writes. A command fills a `struct table` (cells typed as string,
 * integer, number, null or raw JSON) and prints it in the chosen format;
 * other JSON (info, show's header) goes through struct json, which owns
 * separators, nesting and escaping. One escaper per context, for every
 * string that comes from a profile (or a user):
 *   text (a terminal): text_clean: control characters (C0, DEL, C1) as
 *     spaces, invalid UTF-8 as U+FFFD, so no escape sequence reaches the
 *     terminal and one row is one line, cut to the table's width (a
 *     terminal's) with an ellipsis; error messages go through it too;
 *   JSON: json_string: control characters as \u00XX, invalid UTF-8 as
 *     U+FFFD (always valid JSON);
 *   CSV: csv_field (RFC 4180);
 *   XML, SVG and HTML text and attribute values (double-quoted):
 *     xml_escape: markup escaped, control characters as spaces, what XML
 *     forbids as U+FFFD. mpquery's HTML has no JSON or other data inside
 *     its one <script> (nothing from a profile goes there: the script reads
 *     the escaped elements and attributes). */
#include "mpquery.h"
#include "output.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6"     /* …: where text_line cut a line */

int format_parse(const char *s)
{
    if (!strcmp(s, "text")) return FMT_TEXT;
    if (!strcmp(s, "csv")) return FMT_CSV;
    if (!strcmp(s, "json")) return FMT_JSON;
    return -1;
}

/* ---------------------------------------------------------------- escaping */
/* Length of a valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) len = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) len = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) len = 4, min = 0x10000;
    else return 0;
    if (n < len) return 0;
    unsigned cp = c & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

size_t utf8_seq_len(const char *s, size_t n) { return n ? utf8_len((const unsigned char *)s, n) : 0; }

void json_string_sb(struct strbuf *sb, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    sb_putc(sb, '"');
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c == '"' || c == '\\') { sb_putc(sb, '\\'); sb_putc(sb, (char)c); i++; continue; }
        if (c < 0x20) { sb_printf(sb, "\\u%04x", c); i++; continue; }
        size_t len = utf8_len(s + i, n - i);
        if (!len) { sb_puts(sb, "\\ufffd"); i++; continue; }
        sb_add(sb, str + i, len);
        i += len;
    }
    sb_putc(sb, '"');
}

void json_string(FILE *f, const char *s, size_t n)
{
    struct strbuf sb = { 0 };
    json_string_sb(&sb, s, n);
    fwrite(sb.s, 1, sb.len, f);
    sb_free(&sb);
}

/* ---------------------------------------------------------------- text */
#define REPLACEMENT "\xef\xbf\xbd"   /* U+FFFD */

/* The clean characters at s (n bytes): the length of the span that is
 * written as it is; then, when a character that is not follows (span <
 * n), *bad is its length and *repl what stands for it (a space or
 * U+FFFD). */
static size_t text_span(const char *str, size_t n, size_t *bad, const char **repl)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c >= 0x20 && c < 0x7f) { i++; continue; }
        size_t len = utf8_len(s + i, n - i);
        if (!len) { *bad = 1, *repl = REPLACEMENT; return i; }
        if (len == 1 || (c == 0xc2 && s[i + 1] < 0xa0)) { *bad = len, *repl = " "; return i; }  /* C0, DEL, C1 */
        i += len;
    }
    return i;
}

void text_clean(FILE *f, const char *s, size_t n)
{
    while (n) {
        size_t bad = 0;
        const char *repl = NULL;
        size_t span = text_span(s, n, &bad, &repl);
        fwrite(s, 1, span, f);
        if (span == n) break;
        fputs(repl, f);
        s += span + bad, n -= span + bad;
    }
}

void text_clean_sb(struct strbuf *sb, const char *s, size_t n)
{
    sb_add(sb, "", 0);
    while (n) {
        size_t bad = 0;
        const char *repl = NULL;
        size_t span = text_span(s, n, &bad, &repl);
        sb_add(sb, s, span);
        if (span == n) break;
        sb_puts(sb, repl);
        s += span + bad, n -= span + bad;
    }
}

void text_vprintf(FILE *f, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n <= 0) return;
    char *buf = xmalloc((size_t)n + 1);
    vsnprintf(buf, (size_t)n + 1, fmt, ap);
    text_clean(f, buf, (size_t)n);
    free(buf);
}

void text_printf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    text_vprintf(f, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------- XML */
/* One character (len bytes, or an invalid byte: len 1, >= 0x80) as XML
 * character data: markup escaped, control characters (C0, DEL, C1) as
 * spaces (a name never breaks a tooltip's lines), what XML 1.0 forbids
 * (invalid UTF-8, U+FFFE, U+FFFF) as U+FFFD. */
static void xml_char(struct strbuf *sb, const char *s, size_t len)
{
    unsigned char c = (unsigned char)s[0];
    if (len == 1 && c >= 0x80) sb_puts(sb, REPLACEMENT);
    else if (c < 0x20 || c == 0x7f || (c == 0xc2 && (unsigned char)s[1] < 0xa0)) sb_putc(sb, ' ');  /* C0, DEL, C1 */
    else if (c == '&') sb_puts(sb, "&amp;");
    else if (c == '<') sb_puts(sb, "&lt;");
    else if (c == '>') sb_puts(sb, "&gt;");
    else if (c == '"') sb_puts(sb, "&quot;");
    else if (len == 3 && !memcmp(s, "\xef\xbf", 2) && (unsigned char)s[2] >= 0xbe) sb_puts(sb, REPLACEMENT);
    else sb_add(sb, s, len);
}

/* Bytes of the character at s (n > 0 left): a UTF-8 sequence, or 1 for an
 * invalid byte. */
static size_t char_len(const char *s, size_t n)
{
    size_t len = utf8_len((const unsigned char *)s, n);
    return len ? len : 1;
}

size_t utf8_chars(const char *s, size_t n)
{
    size_t chars = 0;
    for (size_t i = 0; i < n; i += char_len(s + i, n - i)) chars++;
    return chars;
}

void xml_escape(struct strbuf *sb, const char *s, size_t n, size_t max_chars)
{
    size_t keep = n;
    sb_add(sb, "", 0);
    if (utf8_chars(s, n) > max_chars) {
        keep = 0;
        for (size_t k = 0; k < max_chars - 2; k++) keep += char_len(s + keep, n - keep);
    }
    for (size_t i = 0; i < keep; i += char_len(s + i, keep - i)) xml_char(sb, s + i, char_len(s + i, keep - i));
    if (keep < n) sb_puts(sb, "..");
}

void xml_write(FILE *f, const char *s)
{
    struct strbuf sb = { 0 };
    xml_escape(&sb, s, strlen(s), SIZE_MAX);
    fwrite(sb.s, 1, sb.len, f);
    sb_free(&sb);
}

void csv_field(FILE *f, const char *s, size_t n)
{
    if (!memchr(s, ',', n) && !memchr(s, '"', n) && !memchr(s, '\n', n) && !memchr(s, '\r', n)) {
        fwrite(s, 1, n, f);
        return;
    }
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') fputc('"', f);
        fputc(s[i], f);
    }
    fputc('"', f);
}

/* Display width: the code points text_clean writes, not bytes. */
static size_t text_width(const char *s)
{
    size_t n = strlen(s), w = 0;
    while (n) {
        size_t bad = 0;
        const char *repl = NULL;
        size_t span = text_span(s, n, &bad, &repl);
        for (size_t i = 0; i < span; i++) w += ((unsigned char)s[i] & 0xc0) != 0x80;
        if (span == n) break;
        w++;
        s += span + bad, n -= span + bad;
    }
    return w;
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
