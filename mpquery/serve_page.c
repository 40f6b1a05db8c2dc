/* mpquery serve's pages (serve.h): the views by path, the page around
 * each (the links to every view, the form of the state parameters, the
 * CSS and script built into the binary from serve.css and serve.js), the
 * views that are a command's CSV output as a table, and the argv of a
 * command from a request's parameters. Every text from the profile or the
 * request is escaped (xml_escape). */
#include "mpquery.h"
#include "commands.h"
#include "output.h"
#include "serve.h"
#include "opt_groups.h"

#include <stdlib.h>
#include <string.h>

const char *serve_param(const struct serve_req *r, const char *key)
{
    for (size_t i = 0; i < r->nparams; i++)
        if (!strcmp(r->params[i].key, key) && r->params[i].value[0]) return r->params[i].value;
    return NULL;
}

void url_encode(struct strbuf *sb, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-_.~", *p))
            sb_putc(sb, (char)*p);
        else
            sb_printf(sb, "%%%02X", *p);
}

/* The state parameters: each view keeps them, each is the option of its
 * name (argv_state), in the order of the P_* bits. */
static const char *const state_names[] = { "by", "snapshot", "filter", "exclude", "thread", "pid", "exe",
                                           "rules", "depth", "since", "until", "run", "image", "lines", "native",
                                           "no-inline", "module", "no-default-rules" };
#define NSTATE (sizeof state_names / sizeof *state_names)
#define FIRST_FLAG 13       /* lines ...: options without a value, on unless empty or 0 */

static int state_index(const char *key)
{
    for (size_t k = 0; k < NSTATE; k++)
        if (!strcmp(key, state_names[k])) return (int)k;
    return -1;
}

int serve_is_state(const char *key) { return state_index(key) >= 0; }

const char *serve_anchor(const char *path) { return path[0] == '/' && path[1] ? path + 1 : "overview"; }

/* In report's page: #NAME of path's section, when the page has it and the
 * link asks nothing more; else #serve. */
static void page_link(struct strbuf *sb, const struct serve_req *r, const char *path, const char *extra)
{
    const char *to = "serve";
    for (const char *const *p = r->in_page; *p && !(extra && *extra); p++)
        if (!strcmp(*p, path)) to = serve_anchor(path);
    sb_printf(sb, "#%s", to);
}

void serve_link(struct strbuf *sb, const struct serve_req *r, const char *path, const char *extra)
{
    if (r->in_page) {
        page_link(sb, r, path, extra);
        return;
    }
    struct strbuf u = { 0 };
    sb_printf(&u, "%s?token=%s", path, r->token);
    for (size_t i = 0; i < r->nparams; i++) {
        if (state_index(r->params[i].key) < 0 || !r->params[i].value[0]) continue;
        sb_printf(&u, "&%s=", r->params[i].key);
        url_encode(&u, r->params[i].value);
    }
    if (extra && *extra) sb_printf(&u, "&%s", extra);
    xml_escape(sb, u.s, u.len, (size_t)-1);
    sb_free(&u);
}

/* r's own URL without its time range: every parameter but since and
 * until (those of the view too: function, zoom ...), escaped. */
static void whole_run_link(struct strbuf *sb, const struct serve_req *r)
{
    struct strbuf u = { 0 };
    sb_printf(&u, "%s?token=%s", r->path, r->token);
    for (size_t i = 0; i < r->nparams; i++) {
        const char *k = r->params[i].key;
        if (!strcmp(k, "token") || !strcmp(k, "since") || !strcmp(k, "until") || !r->params[i].value[0]) continue;
        sb_putc(&u, '&');
        url_encode(&u, k);
        sb_putc(&u, '=');
        url_encode(&u, r->params[i].value);
    }
    xml_escape(sb, u.s, u.len, (size_t)-1);
    sb_free(&u);
}

