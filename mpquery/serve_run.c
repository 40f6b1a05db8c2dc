/* serve's and report's views run in their process (serve_run), so that
 * what one view builds serves the next (serve_cache.c: the profile;
 * listing_cache.c: the listings): the command's stdout and stderr are
 * memory streams for its time (not files: a file size limit is the
 * page's, not each view's), its descriptors 1 and 2 /dev/null (not a
 * terminal: no pager, no terminal width), its exit code the view's.
 * Below the views (serve_views.c) and the server (serve.c). */
#define _GNU_SOURCE
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* fd onto target (1 or 2); the descriptor that was there, or -1 */
static int swap_in(int fd, int target)
{
    int saved = dup(target);
    if (saved >= 0 && dup2(fd, target) < 0) close(saved), saved = -1;
    return saved;
}

static void swap_back(int saved, int target)
{
    if (saved < 0) return;
    dup2(saved, target);
    close(saved);
}

/* A memory stream's text into sb, the stream closed. */
static void take(FILE *f, char **buf, size_t *len, struct strbuf *sb)
{
    fclose(f);
    if (*len) sb_add(sb, *buf, *len);
    free(*buf);
}

int serve_run(int (*fn)(void *ctx, int argc, char **argv), void *ctx, int argc, char **argv,
              struct strbuf *out, struct strbuf *err)
{
    char *ob = NULL, *eb = NULL;
    size_t on = 0, en = 0;
    FILE *fo = open_memstream(&ob, &on), *fe = open_memstream(&eb, &en);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (!fo || !fe || null < 0) {
        sb_printf(err, "mpquery: serve: %s", strerror(errno));
        if (fo) fclose(fo), free(ob);
        if (fe) fclose(fe), free(eb);
        if (null >= 0) close(null);
        return EXIT_FAILED;
    }
    fflush(stdout);
    fflush(stderr);
    FILE *so = stdout, *se = stderr;
    int d1 = swap_in(null, 1), d2 = swap_in(null, 2);
    close(null);
    stdout = fo, stderr = fe;
    optind = 0;
    int rc = fn(ctx, argc, argv) & 0xff;
    fflush(fo);
    fflush(fe);
    if (!rc && ferror(fo)) {
        fprintf(fe, "mpquery: out of memory for the view's output\n");
        rc = EXIT_FAILED;
    }
    stdout = so, stderr = se;
    swap_back(d1, 1);
    swap_back(d2, 2);
    take(fo, &ob, &on, out);
    take(fe, &eb, &en, err);
    return rc;
}
