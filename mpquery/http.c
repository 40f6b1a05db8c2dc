/* ClickHouse's HTTP interface over a plain socket: a request is one POST
 * (GET for /ping) with Content-Length, written while watching for an early
 * answer; a response is read whole, with Content-Length, chunked, or up to
 * the close. One connection is kept alive between requests; a request on
 * a reused connection that got no byte of answer (the server closed it
 * while idle) is sent once more on a new one, never otherwise, so an
 * INSERT is never sent twice to a server that may have run it. Every wait
 * ends at the request's deadline (MPQ_CH_TIMEOUT after it began), every
 * answer's body at MPQ_CH_ANSWER_MAX bytes; EINTR and partial writes are
 * resumed; SIGPIPE never fires (MSG_NOSIGNAL). Errors are one line naming
 * the URL. The answer is read by http_read.c, the URL parsed by http_url.c,
 * both below this file, as http_conn.c (the waits, the error line) is. */
#include "http_internal.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* Connects to one address; 0, or errno (ETIMEDOUT when it took too long). */
static int connect_addr(const struct ch *c, const struct addrinfo *a, int *out)
{
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) return errno;
    int e = 0;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
        e = errno;
        if (e == EINPROGRESS || e == EINTR) {
            short got = 0;
            int n = ch_wait_fd(fd, POLLOUT, ch_left_ms(c), &got);
            socklen_t len = sizeof e;
            if (n == 0) e = ETIMEDOUT;
            else if (n < 0) e = errno;
            else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0) e = errno;
        }
    }
    if (e) { close(fd); return e; }
    int one = 1;    /* a request is written at once: no delay for the last segment */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    *out = fd;
    return 0;
}

static int ch_connect(struct ch *c, char *err, size_t errlen)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *list = NULL;
    int rc = getaddrinfo(c->host, c->port, &hints, &list);
    if (rc)
        return ch_fail(c, EXIT_FAILED, err, errlen, "cannot resolve %s: %s", c->host,
                       rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
    int e = ECONNREFUSED;
    for (const struct addrinfo *a = list; a; a = a->ai_next)
        if (!(e = connect_addr(c, a, &c->fd))) break;
    freeaddrinfo(list);
    if (!e) return 0;
    char t[32];
    if (e == ETIMEDOUT)
        return ch_fail(c, EXIT_FAILED, err, errlen, "cannot connect to %s port %s: no answer in %s", c->host,
                       c->port, ch_secs(c->timeout_ms, t, sizeof t));
    return ch_fail(c, EXIT_FAILED, err, errlen, "cannot connect to %s port %s: %s", c->host, c->port, strerror(e));
}

/* ---------------------------------------------------------------- sending */
/* Writes the request; stops early (returns 0 with *answered) when the
 * server answers or closes before it has read all of it. 0, or an errno
 * (ETIMEDOUT) when the connection failed. */
static int send_request(struct ch *c, struct iovec *iov, int niov, int *answered)
{
    *answered = 0;
    while (niov > 0) {
        if (iov->iov_len == 0) { iov++; niov--; continue; }
        short got = 0;
        int n = ch_wait_fd(c->fd, POLLOUT | POLLIN, ch_left_ms(c), &got);
        if (n == 0) return ETIMEDOUT;
        if (n < 0) return errno;
        if (got & (POLLIN | POLLHUP)) { *answered = 1; return 0; }
        if (got & POLLERR && !(got & POLLOUT)) {
            int e = 0;
            socklen_t len = sizeof e;
            getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &len);
            return e ? e : EPIPE;
        }
        struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)niov };
        ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            /* the server may have answered and closed: its answer says why */
            if (errno == EPIPE || errno == ECONNRESET) { *answered = 1; return 0; }
            return errno;
        }
        for (size_t left = (size_t)w; left > 0 && niov > 0;) {
            size_t k = left < iov->iov_len ? left : iov->iov_len;
            iov->iov_base = (char *)iov->iov_base + k;
            iov->iov_len -= k;
            left -= k;
            if (iov->iov_len == 0) { iov++; niov--; }
        }
    }
    return 0;
}

static int exchange(struct ch *c, const struct strbuf *head, const char *body, size_t len, int idempotent,
                    struct strbuf *out, int *retry, char *err, size_t errlen)
{
    int reused = c->fd >= 0, rc;
    *retry = 0;
    /* closed while idle (or junk): a fresh one; and always for a request
     * that must not be sent twice (an INSERT), which a kept-alive
     * connection the server closes as it arrives would leave in doubt */
    if (reused && (!idempotent || ch_wait_fd(c->fd, POLLIN, 0, NULL) != 0)) {
        ch_close(c);
        reused = 0;
    }
    if (!reused && (rc = ch_connect(c, err, errlen))) return rc;
    struct iovec iov[2] = { { head->s, head->len }, { (void *)body, len } };
    int answered, e = send_request(c, iov, body ? 2 : 1, &answered);
    if (!e) return ch_read_answer(c, reused, answered, out, retry, err, errlen);
    *retry = reused && e != ETIMEDOUT;
    ch_close(c);
    char t[32];
    if (e == ETIMEDOUT)
        return ch_fail(c, EXIT_FAILED, err, errlen, "sending the request: not done in %s (MPQ_CH_TIMEOUT: the most a "
                       "request takes)", ch_secs(c->timeout_ms, t, sizeof t));
    return ch_fail(c, EXIT_FAILED, err, errlen, "sending the request: %s", strerror(e));
}

