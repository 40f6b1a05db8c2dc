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
 * the URL. */
#include "http.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

enum { DEFAULT_TIMEOUT_MS = 30000, HEADER_MAX = 65536, ERROR_BODY_MAX = 1 << 20 };
/* The largest answer by default: 5 times what a store of 1 M distinct
 * stacks 20 frames deep answers (427 MB: tests/mpquery_fixtures/big.sql
 * pushed, then top --server). */
#define DEFAULT_ANSWER_MAX ((uint64_t)2 << 30)

__attribute__((format(printf, 5, 6)))
static int fail(const struct ch *c, int code, char *err, size_t errlen, const char *fmt, ...)
{
    int n = snprintf(err, errlen, "%s: ", c->url);
    if (n < 0 || (size_t)n >= errlen) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

/* ---------------------------------------------------------------- the URL */
static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* s[0..n) percent-decoded into out (size outlen); -1 when too long or bad. */
static int pct_decode(const char *s, size_t n, char *out, size_t outlen)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int ch = (unsigned char)s[i];
        if (ch == '%') {
            if (i + 2 >= n) return -1;
            int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0) return -1;
            ch = hi * 16 + lo;
            i += 2;
        }
        if (o + 1 >= outlen) return -1;
        out[o++] = (char)ch;
    }
    out[o] = 0;
    return 0;
}

/* Copies s[0..n) into out (size outlen); -1 when it does not fit. */
static int copy_part(const char *s, size_t n, char *out, size_t outlen)
{
    if (n >= outlen) return -1;
    memcpy(out, s, n);
    out[n] = 0;
    return 0;
}

/* http://[USER[:PASSWORD]@]HOST[:PORT][/PATH][?PARAMS][#...] */
static int parse_url(struct ch *c, const char *url, char *err, size_t errlen)
{
    for (const char *s = url; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == 0x7f)
            return fail(c, EXIT_BAD_INPUT, err, errlen, "a URL has no spaces or control characters");
    if (!strncasecmp(url, "https://", 8))
        return fail(c, EXIT_BAD_INPUT, err, errlen, "https is not supported; use http:// (ClickHouse's HTTP "
                    "port, 8123 by default; a TLS tunnel such as stunnel or ssh -L for a remote server)");
    if (strncasecmp(url, "http://", 7))
        return fail(c, EXIT_BAD_INPUT, err, errlen, "not an http:// URL (http://[USER[:PASSWORD]@]HOST[:PORT]/"
                    "[?database=DB])");
    const char *auth = url + 7, *end = auth + strcspn(auth, "/?#");
    const char *at = NULL;
    for (const char *s = auth; s < end; s++)
        if (*s == '@') at = s;
    if (at) {
        const char *colon = memchr(auth, ':', (size_t)(at - auth));
        const char *uend = colon ? colon : at;
        if (pct_decode(auth, (size_t)(uend - auth), c->user, sizeof c->user) ||
            (colon && pct_decode(colon + 1, (size_t)(at - colon - 1), c->password, sizeof c->password)))
            return fail(c, EXIT_BAD_INPUT, err, errlen, "bad user or password (too long, or a bad %%XX)");
        auth = at + 1;
    }
    const char *hend, *port = NULL;
    if (*auth == '[') {
        const char *close = memchr(auth, ']', (size_t)(end - auth));
        if (!close) return fail(c, EXIT_BAD_INPUT, err, errlen, "unclosed '[' in the host");
        if (copy_part(auth + 1, (size_t)(close - auth - 1), c->host, sizeof c->host))
            return fail(c, EXIT_BAD_INPUT, err, errlen, "host name too long");
        hend = close + 1;
        if (hend < end && *hend != ':') return fail(c, EXIT_BAD_INPUT, err, errlen, "junk after ']' in the host");
    } else {
        hend = memchr(auth, ':', (size_t)(end - auth));
        if (!hend) hend = end;
        if (copy_part(auth, (size_t)(hend - auth), c->host, sizeof c->host))
            return fail(c, EXIT_BAD_INPUT, err, errlen, "host name too long");
    }
    if (!c->host[0]) return fail(c, EXIT_BAD_INPUT, err, errlen, "no host");
    if (hend < end && *hend == ':') port = hend + 1;
    if (port && port < end) {
        long v = 0;
        for (const char *s = port; s < end; s++) {
            if (*s < '0' || *s > '9' || v > 65535) return fail(c, EXIT_BAD_INPUT, err, errlen, "bad port");
            v = v * 10 + (*s - '0');
        }
        if (v < 1 || v > 65535) return fail(c, EXIT_BAD_INPUT, err, errlen, "bad port");
        snprintf(c->port, sizeof c->port, "%ld", v);
    } else {
        strcpy(c->port, "8123");
    }
    const char *path = end, *pend = path + strcspn(path, "?#");
    if (path == pend) {
        strcpy(c->path, "/");
    } else {
        int slash = pend[-1] != '/';    /* /ping is appended to the base path */
        if ((size_t)(pend - path) + (size_t)slash >= sizeof c->path)
            return fail(c, EXIT_BAD_INPUT, err, errlen, "path too long");
        memcpy(c->path, path, (size_t)(pend - path));
        strcpy(c->path + (pend - path), slash ? "/" : "");
    }
    if (*pend == '?') {
        const char *q = pend + 1;
        if (copy_part(q, strcspn(q, "#"), c->params, sizeof c->params))
            return fail(c, EXIT_BAD_INPUT, err, errlen, "query string too long");
    }
    return 0;
}

