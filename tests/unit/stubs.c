/* What the unit tests link instead of prof/base/options.c: mp_opt all zero (no
 * MP_MAX_MEMORY cap for arena.c), an mp_log that writes nothing but counts
 * its calls and keeps the last line, for the tests to check, and the
 * MP_DEBUG build's mp_assert_failed (says which invariant broke, aborts). */
#include "unit.h"

#include <stdarg.h>
#include <stdlib.h>

struct mp_options mp_opt;
int unit_log_count;
char unit_log_last[1024];

void mp_log(const char *level, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(unit_log_last, sizeof unit_log_last, "%s: ", level);
    va_start(ap, fmt);
    vsnprintf(unit_log_last + n, sizeof unit_log_last - n, fmt, ap);
    va_end(ap);
    unit_log_count++;
}

void mp_assert_failed(const char *what, const char *file, int line)
{
    fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, what);
    abort();
}
