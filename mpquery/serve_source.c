/* mpquery serve's /source?file=F&line=N (serve.h): the lines around line
 * N of F, F's line marked, when F is a file the profile's frames name
 * (exactly as stored: never another path, so a URL cannot read the
 * machine's files: SERVE_FORBIDDEN, 403) and readable here; else the path
 * alone. Every line is escaped. Without file=, the profile's files, each
 * a link. */
#include "mpquery.h"
#include "load.h"
#include "output.h"
#include "serve.h"
#include "opt_groups.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CONTEXT 15

static int known_file(const struct profile *p, const char *file)
{
    for (size_t i = 0; i < p->nfiles; i++)
        if (p->files[i] && !strcmp(p->files[i], file)) return 1;
    return 0;
}

/* The lines of f around line (0: its first lines). */
static void lines(FILE *f, long line, struct strbuf *sb)
{
    long from = line > CONTEXT ? line - CONTEXT : 1, to = (line > 0 ? line : 1) + CONTEXT, n = 0;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    sb_puts(sb, "<table class=src>\n");
    while ((len = getline(&buf, &cap, f)) >= 0 && ++n <= to) {
        if (n < from) continue;
        if (len && buf[len - 1] == '\n') len--;
        sb_printf(sb, "<tr%s><td class=n>%ld</td><td><pre>", n == line ? " class=cur" : "", n);
        xml_escape(sb, buf, (size_t)len, 1000);
        sb_puts(sb, "</pre></td></tr>\n");
    }
    sb_puts(sb, "</table>\n");
    free(buf);
}

/* Without file=: the files the frames name, each a link to its view. */
static void file_list(const struct serve_req *r, const struct profile *p, struct strbuf *sb)
{
    sb_printf(sb, "<p>%zu source files named by the profile's frames:</p>\n<ul class=files>\n", p->nfiles);
    for (size_t i = 0; i < p->nfiles && i < 2000; i++) {
        if (!p->files[i]) continue;
        struct strbuf x = { 0 };
        sb_puts(&x, "file=");
        url_encode(&x, p->files[i]);
        sb_puts(sb, "<li><a href=\"");
        serve_link(sb, r, "/source", x.s);
        sb_puts(sb, "\">");
        xml_escape(sb, p->files[i], strlen(p->files[i]), 500);
        sb_puts(sb, "</a></li>\n");
        sb_free(&x);
    }
    sb_puts(sb, "</ul>\n");
}

int serve_source_view(void *ctx, int argc, char **argv)
{
    const struct serve_req *r = ctx;
    struct dbfiles files = dbfiles_of(argc, argv, 1);
    struct profile *p;
    int rc = load_profiles(&files, 0, &p);
    if (rc) return rc;
    const char *file = serve_param(r, "file"), *ln = serve_param(r, "line");
    long line = ln ? atol(ln) : 0;
    struct strbuf sb = { 0 };
    if (!file) file_list(r, p, &sb);
    else if (!known_file(p, file)) {
        fprintf(stderr, "mpquery: source: ");
        text_printf(stderr, "%s is not a source file of the profile's frames: refused", file);
        fputc('\n', stderr);
        rc = SERVE_FORBIDDEN;
    } else {
        sb_puts(&sb, "<p class=file>");
        xml_escape(&sb, file, strlen(file), (size_t)-1);
        if (line > 0) sb_printf(&sb, ":%ld", line);
        sb_puts(&sb, "</p>\n");
        FILE *f = fopen(file, "r");
        if (!f) sb_printf(&sb, "<p class=note>not readable here: %s</p>\n", strerror(errno));
        else {
            lines(f, line, &sb);
            fclose(f);
        }
    }
    if (sb.len) fwrite(sb.s, 1, sb.len, stdout);
    sb_free(&sb);
    profile_free(p);
    return rc;
}