static void url_encode(struct strbuf *sb, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.' || *p == '~') {
            sb_putc(sb, (char)*p);
        } else {
            char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };
            sb_add(sb, e, 3);
        }
    }
}

/* One request: METHOD base-path+what?[params&]extra (the URL's params
 * with statements, not with /ping), with the body (NULL: none); the
 * answer's body appended to out. */
static int request(struct ch *c, const char *method, const char *what, int params, const char *extra,
                   const char *body, size_t len, int idempotent, struct strbuf *out, char *err, size_t errlen)
{
    struct strbuf head = { 0 };
    sb_printf(&head, "%s %s%s", method, c->path, what);
    const char *sep = "?";
    if (params && c->params[0]) { sb_printf(&head, "?%s", c->params); sep = "&"; }
    if (extra && *extra) sb_printf(&head, "%s%s", sep, extra);
    sb_printf(&head, " HTTP/1.1\r\nHost: %s%s%s:%s\r\n", strchr(c->host, ':') ? "[" : "", c->host,
              strchr(c->host, ':') ? "]" : "", c->port);
    if (c->user[0] || c->password[0]) {
        sb_printf(&head, "X-ClickHouse-User: %s\r\n", c->user[0] ? c->user : "default");
        sb_printf(&head, "X-ClickHouse-Key: %s\r\n", c->password);
    }
    if (body) sb_printf(&head, "Content-Length: %zu\r\n", len);
    sb_puts(&head, "Connection: keep-alive\r\n\r\n");
    size_t start = out->len;
    sb_add(out, "", 0);         /* NUL-terminated even when nothing comes */
    c->status = c->exception_code = 0;
    c->deadline = monotonic_seconds() + c->timeout_ms / 1000.0;     /* the retry included */
    int retry, rc = exchange(c, &head, body, len, idempotent, out, &retry, err, errlen);
    if (rc && retry && idempotent) {
        out->len = start;
        out->s[start] = 0;
        rc = exchange(c, &head, body, len, idempotent, out, &retry, err, errlen);
    }
    if (rc) {
        out->len = start;
        out->s[start] = 0;
    }
    sb_free(&head);
    return rc;
}

int ch_query(struct ch *c, const char *sql, int readonly, struct strbuf *out, char *err, size_t errlen)
{
    return request(c, "POST", "", 1, readonly ? "wait_end_of_query=1&readonly=1" : "wait_end_of_query=1",
                   sql, strlen(sql), 1, out, err, errlen);
}

int ch_insert(struct ch *c, const char *statement, const char *data, size_t len, char *err, size_t errlen)
{
    struct strbuf extra = { 0 }, out = { 0 };
    sb_puts(&extra, "query=");
    url_encode(&extra, statement);
    /* never sent twice: a proxy may have passed it on before it failed */
    int rc = request(c, "POST", "", 1, extra.s, data, len, 0, &out, err, errlen);
    sb_free(&extra);
    sb_free(&out);
    return rc;
}

int ch_open(struct ch *c, const char *url, char *err, size_t errlen)
{
    int rc = ch_settings(c, url, err, errlen);
    if (rc) return rc;
    struct strbuf out = { 0 };
    c->answer_max = 4096;       /* "Ok.\n": anything longer is not ClickHouse */
    rc = request(c, "GET", "ping", 0, NULL, NULL, 0, 1, &out, err, errlen);
    c->answer_max = 0;
    if (!rc && strcmp(out.s, "Ok.\n")) {
        char msg[128];
        ch_server_text(c, out.s, out.len < 100 ? out.len : 100, msg, sizeof msg);
        rc = ch_fail(c, EXIT_FAILED, err, errlen, "not a ClickHouse server (GET %sping answered '%s', not 'Ok.')",
                        c->path, msg);
    } else if (rc && c->status) {
        /* an answer, but not ClickHouse's: say what it was */
        char why[512];
        snprintf(why, sizeof why, "%s", strchr(err, ' ') ? strchr(err, ' ') + 1 : err);
        rc = ch_fail(c, EXIT_FAILED, err, errlen, "not a ClickHouse server (GET %sping: %s)", c->path, why);
    }
    sb_free(&out);
    return rc;
}

