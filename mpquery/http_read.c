/* Reading ClickHouse's answer to the request just sent: the status line
 * and headers (1xx skipped), the body with Content-Length, chunked, or up
 * to the close, at most c->answer_limit bytes and within the request's
 * deadline; a non-200 answer's body (its first MB) made the error line. */
#include "http_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

enum { HEADER_MAX = 65536, ERROR_BODY_MAX = 1 << 20 };

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
        if (!ch_left_ms(r->c)) { r->error = ETIMEDOUT; return 0; }
        ssize_t n = recv(r->c->fd, r->buf + r->len, sizeof r->buf - r->len, 0);
        if (n > 0) {
            r->len += (size_t)n;
            r->total += (uint64_t)n;
            return (size_t)n;
        }
        if (n == 0) return 0;
        if (errno == EINTR) continue;
        if (errno != EAGAIN) { r->error = errno; return 0; }
        int w = ch_wait_fd(r->c->fd, POLLIN, ch_left_ms(r->c), NULL);
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
void ch_server_text(struct ch *c, const char *body, size_t n, char *out, size_t outlen)
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
            rc = ch_fail(c, EXIT_FAILED, err, errlen, "the answer was not complete in %s (MPQ_CH_TIMEOUT: the most "
                         "a request takes; %llu bytes came)", ch_secs(c->timeout_ms, t, sizeof t),
                         (unsigned long long)r->total);
        else if (r->error == EFBIG)
            rc = ch_fail(c, EXIT_FAILED, err, errlen, "the answer is larger than %llu bytes (MPQ_CH_ANSWER_MAX)",
                         (unsigned long long)c->answer_limit);
        else
            rc = ch_fail(c, EXIT_FAILED, err, errlen, "the server closed the connection in the middle of the answer "
                         "(%llu bytes)%s%s", (unsigned long long)r->total, r->error ? ": " : "",
                         r->error ? strerror(r->error) : "");
    } else if (h->status != 200) {
        ch_server_text(c, ebody.s ? ebody.s : "", ebody.len, msg, sizeof msg);
        if (c->exception_code)
            rc = ch_fail(c, EXIT_FAILED, err, errlen, "server error (HTTP %d, code %d): %s", h->status,
                         c->exception_code, msg);
        else
            rc = ch_fail(c, EXIT_FAILED, err, errlen, "HTTP %d%s%s", h->status, *msg ? ": " : "", msg);
    }
    sb_free(&ebody);
    return rc;
}

int ch_read_answer(struct ch *c, int reused, int answered, struct strbuf *out, int *retry,
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
            rc = ch_fail(c, EXIT_FAILED, err, errlen, "no answer in %s (MPQ_CH_TIMEOUT)",
                         ch_secs(c->timeout_ms, t, sizeof t));
        else if (r->error == ETIMEDOUT)
            rc = ch_fail(c, EXIT_FAILED, err, errlen, "the answer was not complete in %s (MPQ_CH_TIMEOUT: the most "
                         "a request takes; %llu bytes came)", ch_secs(c->timeout_ms, t, sizeof t),
                         (unsigned long long)r->total);
        else if (r->total == 0)
            rc = ch_fail(c, EXIT_FAILED, err, errlen, "the server closed the connection without an answer%s%s",
                         r->error ? ": " : "", r->error ? strerror(r->error) : "");
        else
            rc = ch_fail(c, EXIT_FAILED, err, errlen, "not an HTTP answer (is this ClickHouse's HTTP port?)");
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
