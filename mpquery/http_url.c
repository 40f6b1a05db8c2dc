/* The server's address and the client's limits: the http:// URL parsed
 * into struct ch (user and password percent-decoded, the port checked,
 * the base path ending in '/'), MPQ_CH_TIMEOUT and MPQ_CH_ANSWER_MAX read
 * and checked. Nothing here touches the network. */
#include "optdefs.h"
#include "http_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { DEFAULT_TIMEOUT_MS = 30000 };
/* The largest answer by default: 5 times what a store of 1 M distinct
 * stacks 20 frames deep answers (427 MB: tests/lib/fixtures/big.sql
 * pushed, then top --server). */
#define DEFAULT_ANSWER_MAX ((uint64_t)2 << 30)

int ch_hexval(int ch)
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
            int hi = ch_hexval(s[i + 1]), lo = ch_hexval(s[i + 2]);
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

/* USER[:PASSWORD]@ at *auth (before end), percent-decoded into c; *auth
 * moved past it. */
static int url_userinfo(struct ch *c, const char **auth, const char *end, char *err, size_t errlen)
{
    const char *at = NULL;
    for (const char *s = *auth; s < end; s++)
        if (*s == '@') at = s;
    if (!at) return 0;
    const char *colon = memchr(*auth, ':', (size_t)(at - *auth));
    const char *uend = colon ? colon : at;
    if (pct_decode(*auth, (size_t)(uend - *auth), c->user, sizeof c->user) ||
        (colon && pct_decode(colon + 1, (size_t)(at - colon - 1), c->password, sizeof c->password)))
        return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "bad user or password (too long, or a bad %%XX)");
    *auth = at + 1;
    return 0;
}

/* HOST[:PORT] or [IPV6][:PORT] in auth[0..end) into c->host and c->port
 * (8123 when not given). */
static int url_host_port(struct ch *c, const char *auth, const char *end, char *err, size_t errlen)
{
    const char *hend, *port = NULL;
    if (*auth == '[') {
        const char *close = memchr(auth, ']', (size_t)(end - auth));
        if (!close) return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "unclosed '[' in the host");
        if (copy_part(auth + 1, (size_t)(close - auth - 1), c->host, sizeof c->host))
            return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "host name too long");
        hend = close + 1;
        if (hend < end && *hend != ':') return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "junk after ']' in the host");
    } else {
        hend = memchr(auth, ':', (size_t)(end - auth));
        if (!hend) hend = end;
        if (copy_part(auth, (size_t)(hend - auth), c->host, sizeof c->host))
            return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "host name too long");
    }
    if (!c->host[0]) return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "no host");
    if (hend < end && *hend == ':') port = hend + 1;
    if (!port || port >= end) {
        strcpy(c->port, "8123");
        return 0;
    }
    long v = 0;
    for (const char *s = port; s < end; s++) {
        if (*s < '0' || *s > '9' || v > 65535) return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "bad port");
        v = v * 10 + (*s - '0');
    }
    if (v < 1 || v > 65535) return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "bad port");
    snprintf(c->port, sizeof c->port, "%ld", v);
    return 0;
}

/* [/PATH][?PARAMS][#...] at path into c->path (ending in '/') and
 * c->params. */
static int url_path(struct ch *c, const char *path, char *err, size_t errlen)
{
    const char *pend = path + strcspn(path, "?#");
    if (path == pend) {
        strcpy(c->path, "/");
    } else {
        int slash = pend[-1] != '/';    /* /ping is appended to the base path */
        if ((size_t)(pend - path) + (size_t)slash >= sizeof c->path)
            return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "path too long");
        memcpy(c->path, path, (size_t)(pend - path));
        strcpy(c->path + (pend - path), slash ? "/" : "");
    }
    if (*pend == '?') {
        const char *q = pend + 1;
        if (copy_part(q, strcspn(q, "#"), c->params, sizeof c->params))
            return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "query string too long");
    }
    return 0;
}

/* http://[USER[:PASSWORD]@]HOST[:PORT][/PATH][?PARAMS][#...] */
static int parse_url(struct ch *c, const char *url, char *err, size_t errlen)
{
    for (const char *s = url; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == 0x7f)
            return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "a URL has no spaces or control characters");
    if (!strncasecmp(url, "https://", 8))
        return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "https is not supported; use http:// (ClickHouse's HTTP "
                       "port, 8123 by default; a TLS tunnel such as stunnel or ssh -L for a remote server)");
    if (strncasecmp(url, "http://", 7))
        return ch_fail(c, EXIT_BAD_INPUT, err, errlen, "not an http:// URL (http://[USER[:PASSWORD]@]HOST[:PORT]/"
                       "[?database=DB])");
    const char *auth = url + 7, *end = auth + strcspn(auth, "/?#");
    int rc = url_userinfo(c, &auth, end, err, errlen);
    if (!rc) rc = url_host_port(c, auth, end, err, errlen);
    if (!rc) rc = url_path(c, end, err, errlen);
    return rc;
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

/* MPQ_CH_ANSWER_MAX: bytes, with a K, M or G suffix (powers of 1024), > 0 */
static int answer_max_from_env(struct ch *c, char *err, size_t errlen)
{
    const char *v = getenv("MPQ_CH_ANSWER_MAX");
    c->answer_limit = DEFAULT_ANSWER_MAX;
    if (!v || !*v) return 0;
    uint64_t n;
    if (mp_parse_size(v, &n) || n == 0 || n > UINT64_MAX >> 1) {
        snprintf(err, errlen, "MPQ_CH_ANSWER_MAX: '%s' is not a number of bytes (> 0, with K, M or G)", v);
        return EXIT_BAD_INPUT;
    }
    c->answer_limit = n;
    return 0;
}

/* MPQ_CH_TIMEOUT: seconds, > 0 */
static int timeout_from_env(struct ch *c, char *err, size_t errlen)
{
    const char *v = getenv("MPQ_CH_TIMEOUT");
    c->timeout_ms = DEFAULT_TIMEOUT_MS;
    if (!v || !*v) return 0;
    double s;
    if (mp_parse_duration(v, &s) || !(s > 0) || s > 86400 * 7) {
        snprintf(err, errlen, "MPQ_CH_TIMEOUT: '%s' is not a number of seconds (> 0)", v);
        return EXIT_BAD_INPUT;
    }
    c->timeout_ms = s * 1000 < 1 ? 1 : (int)(s * 1000);
    return 0;
}

int ch_settings(struct ch *c, const char *url, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    set_shown_url(c, url);
    int rc = timeout_from_env(c, err, errlen);
    if (!rc) rc = answer_max_from_env(c, err, errlen);
    if (!rc) rc = parse_url(c, url, err, errlen);
    return rc;
}
