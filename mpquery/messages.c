/* mpquery's messages on stderr, "mpquery: ..." and "mpquery: warning:
 * ...", one line each: the text cleaned by escape.c (text_vprintf), so no
 * control character of a name gets through. Above util.c and escape.c,
 * which call neither. */
#include "escape.h"
#include "mpquery.h"

#include <stdarg.h>
#include <stdio.h>

int error(int code, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("mpquery: ", stderr);
    va_start(ap, fmt);
    text_vprintf(stderr, fmt, ap);      /* one line: no control character of a name gets through */
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

void warning(const char *fmt, ...)
{
    va_list ap;
    fputs("mpquery: warning: ", stderr);
    va_start(ap, fmt);
    text_vprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