void serve_range_bar(struct strbuf *sb, const struct serve_req *r)
{
    const char *since = serve_param(r, "since"), *until = serve_param(r, "until");
    if ((!since && !until) || r->in_page) return;
    sb_puts(sb, "<p class=range>time range <b class=range>");
    if (since) xml_escape(sb, since, strlen(since), 100);
    else sb_puts(sb, "start");
    sb_puts(sb, "..");
    if (until) xml_escape(sb, until, strlen(until), 100);
    else sb_puts(sb, "end");
    sb_puts(sb, "</b>: the views show the allocations made in it \xc2\xb7 <a class=reset href=\"");
    whole_run_link(sb, r);
    sb_puts(sb, "\">the whole run</a></p>\n");
}

void argv_add(struct serve_argv *a, const char *s)
{
    char **e = array_push((void **)&a->v, &a->n, &a->cap, sizeof *a->v);
    *e = xstrdup(s);
}

void argv_state(struct serve_argv *a, const struct serve_req *r, int mask)
{
    for (size_t i = 0; i < r->nparams; i++) {
        int k = state_index(r->params[i].key);
        if (k < 0 || !(mask & (1 << k)) || !r->params[i].value[0]) continue;
        if (k >= FIRST_FLAG && !strcmp(r->params[i].value, "0")) continue;
        struct strbuf sb = { 0 };
        if (k >= FIRST_FLAG) sb_printf(&sb, "--%s", r->params[i].key);
        else sb_printf(&sb, "--%s=%s", r->params[i].key, r->params[i].value);
        argv_add(a, sb.s);
        sb_free(&sb);
    }
}

void argv_free(struct serve_argv *a)
{
    for (size_t i = 0; i < a->n; i++) free(a->v[i]);
    free(a->v);
}

/* ---------------------------------------------------------------- CSV */
/* The next field of *s (a CSV record's), unquoted into f; *end: it ended
 * its record (or the text). */
static void csv_next(const char **s, struct strbuf *f, int *end)
{
    const char *p = *s;
    f->len = 0;
    sb_add(f, "", 0);
    if (*p == '"') {
        for (p++; *p; p++) {
            if (*p == '"' && p[1] == '"') sb_putc(f, '"'), p++;
            else if (*p == '"') { p++; break; }
            else sb_putc(f, *p);
        }
    } else
        while (*p && *p != ',' && *p != '\n') sb_putc(f, *p++);
    *end = *p != ',';
    *s = *p ? p + 1 : p;
}

static int numeric(const char *s)
{
    if (*s == '-') s++;
    if (!*s) return 0;
    for (; *s; s++) if ((*s < '0' || *s > '9') && *s != '.') return 0;
    return 1;
}

/* The row that says where report's page cut a table: after shown rows
 * of total (0: not known, -n 0's rows capped), at -n or the page's size
 * bound. */
static void cut_row(struct strbuf *sb, size_t shown, size_t total, int bound)
{
    sb_printf(sb, "<tr><td class=cut colspan=99>the first %zu rows", shown);
    if (total) sb_printf(sb, " of %zu", total);
    sb_printf(sb, "%s: <a href=\"#serve\">mpquery serve</a> shows them all</td></tr>\n",
              bound ? " (the page's size bound)" : "");
}

/* Row row of the CSV at *csv (0: the header) as a table row. */
static void csv_row(struct strbuf *sb, const struct serve_req *r, const char **csv, struct strbuf *f, int row,
                    const char *link, int *link_col)
{
    sb_puts(sb, "<tr>");
    int end = 0;
    for (int col = 0; !end; col++) {
        csv_next(csv, f, &end);
        if (row == 0 && link && !strcmp(f->s, link)) *link_col = col;
        const char *tag = row == 0 ? "th" : "td";
        sb_printf(sb, "<%s%s>", tag, row && numeric(f->s) ? " class=n" : "");
        if (row && col == *link_col && f->len) {
            struct strbuf x = { 0 };
            sb_puts(&x, "function=");
            url_encode(&x, f->s);
            sb_puts(sb, "<a href=\"");
            serve_link(sb, r, "/callers", x.s);
            sb_puts(sb, "\">");
            xml_escape(sb, f->s, f->len, 400);
            sb_puts(sb, "</a>");
            sb_free(&x);
        } else
            xml_escape(sb, f->s, f->len, 400);
        sb_printf(sb, "</%s>", tag);
    }
    sb_puts(sb, "</tr>\n");
}

