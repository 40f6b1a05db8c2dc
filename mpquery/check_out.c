/* mpquery check's report (check.h): text for people (a row per limit and
 * per growth that failed, then one PASS or FAIL line), json for scripts
 * (every row the text has, raw numbers), JUnit XML for CI systems (a
 * testcase per limit and per kind and measure of growth). The same
 * findings in all three: the writers only format. */
#include "mpquery.h"
#include "counters.h"
#include "check.h"
#include "listing.h"
#include "output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_name[] = { "limit", "stack", "function" };

static int measure_counter(int m) { return m == M_CALLS ? NCALLS : MEMTOT; }

static int passed(const struct check_report *r) { return !r->limits_failed && !r->grown[0] && !r->grown[1]; }

/* "+12.5 %", or "new" when before was 0. */
static void growth_text(const struct finding *f, char *buf, size_t n)
{
    if (f->before <= 0) snprintf(buf, n, "new");
    else snprintf(buf, n, "%+.1f %%", 100 * (f->after - f->before) / f->before);
}

/* "FAIL: 1 limit exceeded, 2 stacks and 1 function grew (of 12 stacks
 * and 8 functions compared)", or "PASS: ...". */
static void summary_line(const struct check_report *r, struct strbuf *sb)
{
    size_t nlimits = 0;
    for (size_t i = 0; i < r->n; i++) nlimits += r->f[i].kind == K_LIMIT;
    sb_puts(sb, passed(r) ? "PASS: " : "FAIL: ");
    if (nlimits) sb_printf(sb, "%zu of %zu limit%s exceeded", r->limits_failed, nlimits, nlimits == 1 ? "" : "s");
    if (nlimits && r->baseline) sb_puts(sb, "; ");
    if (r->baseline)
        sb_printf(sb, "%zu of %zu stack%s and %zu of %zu function%s grew", r->grown[0], r->compared[0],
                  r->compared[0] == 1 ? "" : "s", r->grown[1], r->compared[1], r->compared[1] == 1 ? "" : "s");
}

/* ---------------------------------------------------------------- text */
static void print_text(const struct check_report *r, FILE *f)
{
    static const char *const cols[] = { "result", "check", "measure", "before", "after", "growth", "limit", "where" };
    const struct common *c = r->c;
    struct table tab;
    table_init(&tab, 8, cols);
    tab.width = f == stdout ? c->out.width : 0;
    uint32_t *rows = xmalloc((r->n + 1) * sizeof *rows);
    char buf[64];
    for (size_t i = 0; i < r->n; i++) {
        const struct finding *x = &r->f[i];
        int counter = measure_counter(x->measure);
        table_str(&tab, x->failed ? "FAIL" : "pass");
        table_str(&tab, kind_name[x->kind]);
        table_str(&tab, measure_name[x->measure]);
        if (x->kind == K_LIMIT) table_null(&tab);
        else table_counter(&tab, counter, llround(x->before), c->out.human);
        table_counter(&tab, counter, llround(x->after), c->out.human);
        growth_text(x, buf, sizeof buf);
        if (x->kind == K_LIMIT) table_null(&tab);
        else table_str(&tab, buf);
        table_counter(&tab, counter, (int64_t)floor(x->limit), c->out.human);
        rows[i] = x->kind == K_STACK ? x->item : NONE;
        if (x->kind == K_FUNCTION) table_strn(&tab, r->t->labels.str[x->item], r->t->labels.len[x->item]);
        else if (x->kind == K_LIMIT) table_str(&tab, r->filter ? r->filter : "(all stacks)");
        else table_str(&tab, "");
    }
    table_where_column(&tab, 7, r->t, rows, f == stdout ? listing_depth(c) : 5);
    struct strbuf sb = { 0 };
    sb_printf(&sb, "mpquery check %s", r->current);
    if (r->baseline)
        sb_printf(&sb, " against %s (growth allowed: %g %%%s, at least %g %% of the baseline's total)", r->baseline,
                  r->max_growth, r->sampled[0] || r->sampled[1] ? " and the sampling noise" : "", r->min_share);
    fprintf(f, "%s\n", sb.s);
    if (r->n) table_print(&tab, FMT_TEXT, f);
    sb.len = 0;
    summary_line(r, &sb);
    fprintf(f, "%s\n", sb.s);
    sb_free(&sb);
    free(rows);
    table_free(&tab);
}

