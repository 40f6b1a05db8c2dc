/* The bottom of the HTTP files (http_internal.h): the error line naming
 * the URL, closing the connection, a wait on its socket and what is left
 * of the request's deadline. http.c (requests), http_read.c (answers) and
 * http_url.c (the URL) call these; these call none of them. */
#include "http_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((format(printf, 5, 6)))
int ch_fail(const struct ch *c, int code, char *err, size_t errlen, const char *fmt, ...)
{
    int n = snprintf(err, errlen, "%s: ", c->url);
    if (n < 0 || (size_t)n >= errlen) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

void ch_close(struct ch *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

/* Waits until fd is ready for events; 1 ready (revents in *got), 0 timed
 * out, -1 error (errno). */
int ch_wait_fd(int fd, short events, int timeout_ms, short *got)
{
    struct pollfd p = { .fd = fd, .events = events };
    int n;
    while ((n = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {}
    if (n > 0 && got) *got = p.revents;
    return n;
}

/* What is left of the request's time, in ms (0: none; rounded up, so
 * that a wait ends after the deadline, never before). */
int ch_left_ms(const struct ch *c)
{
    double left = (c->deadline - monotonic_seconds()) * 1000;
    return left <= 0 ? 0 : left >= INT32_MAX ? INT32_MAX : (int)left + 1;
}

const char *ch_secs(int ms, char *buf, size_t n)
{
    snprintf(buf, n, ms % 1000 ? "%.1f s" : "%.0f s", ms / 1000.0);
    return buf;
}
