/* The escaping of every text mpquery writes, one escaper per context, for
 * every string that comes from a profile (or a user):
 *   text (a terminal): text_clean: control characters (C0, DEL, C1) as
 *     spaces, invalid UTF-8 as U+FFFD, so no escape sequence reaches the
 *     terminal; error messages go through it too;
 *   JSON: json_string: control characters as \u00XX, invalid UTF-8 as
 *     U+FFFD (always valid JSON);
 *   CSV: csv_field (RFC 4180);
 *   XML, SVG and HTML text and attribute values (double-quoted):
 *     xml_escape: markup escaped, control characters as spaces, what XML
 *     forbids as U+FFFD.
 * Every function writes valid UTF-8 whatever its input. */
#include "mpquery.h"
#include "escape.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
size_t text_width(const char *s)
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
