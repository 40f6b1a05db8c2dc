/* What http.c (the connection, sending, a request), http_url.c (the URL
 * and the MPQ_CH_* settings), http_read.c (reading an answer),
 * http_conn.c (their bottom: waits, the error line) and tsv.c share;
 * never included outside them. They call downward: http.c -> http_read.c,
 * http_url.c -> http_conn.c. Errors as http.h says: one line in
 * err naming c->url, the code returned. */
#ifndef MPQUERY_HTTP_INTERNAL_H
#define MPQUERY_HTTP_INTERNAL_H

#include "http.h"

/* err = "URL: " and the message; returns code. */
__attribute__((format(printf, 5, 6)))
int ch_fail(const struct ch *c, int code, char *err, size_t errlen, const char *fmt, ...);
/* Waits until fd is ready for events; 1 ready (revents in *got), 0 timed
 * out, -1 error (errno). */
int ch_wait_fd(int fd, short events, int timeout_ms, short *got);
/* What is left of the request's time, in ms (0: none; rounded up, so
 * that a wait ends after the deadline, never before). */
int ch_left_ms(const struct ch *c);
/* ms as "1.5 s" / "30 s" in buf. */
const char *ch_secs(int ms, char *buf, size_t n);
/* A hexadecimal digit's value, -1 when ch is not one. */
int ch_hexval(int ch);

/* c cleared (no connection), its url for messages, its MPQ_CH_TIMEOUT
 * and MPQ_CH_ANSWER_MAX and the URL's parts; 0 or EXIT_BAD_INPUT. */
int ch_settings(struct ch *c, const char *url, char *err, size_t errlen);

/* The answer to the request just sent (answered: the server answered
 * before reading all of it) into out. *retry is set when the request may
 * go again on a new connection: a reused one ended before any byte of an
 * answer. */
int ch_read_answer(struct ch *c, int reused, int answered, struct strbuf *out, int *retry,
                   char *err, size_t errlen);
/* The server's error text in body[0..n) as one line in out (see
 * http_read.c); its code to c->exception_code when not set. */
void ch_server_text(struct ch *c, const char *body, size_t n, char *out, size_t outlen);

#endif
