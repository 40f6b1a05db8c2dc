/* ClickHouse's TabSeparated format, both ways: a field read back with its
 * escapes undone, a string escaped (or quoted as a literal) as ClickHouse
 * reads it. Pure text functions: no connection, no allocation but field's. */
#include "http_internal.h"

int tsv_field(const char **cur, const char *end, struct strbuf *field)
{
    const char *p = *cur;
    field->len = 0;
    sb_add(field, "", 0);
    if (p >= end) return 0;
    for (;;) {
        const char *run = p;
        while (p < end && *p != '\t' && *p != '\n' && *p != '\\') p++;
        sb_add(field, run, (size_t)(p - run));
        if (p >= end) { *cur = p; return '\n'; }
        if (*p == '\t' || *p == '\n') { *cur = p + 1; return *p; }
        if (++p >= end) { sb_putc(field, '\\'); *cur = p; return '\n'; }
        char ch = *p++;
        switch (ch) {
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 't': ch = '\t'; break;
        case '0': ch = 0; break;
        case 'a': ch = '\a'; break;
        case 'v': ch = '\v'; break;
        case 'x':
            if (end - p >= 2 && ch_hexval(p[0]) >= 0 && ch_hexval(p[1]) >= 0) {
                ch = (char)(ch_hexval(p[0]) * 16 + ch_hexval(p[1]));
                p += 2;
            }
            break;
        default: break;     /* \\ \' \" \/ and anything else: the character itself */
        }
        sb_putc(field, ch);
    }
}

void tsv_escape(struct strbuf *sb, const char *s)
{
    for (;;) {
        const char *run = s;
        while (*s && *s != '\\' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\'') s++;
        sb_add(sb, run, (size_t)(s - run));
        switch (*s) {
        case 0: return;
        case '\\': sb_add(sb, "\\\\", 2); break;
        case '\t': sb_add(sb, "\\t", 2); break;
        case '\n': sb_add(sb, "\\n", 2); break;
        case '\r': sb_add(sb, "\\r", 2); break;
        case '\'': sb_add(sb, "\\'", 2); break;
        }
        s++;
    }
}

void ch_quote(struct strbuf *sb, const char *s)
{
    sb_putc(sb, '\'');
    tsv_escape(sb, s);
    sb_putc(sb, '\'');
}