/* ---------------------------------------------------------------- json */
static void print_json(const struct check_report *r, FILE *f)
{
    struct json w;
    struct strbuf sb = { 0 };
    json_init(&w, f);
    json_open(&w, '{');
    json_key(&w, "result"), json_str(&w, passed(r) ? "pass" : "fail");
    json_key(&w, "current"), json_str(&w, r->current);
    json_key(&w, "baseline");
    if (r->baseline) json_str(&w, r->baseline);
    else json_null(&w);
    json_key(&w, "max_growth"), json_fixed(&w, r->max_growth, 2);
    json_key(&w, "sigmas"), json_fixed(&w, r->sigmas, 2);
    json_key(&w, "min_share"), json_fixed(&w, r->min_share, 2);
    json_key(&w, "floors"), json_open(&w, '{');     /* per measure, the least growth that fails */
    for (int m = 0; m < NM; m++) json_key(&w, measure_name[m]), json_int(&w, r->baseline ? (int64_t)floor(r->floor[m]) : 0);
    json_close(&w, '}');
    json_key(&w, "compared"), json_open(&w, '{');
    json_key(&w, "stacks"), json_int(&w, (int64_t)r->compared[0]);
    json_key(&w, "functions"), json_int(&w, (int64_t)r->compared[1]);
    json_close(&w, '}');
    json_key(&w, "grown"), json_open(&w, '{');
    json_key(&w, "stacks"), json_int(&w, (int64_t)r->grown[0]);
    json_key(&w, "functions"), json_int(&w, (int64_t)r->grown[1]);
    json_close(&w, '}');
    json_key(&w, "checks"), json_open(&w, '[');
    for (size_t i = 0; i < r->n; i++) {
        const struct finding *x = &r->f[i];
        json_break(&w, 1);              /* a check a line, as leaks' rows */
        json_open(&w, '{');
        json_key(&w, "check"), json_str(&w, kind_name[x->kind]);
        json_key(&w, "measure"), json_str(&w, measure_name[x->measure]);
        json_key(&w, "before");
        if (x->kind == K_LIMIT) json_null(&w);
        else json_int(&w, llround(x->before));
        json_key(&w, "after"), json_int(&w, llround(x->after));
        json_key(&w, "limit"), json_int(&w, (int64_t)floor(x->limit));
        json_key(&w, "noise"), json_int(&w, llround(x->noise));
        json_key(&w, "pass"), json_raw(&w, x->failed ? "false" : "true");
        if (x->kind == K_STACK) {
            sb.len = 0;
            dtree_frames_json(r->t, x->item, &sb);
            json_key(&w, "frames"), json_raw(&w, sb.s);
        } else if (x->kind == K_FUNCTION) {
            json_key(&w, "function"), json_strn(&w, r->t->labels.str[x->item], r->t->labels.len[x->item]);
        } else {
            json_key(&w, "filter");
            if (r->filter) json_str(&w, r->filter);
            else json_null(&w);
        }
        json_close(&w, '}');
    }
    if (r->n) json_break(&w, 0);
    json_close(&w, ']');
    json_close(&w, '}');
    fputc('\n', f);
    sb_free(&sb);
}

/* ---------------------------------------------------------------- junit */
/* s as XML character data or attribute value: markup escaped, control
 * characters XML 1.0 cannot hold as '?'. */
static void xml_text(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '&') fputs("&amp;", f);
        else if (ch == '<') fputs("&lt;", f);
        else if (ch == '>') fputs("&gt;", f);
        else if (ch == '"') fputs("&quot;", f);
        else if (ch < 0x20 && ch != '\n' && ch != '\t') fputc('?', f);
        else fputc(ch, f);
    }
}

