/* The one escaper per context (escape.c): terminal text, JSON, CSV,
 * XML; and what output.c's tables use beyond the escapers themselves. */
#ifndef MPQUERY_ESCAPE_H
#define MPQUERY_ESCAPE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

struct strbuf;

/* Display width of s: the code points text_clean writes, not bytes. */
size_t text_width(const char *s);
void json_string(FILE *f, const char *s, size_t n);
/* Length of the valid UTF-8 sequence at s (n bytes left), or 0. */
size_t utf8_seq_len(const char *s, size_t n);
void json_string_sb(struct strbuf *sb, const char *s, size_t n);
/* Text output (a terminal's): control characters (C0, DEL and C1) shown
 * as spaces, invalid UTF-8 as U+FFFD; to f, or appended to sb. */
void text_clean(FILE *f, const char *s, size_t n);
void text_clean_sb(struct strbuf *sb, const char *s, size_t n);
/* printf to f, the whole text cleaned as text_clean does (error messages:
 * one line, whatever the strings in them). */
void text_vprintf(FILE *f, const char *fmt, va_list ap);
void text_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as XML (SVG, HTML) text or double-quoted attribute value: markup
 * escaped, control characters (C0, DEL, C1) as spaces, invalid UTF-8, U+FFFE and U+FFFF
 * as U+FFFD; at most max_chars characters (>= 3; longer text is cut and
 * ends with ".."), appended to sb. The one escaper of every SVG and HTML
 * mpquery writes. */
void xml_escape(struct strbuf *sb, const char *s, size_t n, size_t max_chars);
/* All of s, escaped so, to f. */
void xml_write(FILE *f, const char *s);
/* Characters of s: UTF-8 sequences, an invalid byte counting one. */
size_t utf8_chars(const char *s, size_t n);
void csv_field(FILE *f, const char *s, size_t n);

#endif
