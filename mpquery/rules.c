/* The rules language (filters/README.md): one rule a line, applied in order.
 *
 *   replace REGEX => TEXT   rewrite every non-overlapping match (once per rule,
 *                           left to right; \1..\9 insert groups, \0 the whole
 *                           match, \\ a backslash)
 *   drop REGEX              remove matching frames
 *   prune REGEX             cut the callees of the first (outermost) match
 *   root REGEX              cut the callers of the last (innermost) match
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
 * cannot match never reach regexec, which is quadratic on some patterns. */
#include "mpquery.h"
#include "rules.h"

#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

enum { RULE_REPLACE = 8 };

/* The longest line, newline not counted: a longer one is an error, and a
 * file is read no further than that (--rules /dev/zero ends at once). */
#define RULES_LINE_MAX 65536

struct rule {
    int kind;                   /* RULE_REPLACE, RULE_DROP, RULE_PRUNE, RULE_ROOT */
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
    for (size_t i = 0; i < rs->n; i++) n += rs->rules[i].kind != RULE_REPLACE && !rs->rules[i].thread;
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

/* ---------------------------------------------------------------- prefilter */
static int is_special(char c) { return c && strchr(".[]()*+?{}|^$\\", c); }

/* Skips a bracket expression starting at re[i] == '['; returns the index
 * after its ']' or 0 when unterminated. */
static size_t skip_bracket(const char *re, size_t i)
{
    i++;
    if (re[i] == '^') i++;
    if (re[i] == ']') i++;
    for (; re[i]; i++) {
        if (re[i] == '[' && (re[i + 1] == ':' || re[i + 1] == '.' || re[i + 1] == '=')) {
            char close = re[i + 1];
            const char *end = strchr(re + i + 2, close);
            while (end && end[1] != ']') end = strchr(end + 1, close);
            if (!end) return 0;
            i = (size_t)(end - re) + 1;
        } else if (re[i] == ']') {
            return i + 1;
        }
    }
    return 0;
}

/* The longest run of characters that every match must contain, found only
 * where that is certain (top-level sequence, no top-level '|'). */
static void required_literal(const char *re, struct rule *r)
{
    size_t n = strlen(re), best_at = 0, best_len = 0;
    char *run = xmalloc(n + 1), *best = xmalloc(n + 1);
    size_t len = 0;
#define END_RUN() do { if (len > best_len) { memcpy(best, run, len); best_len = len; } len = 0; } while (0)
    for (size_t i = 0; i < n;) {
        char c = re[i];
        if (c == '|') { best_len = 0; len = 0; goto done; }
        if (c == '(') {
            END_RUN();
            int depth = 0;
            for (; i < n; i++) {
                if (re[i] == '\\') { i++; continue; }
                if (re[i] == '[') { size_t j = skip_bracket(re, i); if (!j) goto abort; i = j - 1; continue; }
                if (re[i] == '(') depth++;
                if (re[i] == ')' && --depth == 0) break;
            }
            if (i >= n) goto abort;
            i++;
            continue;
        }
        if (c == '[') {
            END_RUN();
            size_t j = skip_bracket(re, i);
            if (!j) goto abort;
            i = j;
            continue;
        }
        if (c == '*' || c == '+' || c == '?') { END_RUN(); i++; continue; }
        if (c == '{') {
            END_RUN();
            const char *end = strchr(re + i, '}');
            if (!end) goto abort;
            i = (size_t)(end - re) + 1;
            continue;
        }
        if (c == '.' || c == '^' || c == '$' || c == ')') { END_RUN(); i++; continue; }
        char lit = c;
        size_t next = i + 1;
        if (c == '\\') {
            if (!is_special(re[i + 1])) { END_RUN(); i += 2; continue; }   /* \1, \w, \b ... */
            lit = re[i + 1];
            next = i + 2;
        }
        char q = re[next];
        if (q == '*' || q == '?' || q == '{') { END_RUN(); i = next; continue; }
        run[len++] = lit;
        if (q == '+') { END_RUN(); next++; }
        i = next;
    }
    END_RUN();
#undef END_RUN
done:
    (void)best_at;
    if (best_len > 0) {
        r->literal = xmalloc(best_len + 1);
        memcpy(r->literal, best, best_len);
        r->literal[best_len] = 0;
        r->literal_len = best_len;
    }
abort:
    free(run);
    free(best);
}

/* ---------------------------------------------------------------- limits */
/* Regexes glibc's regcomp cannot compile in bounded time, memory or stack,
 * or whose matching can take minutes, are refused before it sees them.
 * regcomp copies a repeated subexpression ('+' once more, {n,m} m times),
 * so stacked repetitions grow exponentially (a++++...: gigabytes);
 * repeating with '+' or {n,m} what can match the empty string is
 * exponential in its epsilon closures (((a?|b?)+){30}: minutes) and,
 * copied, quadratic ((a?){4000}: a gigabyte); and it recurses once per
 * group level (30000 nested groups overflow the stack). A back-reference
 * makes regexec backtrack: ([a-z]*)([a-z]*)\2\1x takes 1 s on a name of 100
 * letters, 30 s on 200, and even std::vector<([^<>]+), std::allocator<\1 ?> >
 * 13 s on a 30 KB name. */
#define REGEX_MAX_NODES 2000        /* a{0,1999}: 0.15 s in regcomp */
#define REGEX_MAX_DEPTH 100

struct sizer { const char *s; size_t depth; const char *why; };

static size_t cap(size_t n) { return n > REGEX_MAX_NODES ? REGEX_MAX_NODES + 1 : n; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* A decimal number at *s (capped), advancing *s; 0 when there is none. */
static size_t bound(const char **s)
{
    size_t n = 0;
    for (; is_digit(**s); (*s)++) n = cap(n * 10 + (size_t)(**s - '0'));
    return n;
}

static void refuse(struct sizer *z, const char *why)
{
    if (!z->why) z->why = why;
    z->s += strlen(z->s);                       /* stop parsing */
}

static size_t size_alt(struct sizer *z, int *nullable);

/* Nodes of one atom with its repetition operators (stacked ones too);
 * *nullable: it can match the empty string. */
static size_t size_piece(struct sizer *z, int *nullable)
{
    const char *s = z->s;
    size_t n = 1;
    *nullable = 0;
    if (*s == '(') {
        if (z->depth == REGEX_MAX_DEPTH) {
            refuse(z, "regex nests groups more than 100 deep:");
            return 0;
        }
        z->depth++;
        z->s = s + 1;
        n = cap(size_alt(z, nullable) + 1);
        z->depth--;
        s = z->s + (*z->s == ')');
    } else if (*s == '[') {
        size_t end = skip_bracket(s, 0);
        s += end ? end : strlen(s);
    } else if (*s == '\\' && s[1] >= '1' && s[1] <= '9') {
        z->s = s + 2;
        refuse(z, "back-references (\\1 to \\9) are not supported in a regex (glibc's matching of one "
                  "can take minutes on a long name):");
        return 0;
    } else if (*s == '\\' && s[1]) {
        *nullable = s[1] == '0' || strchr("bB<>`'", s[1]);     /* \0 (a literal 0 for glibc), anchor */
        s += 2;
    } else {
        *nullable = *s == '^' || *s == '$';
        s++;
    }
    for (;;) {
        size_t lo = 1, hi;
        if (*s == '*' || *s == '?') {
            lo = 0, hi = 1;
            s++;
        } else if (*s == '+') {
            hi = 2;
            s++;
        } else if (*s == '{' && (is_digit(s[1]) || s[1] == ',')) {
            const char *t = s + 1;
            lo = hi = bound(&t);
            if (*t == ',') { t++; hi = is_digit(*t) ? bound(&t) : lo + 1; }
            if (*t != '}') break;               /* not a bound: regcomp decides */
            s = t + 1;
        } else {
            break;
        }
        if (hi > 1 && *nullable) {
            z->s = s;
            refuse(z, "regex repeats with + or {n,m} what can match the empty string (use * or ?):");
            return 0;
        }
        n = cap(n * (hi ? hi : 1) + 1);
        *nullable = *nullable || lo == 0;
    }
    z->s = s;
    return n;
}

static size_t size_alt(struct sizer *z, int *nullable)
{
    size_t n = 0;
    int seq_nullable = 1, piece_nullable;
    *nullable = 0;
    for (;;) {
        while (*z->s && *z->s != '|' && *z->s != ')') {
            n = cap(n + size_piece(z, &piece_nullable));
            seq_nullable &= piece_nullable;
        }
        *nullable |= seq_nullable;
        if (*z->s != '|') return n;
        z->s++;
        n = cap(n + 1);
        seq_nullable = 1;
    }
}

/* NULL when glibc can compile re in bounded time, memory and stack, else
 * why not. */
static const char *regex_refused(const char *re)
{
    struct sizer z = { .s = re };
    size_t n = 0;
    int nullable;
    for (;;) {
        n = cap(n + size_alt(&z, &nullable));
        if (!*z.s) break;
        z.s++;                                  /* an unmatched ')' */
    }
    if (z.why) return z.why;
    if (n > REGEX_MAX_NODES) return "regex too large once its repetitions are expanded (over 2000 elements):";
    return NULL;
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

static int parse_rule(struct ruleset *rs, char *line, const char *where, char *err, size_t errlen)
{
    /* comments: '#' at the start or after whitespace */
    for (char *h = line; (h = strchr(h, '#')); h++) {
        if (h == line || h[-1] == ' ' || h[-1] == '\t') { *h = 0; break; }
    }
    line = trim(line);
    if (!*line) return 0;
    char *arg = line + strcspn(line, " \t");
    if (*arg) *arg++ = 0;
    arg = trim(arg);

    if (!strcmp(line, "collapse-templates")) return parse_collapse(rs, arg, where, err, errlen);
    struct rule r = { 0 };
    char *text = NULL;
    if (!strcmp(line, "thread")) {
        r.thread = 1;
        line = arg;
        arg = line + strcspn(line, " \t");
        if (*arg) *arg++ = 0;
        arg = trim(arg);
        if (strcmp(line, "replace"))
            return rule_error(err, errlen, where, "a thread rule can only replace (thread replace REGEX => TEXT):",
                              *line ? line : "thread");
    }
    if (!strcmp(line, "replace")) r.kind = RULE_REPLACE;
    else if (!strcmp(line, "drop")) r.kind = RULE_DROP;
    else if (!strcmp(line, "prune")) r.kind = RULE_PRUNE;
    else if (!strcmp(line, "root")) r.kind = RULE_ROOT;
    else return rule_error(err, errlen, where,
                           "unknown rule (expected replace, drop, prune, root or collapse-templates):", line);

    if (r.kind == RULE_REPLACE) {
        char *arrow = NULL;
        for (char *a = arg; (a = strstr(a, "=>")); a++) {
            if ((a == arg || a[-1] == ' ' || a[-1] == '\t') && (!a[2] || a[2] == ' ' || a[2] == '\t')) {
                arrow = a;
                break;
            }
        }
        if (!arrow) return rule_error(err, errlen, where, "replace needs 'REGEX => TEXT'", NULL);
        *arrow = 0;
        text = trim(arrow + 2);
        arg = trim(arg);
    }
    if (!*arg) return rule_error(err, errlen, where, "missing regex after", line);

    const char *refused = regex_refused(arg);
    if (refused) return rule_error(err, errlen, where, refused, arg);
    int rc = regcomp(&r.re, arg, REG_EXTENDED | (r.kind == RULE_REPLACE ? 0 : REG_NOSUB));
    if (rc) {
        char msg[256], what[512];
        regerror(rc, &r.re, msg, sizeof msg);
        snprintf(what, sizeof what, "bad regex (%s):", msg);
        return rule_error(err, errlen, where, what, arg);
    }
    if (text && (rc = check_text(text, r.re.re_nsub, where, err, errlen))) {
        regfree(&r.re);
        return rc;
    }
    r.text = text ? xstrdup(text) : NULL;
    required_literal(arg, &r);
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