static void xml_str(FILE *f, const char *s) { xml_text(f, s, strlen(s)); }

/* One line of a failure: "where: before -> after (growth, limit L)". */
static void finding_line(const struct check_report *r, const struct finding *x, struct strbuf *sb)
{
    char g[64];
    if (x->kind == K_STACK) dtree_short_path(r->t, x->item, 0, " < ", sb);
    else if (x->kind == K_FUNCTION) sb_add(sb, r->t->labels.str[x->item], r->t->labels.len[x->item]);
    if (x->kind == K_LIMIT) {
        sb_printf(sb, "%s %.0f > limit %.0f", measure_name[x->measure], x->after, floor(x->limit));
        return;
    }
    growth_text(x, g, sizeof g);
    sb_printf(sb, ": %s %.0f -> %.0f (%s, limit %.0f)", measure_name[x->measure], x->before, x->after, g,
              floor(x->limit));
}

static void testcase(FILE *f, const char *name, const char *message, const char *body)
{
    fputs("  <testcase classname=\"mpquery.check\" name=\"", f);
    xml_str(f, name);
    if (!message) {
        fputs("\"/>\n", f);
        return;
    }
    fputs("\">\n    <failure type=\"memory\" message=\"", f);
    xml_str(f, message);
    fputs("\">", f);
    xml_str(f, body);
    fputs("</failure>\n  </testcase>\n", f);
}

/* Growth testcases: per kind (stacks, functions), per measure. */
static size_t growth_cases(const struct check_report *r, FILE *f, int print, size_t *failures)
{
    size_t n = 0;
    struct strbuf body = { 0 }, name = { 0 }, msg = { 0 };
    for (int kind = K_STACK; kind <= K_FUNCTION; kind++)
        for (int m = 0; m < NM; m++) {
            size_t grown = 0;
            body.len = name.len = msg.len = 0;
            sb_puts(&body, "");
            for (size_t i = 0; i < r->n; i++) {
                const struct finding *x = &r->f[i];
                if (x->kind != kind || x->measure != m) continue;
                grown++;
                finding_line(r, x, &body);
                sb_puts(&body, "\n");
            }
            n++;
            *failures += grown > 0;
            if (!print) continue;
            sb_printf(&name, "%s grew in %s", kind == K_STACK ? "no stack" : "no function", measure_name[m]);
            sb_printf(&msg, "%zu %s%s grew in %s", grown, kind == K_STACK ? "stack" : "function",
                      grown == 1 ? "" : "s", measure_name[m]);
            testcase(f, name.s, grown ? msg.s : NULL, body.s);
        }
    sb_free(&body);
    sb_free(&name);
    sb_free(&msg);
    return n;
}

static void print_junit(const struct check_report *r, FILE *f)
{
    size_t tests = 0, failures = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->f[i].kind == K_LIMIT) tests++, failures += (size_t)r->f[i].failed;
    if (r->baseline) tests += growth_cases(r, f, 0, &failures);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
               "<testsuite name=\"mpquery check\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\">\n",
            tests, failures);
    struct strbuf name = { 0 }, line = { 0 };
    for (size_t i = 0; i < r->n; i++) {
        const struct finding *x = &r->f[i];
        if (x->kind != K_LIMIT) continue;
        name.len = line.len = 0;
        sb_printf(&name, "%s <= %.0f%s%s", measure_name[x->measure], floor(x->limit), r->filter ? " in " : "",
                  r->filter ? r->filter : "");
        finding_line(r, x, &line);
        testcase(f, name.s, x->failed ? line.s : NULL, line.s);
    }
    if (r->baseline) growth_cases(r, f, 1, &failures);
    fputs("</testsuite>\n</testsuites>\n", f);
    sb_free(&name);
    sb_free(&line);
}

void check_print(const struct check_report *r, FILE *f)
{
    if (r->format == CHECK_JSON) print_json(r, f);
    else if (r->format == CHECK_JUNIT) print_junit(r, f);
    else print_text(r, f);
}
