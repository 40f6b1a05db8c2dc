/* The rules language (filters/README.md): one rule a line, applied in order.
 *
 *   replace REGEX => TEXT   rewrite every non-overlapping match (once per rule,
 *                           left to right; \1..\9 insert groups, \0 the whole
 *                           match, \\ a backslash)
 *   drop REGEX              remove matching frames
 *   prune REGEX             cut the callees of the first (outermost) match
 *   root REGEX              cut the callers of the last (innermost) match
 *   hide REGEX              leave matching frames out of one-line stack labels
 *                           (top's and leaks' 'where', listing.c); the paths,
 *                           fold, flame and --callers keep them
 *   thread replace REGEX => TEXT   the same on thread names (only replace):
 *                           frame names never see these lines, thread
 *                           names see only these
 *   collapse-templates DEPTH|off   a setting, not a rule: in text output,
 *                           after every rule, template argument lists
 *                           nested deeper than DEPTH become <…> (names.c,
 *                           applied by view.c and show); the last such
 *                           line of all the files read wins
 *
 * Regexes are POSIX extended (regcomp REG_EXTENDED), unanchored unless they
 * say ^ or $. A name runs through the rules top to bottom: replace rewrites
 * it, and drop/prune/root test the name as rewritten by the replace rules
 * above them, setting flags that view.c applies to stacks. rules_apply is
 * called once per distinct name (memoized by the caller), never per line of
 * output. A regex gets a required-literal prefilter (memmem) so names that
 * cannot match never reach regexec, which is quadratic on some patterns
 * (rules_regex.c finds it, and refuses the regexes regcomp cannot bear). */
#include "mpquery.h"
#include "rules.h"
#include "rules_internal.h"

#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

enum { RULE_REPLACE = 8 };     /* after rules.h's RULE_* flags, apart from them */

/* The longest line, newline not counted: a longer one is an error, and a
 * file is read no further than that (--rules /dev/zero ends at once). */
#define RULES_LINE_MAX 65536

struct rule {
    int kind;                   /* RULE_REPLACE, RULE_DROP, RULE_PRUNE, RULE_ROOT, RULE_HIDE */
    int thread;                 /* a `thread replace` line: applies to thread names only */
    regex_t re;
    char *text;                 /* replacement (replace only) */
    char *literal;              /* a substring every match contains, or NULL */
    size_t literal_len;
};

struct ruleset {
    struct rule *rules; size_t n, cap;
    int collapse_depth;         /* collapse-templates: DEPTH, -1 off (the default) */
};

struct ruleset *rules_new(void)
{
    struct ruleset *rs = xcalloc(1, sizeof *rs);
    rs->collapse_depth = -1;
    return rs;
}

int rules_collapse_depth(const struct ruleset *rs) { return rs ? rs->collapse_depth : -1; }

size_t rules_count(const struct ruleset *rs) { return rs->n; }

size_t rules_count_marks(const struct ruleset *rs)
{
    size_t n = 0;
    for (size_t i = 0; i < rs->n; i++)
        n += (rs->rules[i].kind & (RULE_DROP | RULE_PRUNE | RULE_ROOT)) && !rs->rules[i].thread;
    return n;
}

void rules_free(struct ruleset *rs)
{
    if (!rs) return;
    for (size_t i = 0; i < rs->n; i++) {
        regfree(&rs->rules[i].re);
        free(rs->rules[i].text);
        free(rs->rules[i].literal);
    }
    free(rs->rules);
    free(rs);
}

/* ---------------------------------------------------------------- parsing */
static int rule_error(char *err, size_t errlen, const char *where, const char *what, const char *arg)
{
    snprintf(err, errlen, "%s: %s%s%s%s", where, what, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
    return EXIT_BAD_INPUT;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) n--;
    s[n] = 0;
    return s;
}

/* Checks the replacement text's escapes against the regex's group count. */
static int check_text(const char *text, size_t ngroups, const char *where, char *err, size_t errlen)
{
    for (const char *t = text; *t; t++) {
        if (*t != '\\') continue;
        t++;
        if (*t == '\\') continue;
        if (*t >= '0' && *t <= '9') {
            if ((size_t)(*t - '0') > ngroups) {
                char what[96];
                snprintf(what, sizeof what, "back-reference \\%c but the regex has %zu group%s",
                         *t, ngroups, ngroups == 1 ? "" : "s");
                return rule_error(err, errlen, where, what, NULL);
            }
            continue;
        }
        return rule_error(err, errlen, where,
                          *t ? "unknown escape in replacement (use \\\\ for a backslash)"
                             : "replacement ends with a lone backslash", NULL);
    }
    return 0;
}

/* collapse-templates DEPTH|off: a whole number up to 1000 */
static int parse_collapse(struct ruleset *rs, const char *arg, const char *where, char *err, size_t errlen)
{
    int64_t depth;
    if (!strcmp(arg, "off")) {
        rs->collapse_depth = -1;
        return 0;
    }
    if (parse_int64(arg, &depth) || depth < 0 || depth > 1000)
        return rule_error(err, errlen, where, "collapse-templates needs a depth from 0 to 1000, or off:",
                          *arg ? arg : "(none)");
    rs->collapse_depth = (int)depth;
    return 0;
}

