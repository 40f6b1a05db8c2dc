/* A minimal HTTP/1.1 client for ClickHouse's HTTP interface (http.c): one
 * server from its URL, one statement per request, the SQL or the INSERT's
 * rows in the POST body; responses with Content-Length, chunked or ended
 * by close; one kept-alive connection reused between queries, and an
 * INSERT on a fresh one (sent once: never again after a failure that
 * leaves in doubt whether the server got it). No TLS, no libcurl. Also
 * the TabSeparated format, both ways.
 *
 * A request as a whole takes at most MPQ_CH_TIMEOUT seconds (a server
 * that trickles its answer cannot hold it longer), and an answer's body
 * is at most MPQ_CH_ANSWER_MAX bytes (an endless one is cut there, not
 * read until memory runs out).
 *
 * Every function returns 0, or EXIT_BAD_INPUT (a bad URL) / EXIT_FAILED
 * (anything the network or the server did) with one line in err that
 * names the URL and the problem. */
#ifndef MPQUERY_HTTP_H
#define MPQUERY_HTTP_H

#include "mpquery.h"

struct ch {                    /* one ClickHouse server, from its URL */
    const char *url;           /* as given, for messages (a password as ***: then it
                                  points into shown_url, so a struct ch is not copied) */
    char host[256], port[16];  /* port default 8123 */
    char path[512];            /* base path, "/" by default */
    char params[1024];         /* the URL's query string (e.g. "database=x"), passed on every request */
    char user[128], password[128];   /* from http://user:pass@host:port/ → X-ClickHouse-User/-Key headers */
    int timeout_ms;            /* the most a request takes, from connecting to the answer's last
                                  byte (MPQ_CH_TIMEOUT seconds; default 30) */
    double deadline;           /* the request under way's end (monotonic_seconds) */
    uint64_t answer_limit;     /* the largest answer body read (MPQ_CH_ANSWER_MAX; default 2 GiB) */
    /* set by each request: the HTTP status (0: no answer) and the
     * server's exception code (its X-ClickHouse-Exception-Code header,
     * else the body's "Code: N"; 0: none) */
    int status, exception_code;
    int fd;                    /* the kept-alive connection, -1: none */
    size_t answer_max;         /* 0, or the most of a 200 answer's body kept (ch_open's ping) */
    char shown_url[1024];
};

/* Parses the URL (http:// only: https:// is "https is not supported; …" ) and checks the
 * server answers (GET /ping → "Ok."). 0, or EXIT_BAD_INPUT/EXIT_FAILED with one line in err
 * that names the URL and the problem (connection refused, timeout, not ClickHouse, HTTP status + the server's exception text). */
int ch_open(struct ch *c, const char *url, char *err, size_t errlen);
/* Closes the kept-alive connection (ch_open's c stays usable: the next
 * request connects again). */
void ch_close(struct ch *c);
/* Runs one statement, the SQL in the POST body; its output into out (appended,
 * NUL-terminated). readonly: adds readonly=1 to the request, so the server refuses any write.
 * The server holds the output until the statement has ended
 * (wait_end_of_query=1), so an error midway is an error, never rows. */
int ch_query(struct ch *c, const char *sql, int readonly, struct strbuf *out, char *err, size_t errlen);
/* INSERT with data: the statement (e.g. "INSERT INTO mp_sample FORMAT TabSeparated") goes in the
 * URL's query= parameter (URL-encoded), the rows in the POST body. */
int ch_insert(struct ch *c, const char *statement, const char *data, size_t len, char *err, size_t errlen);

/* TabSeparated: the next field at *cur (< end) unescaped into field (reset first, NUL-terminated);
 * returns '\t' when another field of the row follows, '\n' at the row's end, 0 when no text is left. */
int tsv_field(const char **cur, const char *end, struct strbuf *field);
/* \\ \t \n \r and \' escaped as ClickHouse reads them (a C string has no \0) */
void tsv_escape(struct strbuf *sb, const char *s);
/* s as a ClickHouse string literal: quoted, escaped as tsv_escape does. */
void ch_quote(struct strbuf *sb, const char *s);

#endif