/* c->url for messages: the URL as given, or with its password as ***
 * (in c->shown_url) */
static void set_shown_url(struct ch *c, const char *url)
{
    c->url = url;
    if (strncasecmp(url, "http://", 7)) return;
    const char *auth = url + 7, *end = auth + strcspn(auth, "/?#"), *at = NULL, *colon;
    for (const char *s = auth; s < end; s++)
        if (*s == '@') at = s;
    if (!at || !(colon = memchr(auth, ':', (size_t)(at - auth)))) return;
    snprintf(c->shown_url, sizeof c->shown_url, "%.*s:***%s", (int)(colon - url), url, at);
    c->url = c->shown_url;
}

/* ---------------------------------------------------------------- the connection */
void ch_close(struct ch *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

/* Waits until fd is ready for events; 1 ready (revents in *got), 0 timed
 * out, -1 error (errno). */
static int wait_fd(int fd, short events, int timeout_ms, short *got)
{
    struct pollfd p = { .fd = fd, .events = events };
    int n;
    while ((n = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {}
    if (n > 0 && got) *got = p.revents;
    return n;
}

/* What is left of the request's time, in ms (0: none; rounded up, so
 * that a wait ends after the deadline, never before). */
static int left_ms(const struct ch *c)
{
    double left = (c->deadline - monotonic_seconds()) * 1000;
    return left <= 0 ? 0 : left >= INT32_MAX ? INT32_MAX : (int)left + 1;
}

static const char *secs(int ms, char *buf, size_t n)
{
    snprintf(buf, n, ms % 1000 ? "%.1f s" : "%.0f s", ms / 1000.0);
    return buf;
}

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
            int n = wait_fd(fd, POLLOUT, left_ms(c), &got);
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
        return fail(c, EXIT_FAILED, err, errlen, "cannot resolve %s: %s", c->host,
                    rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
    int e = ECONNREFUSED;
    for (const struct addrinfo *a = list; a; a = a->ai_next)
        if (!(e = connect_addr(c, a, &c->fd))) break;
    freeaddrinfo(list);
    if (!e) return 0;
    char t[32];
    if (e == ETIMEDOUT)
        return fail(c, EXIT_FAILED, err, errlen, "cannot connect to %s port %s: no answer in %s", c->host,
                    c->port, secs(c->timeout_ms, t, sizeof t));
    return fail(c, EXIT_FAILED, err, errlen, "cannot connect to %s port %s: %s", c->host, c->port, strerror(e));
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
        int n = wait_fd(c->fd, POLLOUT | POLLIN, left_ms(c), &got);
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

/* ---------------------------------------------------------------- receiving */
struct reader {
    struct ch *c;
    char buf[65536];
    size_t pos, len;
    uint64_t total;             /* bytes received */
    uint64_t body;              /* of the answer's body (chunked: its data) */
    int error;                  /* errno of the failure (ETIMEDOUT, EFBIG: body over
                                   answer_limit), 0: EOF */
};

/* More bytes into the buffer (what was not consumed moves to its start);
 * returns how many, 0 at EOF or on error (r->error). */
static size_t fill(struct reader *r)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->len == sizeof r->buf) return 0;
    for (;;) {
        /* here too, not only in the waits: an answer that keeps coming
         * never makes recv wait */
        if (!left_ms(r->c)) { r->error = ETIMEDOUT; return 0; }
        ssize_t n = recv(r->c->fd, r->buf + r->len, sizeof r->buf - r->len, 0);
        if (n > 0) {
            r->len += (size_t)n;
            r->total += (uint64_t)n;
            return (size_t)n;
        }
        if (n == 0) return 0;
        if (errno == EINTR) continue;
        if (errno != EAGAIN) { r->error = errno; return 0; }
        int w = wait_fd(r->c->fd, POLLIN, left_ms(r->c), NULL);
        if (w == 0) { r->error = ETIMEDOUT; return 0; }
        if (w < 0) { r->error = errno; return 0; }
    }
}

/* The next line without its CRLF (NUL-terminated in the buffer); NULL at
 * EOF, on error or when longer than the buffer. */
static char *read_line(struct reader *r)
{
    for (;;) {
        char *nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
        if (nl) {
            char *line = r->buf + r->pos;
            r->pos = (size_t)(nl - r->buf) + 1;
            *nl = 0;
            if (nl > line && nl[-1] == '\r') nl[-1] = 0;
            return line;
        }
        if (!fill(r)) return NULL;
    }
}

/* n bytes (n < 0: up to EOF) appended to out, at most `keep` of them kept
 * (the rest read and dropped); 0, or -1 when the connection ended early or
 * the body grew beyond the answer limit (r->error EFBIG). */
static int read_body(struct reader *r, int64_t n, struct strbuf *out, size_t keep)
{
    for (;;) {
        size_t have = r->len - r->pos;
        if (n >= 0 && (uint64_t)n < have) have = (size_t)n;
        if (have > r->c->answer_limit - r->body) {
            r->error = EFBIG;
            return -1;
        }
        r->body += have;
        size_t k = out->len < keep ? keep - out->len : 0;
        sb_add(out, r->buf + r->pos, have < k ? have : k);
        r->pos += have;
        if (n >= 0 && (n -= (int64_t)have) == 0) return 0;
        if (!fill(r)) return n < 0 && !r->error ? 0 : -1;
    }
}

struct response {
    int status, chunked, close;
    int64_t length;             /* -1: not given */
};

/* Status line and headers, skipping 1xx answers; 0, or -1 (malformed,
 * or the connection ended: r->total tells whether anything came). */
static int read_head(struct reader *r, struct response *h)
{
    for (int informational = 0; informational < 8; informational++) {
        const char *line = read_line(r);
        int minor;
        *h = (struct response){ .length = -1 };
        if (!line || sscanf(line, "HTTP/1.%d %d", &minor, &h->status) != 2 || h->status < 100) return -1;
        h->close = minor == 0;
        r->c->exception_code = 0;
        size_t bytes = 0;
        while ((line = read_line(r)) && *line) {
            if ((bytes += strlen(line)) > HEADER_MAX) return -1;
            const char *v = strchr(line, ':');
            if (!v) continue;
            size_t name = (size_t)(v - line);
            for (v++; *v == ' ' || *v == '\t'; v++) {}
            if (name == 14 && !strncasecmp(line, "content-length", 14)) {
                char *end;
                h->length = strtoll(v, &end, 10);
                if (end == v || h->length < 0) return -1;
            } else if (name == 17 && !strncasecmp(line, "transfer-encoding", 17)) {
                h->chunked = strcasestr(v, "chunked") != NULL;
            } else if (name == 10 && !strncasecmp(line, "connection", 10)) {
                if (strcasestr(v, "close")) h->close = 1;
                else if (strcasestr(v, "keep-alive")) h->close = 0;
            } else if (name == 27 && !strncasecmp(line, "x-clickhouse-exception-code", 27)) {
                r->c->exception_code = atoi(v);
            }
        }
        if (!line) return -1;
        if (h->status >= 200) return 0;
    }
    return -1;      /* 1xx answers without end: not a server to wait for */
}

/* A chunked body into out (at most keep bytes kept); 0 or -1. */
static int read_chunked(struct reader *r, struct strbuf *out, size_t keep)
{
    for (;;) {
        const char *line = read_line(r);
        char *end;
        if (!line) return -1;
        errno = 0;
        unsigned long long n = strtoull(line, &end, 16);
        if (end == line || errno || n > INT64_MAX) return -1;
        if (n == 0) break;
        if (read_body(r, (int64_t)n, out, keep) || !(line = read_line(r)) || *line) return -1;
    }
    const char *line;
    while ((line = read_line(r)) && *line) {}       /* trailers */
    return line ? 0 : -1;
}

/* ---------------------------------------------------------------- server errors */
/* The server's error text as one line: "Code: N, e.displayText() =
 * DB::Exception: why, e.what() = DB::Exception" (18.16) or "Code: N.
 * DB::Exception: why (NAME) (version V)" (current) becomes "why (NAME)
 * (version V)" and N, if not in the header, goes to c->exception_code;
 * control characters become spaces, runs of them one, and it is cut at
 * 300 bytes. */
static void server_text(struct ch *c, const char *body, size_t n, char *out, size_t outlen)
{
    struct strbuf s = { 0 };
    sb_add(&s, body, n);
    char *t = s.s;
    int code;
    if (sscanf(t, "Code: %d", &code) == 1) {
        if (!c->exception_code) c->exception_code = code;
        t += strspn(t + 5, " 0123456789") + 5;
        if (*t == ',' || *t == '.') t++;
        t += strspn(t, " ");
        if (!strncmp(t, "e.displayText() = ", 18)) t += 18;
    }
    if (!strncmp(t, "DB::Exception: ", 15)) t += 15;
    char *what = strstr(t, ", e.what() = ");
    if (what) *what = 0;
    size_t o = 0;
    for (const char *p = t; *p && o + 1 < outlen; p++) {
        int ch = (unsigned char)*p;
        if (ch < ' ' || ch == 0x7f) ch = ' ';
        if (ch == ' ' && (o == 0 || out[o - 1] == ' ')) continue;
        out[o++] = (char)ch;
    }
    while (o > 0 && out[o - 1] == ' ') o--;
    out[o] = 0;
    if (o > 300 && outlen > 304) strcpy(out + 297, "...");
    sb_free(&s);
}

/* ---------------------------------------------------------------- a request */
/* The body after the head h: a 200's into out, another's (its first MB)
 * made the error. */
static int read_body_of(struct ch *c, struct reader *r, struct response *h, struct strbuf *out,
                        char *err, size_t errlen)
{
    struct strbuf ebody = { 0 }, *dst = h->status == 200 ? out : &ebody;
    size_t keep = h->status != 200 ? ERROR_BODY_MAX : c->answer_max ? c->answer_max : SIZE_MAX;
    int rc = 0, body_rc = h->status == 204 || h->status == 304 ? 0        /* no body */
                        : h->length > 0 && (uint64_t)h->length > c->answer_limit ? (r->error = EFBIG, -1)
                        : h->chunked ? read_chunked(r, dst, keep)
                        : read_body(r, h->length >= 0 ? h->length : (h->close = 1, -1), dst, keep);
    char t[32], msg[512];
    if (body_rc) {
        h->close = 1;
        if (r->error == ETIMEDOUT)
            rc = fail(c, EXIT_FAILED, err, errlen, "the answer was not complete in %s (MPQ_CH_TIMEOUT: the most "
                      "a request takes; %llu bytes came)", secs(c->timeout_ms, t, sizeof t),
                      (unsigned long long)r->total);
        else if (r->error == EFBIG)
            rc = fail(c, EXIT_FAILED, err, errlen, "the answer is larger than %llu bytes (MPQ_CH_ANSWER_MAX)",
                      (unsigned long long)c->answer_limit);
        else
            rc = fail(c, EXIT_FAILED, err, errlen, "the server closed the connection in the middle of the answer "
                      "(%llu bytes)%s%s", (unsigned long long)r->total, r->error ? ": " : "",
                      r->error ? strerror(r->error) : "");
    } else if (h->status != 200) {
        server_text(c, ebody.s ? ebody.s : "", ebody.len, msg, sizeof msg);
        if (c->exception_code)
            rc = fail(c, EXIT_FAILED, err, errlen, "server error (HTTP %d, code %d): %s", h->status,
                      c->exception_code, msg);
        else
            rc = fail(c, EXIT_FAILED, err, errlen, "HTTP %d%s%s", h->status, *msg ? ": " : "", msg);
    }
    sb_free(&ebody);
    return rc;
}

/* The answer to the request just sent (answered: the server answered
 * before reading all of it). *retry is set when the request may go again
 * on a new connection: a reused one ended before any byte of an answer. */
static int read_answer(struct ch *c, int reused, int answered, struct strbuf *out, int *retry,
                       char *err, size_t errlen)
{
    struct reader *r = xmalloc(sizeof *r);
    *r = (struct reader){ .c = c };
    struct response h;
    char t[32];
    int rc;
    if (read_head(r, &h)) {
        *retry = reused && r->total == 0 && r->error != ETIMEDOUT;
        if (r->error == ETIMEDOUT && r->total == 0)
            rc = fail(c, EXIT_FAILED, err, errlen, "no answer in %s (MPQ_CH_TIMEOUT)", secs(c->timeout_ms, t, sizeof t));
        else if (r->error == ETIMEDOUT)
            rc = fail(c, EXIT_FAILED, err, errlen, "the answer was not complete in %s (MPQ_CH_TIMEOUT: the most "
                      "a request takes; %llu bytes came)", secs(c->timeout_ms, t, sizeof t),
                      (unsigned long long)r->total);
        else if (r->total == 0)
            rc = fail(c, EXIT_FAILED, err, errlen, "the server closed the connection without an answer%s%s",
                      r->error ? ": " : "", r->error ? strerror(r->error) : "");
        else
            rc = fail(c, EXIT_FAILED, err, errlen, "not an HTTP answer (is this ClickHouse's HTTP port?)");
    } else {
        c->status = h.status;
        rc = read_body_of(c, r, &h, out, err, errlen);
        /* not reusable: the server stopped reading our request midway, or
         * sent bytes beyond its answer */
        if (h.close || answered || r->pos != r->len) ch_close(c);
    }
    if (rc) ch_close(c);
    free(r);
    return rc;
}

/* Sends one request on the kept-alive connection (a new one when there is
 * none, or the server closed it while idle) and reads the answer. */
static int exchange(struct ch *c, const struct strbuf *head, const char *body, size_t len, int idempotent,
                    struct strbuf *out, int *retry, char *err, size_t errlen)
{
    int reused = c->fd >= 0, rc;
    *retry = 0;
    /* closed while idle (or junk): a fresh one; and always for a request
     * that must not be sent twice (an INSERT), which a kept-alive
     * connection the server closes as it arrives would leave in doubt */
    if (reused && (!idempotent || wait_fd(c->fd, POLLIN, 0, NULL) != 0)) {
        ch_close(c);
        reused = 0;
    }
    if (!reused && (rc = ch_connect(c, err, errlen))) return rc;
    struct iovec iov[2] = { { head->s, head->len }, { (void *)body, len } };
    int answered, e = send_request(c, iov, body ? 2 : 1, &answered);
    if (!e) return read_answer(c, reused, answered, out, retry, err, errlen);
    *retry = reused && e != ETIMEDOUT;
    ch_close(c);
    char t[32];
    if (e == ETIMEDOUT)
        return fail(c, EXIT_FAILED, err, errlen, "sending the request: not done in %s (MPQ_CH_TIMEOUT: the most a "
                    "request takes)", secs(c->timeout_ms, t, sizeof t));
    return fail(c, EXIT_FAILED, err, errlen, "sending the request: %s", strerror(e));
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

/* MPQ_CH_ANSWER_MAX: bytes, with a K, M or G suffix (powers of 1024), > 0 */
static int answer_max_from_env(struct ch *c, char *err, size_t errlen)
{
    const char *v = getenv("MPQ_CH_ANSWER_MAX");
    c->answer_limit = DEFAULT_ANSWER_MAX;
    if (!v || !*v) return 0;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift) end++;
    if (end == v || *v == '-' || *end || errno || n == 0 || n > (UINT64_MAX >> 1) >> shift) {
        snprintf(err, errlen, "MPQ_CH_ANSWER_MAX: '%s' is not a number of bytes (> 0, with K, M or G)", v);
        return EXIT_BAD_INPUT;
    }
    c->answer_limit = (uint64_t)n << shift;
    return 0;
}

/* MPQ_CH_TIMEOUT: seconds, > 0 */
static int timeout_from_env(struct ch *c, char *err, size_t errlen)
{
    const char *v = getenv("MPQ_CH_TIMEOUT");
    c->timeout_ms = DEFAULT_TIMEOUT_MS;
    if (!v || !*v) return 0;
    char *end;
    double s = strtod(v, &end);
    if (*end || !(s > 0) || s > 86400 * 7) {
        snprintf(err, errlen, "MPQ_CH_TIMEOUT: '%s' is not a number of seconds (> 0)", v);
        return EXIT_BAD_INPUT;
    }
    c->timeout_ms = s * 1000 < 1 ? 1 : (int)(s * 1000);
    return 0;
}

int ch_open(struct ch *c, const char *url, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    set_shown_url(c, url);
    int rc = timeout_from_env(c, err, errlen);
    if (!rc) rc = answer_max_from_env(c, err, errlen);
    if (!rc) rc = parse_url(c, url, err, errlen);
    if (rc) return rc;
    struct strbuf out = { 0 };
    c->answer_max = 4096;       /* "Ok.\n": anything longer is not ClickHouse */
    rc = request(c, "GET", "ping", 0, NULL, NULL, 0, 1, &out, err, errlen);
    c->answer_max = 0;
    if (!rc && strcmp(out.s, "Ok.\n")) {
        char msg[128];
        server_text(c, out.s, out.len < 100 ? out.len : 100, msg, sizeof msg);
        rc = fail(c, EXIT_FAILED, err, errlen, "not a ClickHouse server (GET %sping answered '%s', not 'Ok.')",
                  c->path, msg);
    } else if (rc && c->status) {
        /* an answer, but not ClickHouse's: say what it was */
        char why[512];
        snprintf(why, sizeof why, "%s", strchr(err, ' ') ? strchr(err, ' ') + 1 : err);
        rc = fail(c, EXIT_FAILED, err, errlen, "not a ClickHouse server (GET %sping: %s)", c->path, why);
    }
    sb_free(&out);
    return rc;
}

/* ---------------------------------------------------------------- TabSeparated */
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
            if (end - p >= 2 && hexval(p[0]) >= 0 && hexval(p[1]) >= 0) {
                ch = (char)(hexval(p[0]) * 16 + hexval(p[1]));
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