/* The first word of s, cut off with a NUL; returns the rest, trimmed. */
static char *cut_word(char *s)
{
    char *rest = s + strcspn(s, " \t");
    if (*rest) *rest++ = 0;
    return trim(rest);
}

/* r's kind from the keyword *line (after `thread`, the next word: *line
 * and *arg move past it). */
static int rule_kind(struct rule *r, char **line, char **arg, const char *where, char *err, size_t errlen)
{
    if (!strcmp(*line, "thread")) {
        r->thread = 1;
        *line = *arg;
        *arg = cut_word(*line);
        if (strcmp(*line, "replace"))
            return rule_error(err, errlen, where, "a thread rule can only replace (thread replace REGEX => TEXT):",
                              **line ? *line : "thread");
    }
    if (!strcmp(*line, "replace")) r->kind = RULE_REPLACE;
    else if (!strcmp(*line, "drop")) r->kind = RULE_DROP;
    else if (!strcmp(*line, "prune")) r->kind = RULE_PRUNE;
    else if (!strcmp(*line, "root")) r->kind = RULE_ROOT;
    else if (!strcmp(*line, "hide")) r->kind = RULE_HIDE;
    else return rule_error(err, errlen, where,
                           "unknown rule (expected replace, drop, prune, root, hide or collapse-templates):",
                           *line);
    return 0;
}

/* REGEX => TEXT: the regex stays in *arg (trimmed), *text is the TEXT. */
static int split_replace(char **arg, char **text, const char *where, char *err, size_t errlen)
{
    char *arrow = NULL;
    for (char *a = *arg; (a = strstr(a, "=>")); a++) {
        if ((a == *arg || a[-1] == ' ' || a[-1] == '\t') && (!a[2] || a[2] == ' ' || a[2] == '\t')) {
            arrow = a;
            break;
        }
    }
    if (!arrow) return rule_error(err, errlen, where, "replace needs 'REGEX => TEXT'", NULL);
    *arrow = 0;
    *text = trim(arrow + 2);
    *arg = trim(*arg);
    return 0;
}

/* The regex re compiled into r (refused first when regcomp could not
 * bear it), the replacement text checked and copied, the prefilter's
 * literal found. */
static int compile_rule(struct rule *r, const char *re, const char *text, const char *where, char *err,
                        size_t errlen)
{
    const char *refused = rules_regex_refused(re);
    if (refused) return rule_error(err, errlen, where, refused, re);
    int rc = regcomp(&r->re, re, REG_EXTENDED | (r->kind == RULE_REPLACE ? 0 : REG_NOSUB));
    if (rc) {
        char msg[256], what[512];
        regerror(rc, &r->re, msg, sizeof msg);
        snprintf(what, sizeof what, "bad regex (%s):", msg);
        return rule_error(err, errlen, where, what, re);
    }
    if (text && (rc = check_text(text, r->re.re_nsub, where, err, errlen))) {
        regfree(&r->re);
        return rc;
    }
    r->text = text ? xstrdup(text) : NULL;
    r->literal = rules_required_literal(re, &r->literal_len);
    return 0;
}

static int parse_rule(struct ruleset *rs, char *line, const char *where, char *err, size_t errlen)
{
    /* comments: '#' at the start or after whitespace */
    for (char *h = line; (h = strchr(h, '#')); h++) {
        if (h == line || h[-1] == ' ' || h[-1] == '\t') { *h = 0; break; }
    }
    line = trim(line);
    if (!*line) return 0;
    char *arg = cut_word(line), *text = NULL;
    if (!strcmp(line, "collapse-templates")) return parse_collapse(rs, arg, where, err, errlen);
    struct rule r = { 0 };
    int rc = rule_kind(&r, &line, &arg, where, err, errlen);
    if (!rc && r.kind == RULE_REPLACE) rc = split_replace(&arg, &text, where, err, errlen);
    if (rc) return rc;
    if (!*arg) return rule_error(err, errlen, where, "missing regex after", line);
    if ((rc = compile_rule(&r, arg, text, where, err, errlen))) return rc;
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? rs->cap * 2 : 32;
        rs->rules = xrealloc(rs->rules, rs->cap * sizeof *rs->rules);
    }
    rs->rules[rs->n++] = r;
    return 0;
}

/* One line as read (with its newline, n bytes, NUL-terminated); NAME:LINENO
 * locates errors. */
static int parse_line(struct ruleset *rs, char *line, size_t n, const char *name,
                      unsigned lineno, char *err, size_t errlen)
{
    char where[4200];
    snprintf(where, sizeof where, "%s:%u", name, lineno);
    if (n - (n && line[n - 1] == '\n') > RULES_LINE_MAX) {
        char what[64];
        snprintf(what, sizeof what, "line longer than %d bytes", RULES_LINE_MAX);
        return rule_error(err, errlen, where, what, NULL);
    }
    if (memchr(line, 0, n))
        return rule_error(err, errlen, where, "binary data (NUL byte), not a rules file", NULL);
    return parse_rule(rs, line, where, err, errlen);
}