void csv_table(struct strbuf *sb, const struct serve_req *r, const char *csv, const char *link)
{
    struct strbuf f = { 0 };
    int link_col = -1, cut = 0;
    sb_puts(sb, "<table class=t>\n");
    size_t rows = 0, start = sb->len;
    for (int row = 0; *csv && !cut; row++) {
        int full = r->table_bytes && sb->len - start > r->table_bytes;
        if (row && ((r->max_rows && rows == r->max_rows) || full)) {
            size_t shown = rows;
            for (const char *p = csv; *p; p++) rows += *p == '\n';
            cut_row(sb, shown, full && r->rows_cap ? 0 : rows, full);
            cut = 1;
        } else {
            rows += row > 0;
            csv_row(sb, r, &csv, &f, row, link, &link_col);
        }
    }
    if (!cut && r->rows_cap && rows == r->rows_cap) cut_row(sb, rows, 0, 1);
    sb_puts(sb, "</table>\n");
    sb_free(&f);
}

/* ---------------------------------------------------------------- the page */
static const char *const counter_choice[] = { "ncalls", "memtot", "nfree", "nlive", "memlive", "maxlive",
                                              "ntemp" };

/* The form of the state parameters: submitting it reloads the view with
 * them (the script leaves the empty ones out of the URL). */
void serve_state_form(struct strbuf *sb, const struct serve_req *r)
{
    sb_puts(sb, "<form class=state method=get action=\"");
    xml_escape(sb, r->path, strlen(r->path), 200);
    sb_printf(sb, "\"><input type=hidden name=token value=\"%s\">", r->token);
    const char *keep[] = { "function", "file", "line" };
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
        const char *v = serve_param(r, keep[i]);
        if (!v) continue;
        sb_printf(sb, "<input type=hidden name=%s value=\"", keep[i]);
        xml_escape(sb, v, strlen(v), (size_t)-1);
        sb_puts(sb, "\">");
    }
    const char *by = serve_param(r, "by");
    sb_puts(sb, "<label>by <select name=by><option value=\"\">(default)</option>");
    for (size_t i = 0; i < sizeof counter_choice / sizeof *counter_choice; i++)
        sb_printf(sb, "<option%s>%s</option>", by && !strcmp(by, counter_choice[i]) ? " selected" : "",
                  counter_choice[i]);
    sb_puts(sb, "</select></label>");
    for (size_t k = FIRST_FLAG; k < NSTATE; k++) {
        const char *v = serve_param(r, state_names[k]);
        sb_printf(sb, "<label><input type=checkbox name=%s value=1%s>%s</label>", state_names[k],
                  v && strcmp(v, "0") ? " checked" : "", state_names[k]);
    }
    for (size_t k = 1; k < FIRST_FLAG; k++) {
        const char *v = serve_param(r, state_names[k]);
        sb_printf(sb, "<label>%s <input name=%s size=8 value=\"", state_names[k], state_names[k]);
        if (v) xml_escape(sb, v, strlen(v), (size_t)-1);
        sb_puts(sb, "\"></label>");
    }
    sb_puts(sb, "<button>apply</button></form>\n");
}

void serve_lines(struct strbuf *sb, const char *s, size_t n)
{
    while (n) {
        const char *nl = memchr(s, '\n', n);
        size_t len = nl ? (size_t)(nl - s) : n;
        xml_escape(sb, s, len, (size_t)-1);
        if (nl) sb_putc(sb, '\n'), len++;
        s += len, n -= len;
    }
}

/* A view's exit code as the page's status, its stderr shown: the error
 * (status 400, 403, 500) or notes (what the filters left out). */
int serve_child_status(int rc, const struct strbuf *err, struct strbuf *body)
{
    if (err->len) {
        sb_printf(body, "<pre class=%s>", rc ? "err" : "note");
        serve_lines(body, err->s, err->len);
        sb_puts(body, "</pre>\n");
    }
    return rc == 0 ? 200 : rc == EXIT_BAD_INPUT ? 400 : rc == SERVE_FORBIDDEN ? 403 : 500;
}

