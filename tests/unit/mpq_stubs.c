/* What mpquery's unit tests link instead of escape.c: text_vprintf
 * (messages.c's error and warning write through it) as plain vfprintf, so
 * that a test links only the mpquery files it tests (util.c, units.c). */
#include "mpquery.h"

void text_vprintf(FILE *f, const char *fmt, va_list ap)
{
    vfprintf(f, fmt, ap);
}