/* Reads a line with its newline into line (at most cap bytes: a longer
 * line comes back cut, for parse_line to refuse); returns its length, 0 at
 * the end of the file. */
static size_t read_line(FILE *f, char *line, size_t cap)
{
    size_t n = 0;
    int c;
    while (n < cap && (c = getc_unlocked(f)) != EOF) {
        line[n++] = (char)c;
        if (c == '\n') break;
    }
    line[n] = 0;
    return n;
}

int rules_load(struct ruleset *rs, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); return EXIT_BAD_INPUT; }
    char *line = xmalloc(RULES_LINE_MAX + 3);    /* one byte more than a line may have, '\n', NUL */
    size_t n;
    int rc = 0;
    for (unsigned lineno = 1; !rc && (n = read_line(f, line, RULES_LINE_MAX + 2)) > 0; lineno++)
        rc = parse_line(rs, line, n, path, lineno, err, errlen);
    if (!rc && ferror(f)) rc = rule_error(err, errlen, path, strerror(errno), NULL);
    free(line);
    fclose(f);
    return rc;
}

int rules_parse(struct ruleset *rs, const char *text, size_t len, const char *name,
                char *err, size_t errlen)
{
    char *line = NULL;
    int rc = 0;
    unsigned lineno = 1;
    for (size_t pos = 0; pos < len && !rc; lineno++) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - text) + 1 - pos : len - pos;
        line = xrealloc(line, n + 1);
        memcpy(line, text + pos, n);
        line[n] = 0;
        rc = parse_line(rs, line, n, name, lineno, err, errlen);
        pos += n;
    }
    free(line);
    return rc;
}

/* ---------------------------------------------------------------- applying */
static int may_match(const struct rule *r, const char *s, size_t n)
{
    return !r->literal || memmem(s, n, r->literal, r->literal_len);
}

static void expand(const struct rule *r, const char *s, const regmatch_t *m, struct strbuf *out)
{
    for (const char *t = r->text; *t; t++) {
        if (*t != '\\') { sb_putc(out, *t); continue; }
        t++;
        if (*t == '\\') { sb_putc(out, '\\'); continue; }
        const regmatch_t *g = &m[*t - '0'];
        if (g->rm_so >= 0) sb_add(out, s + g->rm_so, (size_t)(g->rm_eo - g->rm_so));
    }
}

/* All non-overlapping matches, left to right (as sed's s///g): an empty
 * match copies one character and moves on, and an empty match right where
 * the previous match ended does not count. Returns 1 when anything matched. */
static int replace_all(const struct rule *r, const char *s, size_t n, struct strbuf *out)
{
    regmatch_t m[10];
    size_t pos = 0, last_end = (size_t)-1;
    int any = 0;
    out->len = 0;
    sb_add(out, "", 0);
    while (pos <= n) {
        m[0].rm_so = (regoff_t)pos;
        m[0].rm_eo = (regoff_t)n;
        if (regexec(&r->re, s, 10, m, REG_STARTEND) != 0) break;
        size_t so = (size_t)m[0].rm_so, eo = (size_t)m[0].rm_eo;
        sb_add(out, s + pos, so - pos);
        if (eo == so && so == last_end) {
            if (so < n) sb_putc(out, s[so]);
            pos = so + 1;
            continue;
        }
        any = 1;
        expand(r, s, m, out);
        last_end = eo;
        if (eo == so) {
            if (so < n) sb_putc(out, s[so]);
            pos = so + 1;
        } else {
            pos = eo;
        }
    }
    if (pos < n) sb_add(out, s + pos, n - pos);
    return any;
}

unsigned rules_apply(const struct ruleset *rs, const char *name, size_t len, struct strbuf *out)
{
    struct strbuf tmp = { 0 };
    unsigned flags = 0;
    out->len = 0;
    sb_add(out, name, len);
    for (size_t i = 0; rs && i < rs->n; i++) {
        const struct rule *r = &rs->rules[i];
        if (r->thread || !may_match(r, out->s, out->len)) continue;
        if (r->kind == RULE_REPLACE) {
            if (replace_all(r, out->s, out->len, &tmp)) {
                struct strbuf x = *out;
                *out = tmp;
                tmp = x;
            }
            continue;
        }
        if (flags & r->kind) continue;
        regmatch_t m[1] = { { 0, (regoff_t)out->len } };
        if (regexec(&r->re, out->s, 1, m, REG_STARTEND) == 0) flags |= (unsigned)r->kind;
    }
    sb_free(&tmp);
    return flags;
}

void rules_apply_thread(const struct ruleset *rs, const char *name, size_t len, struct strbuf *out)
{
    struct strbuf tmp = { 0 };
    out->len = 0;
    sb_add(out, name, len);
    for (size_t i = 0; rs && i < rs->n; i++) {
        const struct rule *r = &rs->rules[i];
        if (!r->thread || !may_match(r, out->s, out->len)) continue;
        if (replace_all(r, out->s, out->len, &tmp)) {
            struct strbuf x = *out;
            *out = tmp;
            tmp = x;
        }
    }
    sb_free(&tmp);
}
