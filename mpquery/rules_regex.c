/* A rule's regex looked at before regcomp sees it: the required literal
 * its matches contain (the memmem prefilter of rules_apply), and the
 * regexes refused because glibc cannot compile or run them in bounded
 * time, memory or stack (every regex a user gives: rules, --filter,
 * --exclude, --thread, mpquery live's filter). Only reads the regex text;
 * no regcomp here. */
#include "mpquery.h"
#include "rules.h"
#include "rules_internal.h"

#include <stdlib.h>
#include <string.h>

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

/* The end of the group opening at re[i] == '(', or 0 when it does not
 * close. */
static size_t skip_group(const char *re, size_t i, size_t n)
{
    int depth = 0;
    for (; i < n; i++) {
        if (re[i] == '\\') { i++; continue; }
        if (re[i] == '[') { size_t j = skip_bracket(re, i); if (!j) return 0; i = j - 1; continue; }
        if (re[i] == '(') depth++;
        if (re[i] == ')' && --depth == 0) return i + 1;
    }
    return 0;
}

/* At re[i], what is not a literal character: a group, a bracket, a
 * repetition, an anchor, an escape that is not a literal (\1, \w, \b ...).
 * 1 with *i past it, 0 for a literal, -1 when the regex is malformed. */
static int skip_nonliteral(const char *re, size_t n, size_t *i)
{
    char c = re[*i];
    size_t next;
    if (c == '(') next = skip_group(re, *i, n);
    else if (c == '[') next = skip_bracket(re, *i);
    else if (c == '{') { const char *end = strchr(re + *i, '}'); next = end ? (size_t)(end - re) + 1 : 0; }
    else if (strchr("*+?.^$)", c)) next = *i + 1;
    else if (c == '\\' && !is_special(re[*i + 1])) next = *i + 2;
    else return 0;
    if (!next) return -1;
    *i = next;
    return 1;
}

char *rules_required_literal(const char *re, size_t *len_out)
{
    size_t n = strlen(re), best_len = 0, len = 0;
    char *run = xmalloc(n + 1), *best = xmalloc(n + 1), *literal = NULL;
#define END_RUN() do { if (len > best_len) { memcpy(best, run, len); best_len = len; } len = 0; } while (0)
    for (size_t i = 0; i < n;) {
        if (re[i] == '|') goto done;                /* an alternative: nothing is certain */
        int skipped = skip_nonliteral(re, n, &i);
        if (skipped < 0) goto done;
        if (skipped) { END_RUN(); continue; }
        char lit = re[i];
        size_t next = i + 1;
        if (lit == '\\') {                          /* an escaped special character */
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
    if (best_len > 0) {
        literal = xmalloc(best_len + 1);
        memcpy(literal, best, best_len);
        literal[best_len] = 0;
        *len_out = best_len;
    }
done:
    free(run);
    free(best);
    return literal;
}

/* ---------------------------------------------------------------- limits */
/* Regexes glibc's regcomp cannot compile in bounded time, memory or stack,
 * or whose matching can take minutes, are refused before it sees them.
 * regcomp copies a repeated subexpression ('+' once more, {n,m} m times),
 * so stacked repetitions grow exponentially (a++++...: gigabytes);
 * repeating with '+' or {n,m} what can match the empty string is
 * exponential in its epsilon closures (((a?|b?)+){30}: minutes) and,
 * copied, quadratic ((a?){4000}: a gigabyte); and it recurses once per
 * group level (30000 nested groups overflow the stack). A '*' over what
 * can already match the empty string adds a level to its closures: nested
 * or stacked (^_**** or ((_*)*)*), 50 levels take 0.3-0.6 s in regcomp,
 * 100 levels 3-15 s (found by the fuzzer); such pieces in a row add up
 * after an anchor (^(a*)*(a*)*...: 1.2 s for 20, 21 s for 24). A
 * back-reference
 * makes regexec backtrack: ([a-z]*)([a-z]*)\2\1x takes 1 s on a name of 100
 * letters, 30 s on 200, and even std::vector<([^<>]+), std::allocator<\1 ?> >
 * 13 s on a 30 KB name. */
#define REGEX_MAX_NODES 2000        /* a{0,1999}: 0.15 s in regcomp */
#define REGEX_MAX_DEPTH 100
#define REGEX_MAX_NULLABLE_STARS 10

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

static size_t size_alt(struct sizer *z, int *nullable, int *stars);

/* The repetition operator at *sp ('*', '?', '+', {n}, {n,}, {n,m}): its
 * least count, its most (2 for "more than one", 1 with *unbounded for
 * '*'), *sp past it; 0 when there is none. */
static int repetition(const char **sp, size_t *lo, size_t *hi, int *unbounded)
{
    const char *s = *sp;
    *lo = 1, *hi = 1, *unbounded = 0;
    if (*s == '*' || *s == '?') {
        *lo = 0, *hi = 1, *unbounded = *s == '*';
        s++;
    } else if (*s == '+') {
        *hi = 2;
        s++;
    } else if (*s == '{' && (is_digit(s[1]) || s[1] == ',')) {
        const char *t = s + 1;
        *lo = *hi = bound(&t);
        if (*t == ',') {
            t++;
            *unbounded = !is_digit(*t);
            *hi = *unbounded ? *lo + 1 : bound(&t);
        }
        if (*t != '}') return 0;                /* not a bound: regcomp decides */
        s = t + 1;
    } else {
        return 0;
    }
    *sp = s;
    return 1;
}

/* Nodes of one atom with its repetition operators (stacked ones too);
 * *nullable: it can match the empty string; *stars: the levels of '*' (or
 * {n,}) over what could already match it, nested, stacked or in a row
 * (size_alt). */
static size_t size_piece(struct sizer *z, int *nullable, int *stars)
{
    const char *s = z->s;
    size_t n = 1;
    *nullable = 0;
    *stars = 0;
    if (*s == '(') {
        if (z->depth == REGEX_MAX_DEPTH) {
            refuse(z, "regex nests groups more than 100 deep:");
            return 0;
        }
        z->depth++;
        z->s = s + 1;
        n = cap(size_alt(z, nullable, stars) + 1);
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
        size_t lo, hi;
        int unbounded;
        if (!repetition(&s, &lo, &hi, &unbounded)) break;
        if (hi > 1 && *nullable) {
            z->s = s;
            refuse(z, "regex repeats with + or {n,m} what can match the empty string (use * or ?):");
            return 0;
        }
        if (unbounded && *nullable) ++*stars;     /* size_alt refuses too many */
        n = cap(n * (hi ? hi : 1) + 1);
        *nullable = *nullable || lo == 0;
    }
    z->s = s;
    return n;
}

static size_t size_alt(struct sizer *z, int *nullable, int *stars)
{
    size_t n = 0;
    int seq_nullable = 1, piece_nullable, piece_stars, run = 0;
    *nullable = 0;
    *stars = 0;
    for (;;) {
        while (*z->s && *z->s != '|' && *z->s != ')') {
            n = cap(n + size_piece(z, &piece_nullable, &piece_stars));
            seq_nullable &= piece_nullable;
            /* pieces in a row that can match the empty string add up (^(a*)*(a*)*...: 20 of them 1.2 s,
             * 24 21 s); one that cannot starts a new row */
            run = piece_nullable ? run + piece_stars : piece_stars;
            if (run > *stars) *stars = run;
            if (*stars > REGEX_MAX_NULLABLE_STARS) {
                refuse(z, "regex repeats with '*' what can match the empty string more than 10 levels deep "
                          "(as in a***, ((a*)*)* or (a*)*(a*)*...):");
                return 0;
            }
        }
        *nullable |= seq_nullable;
        if (*z->s != '|') return n;
        z->s++;
        n = cap(n + 1);
        seq_nullable = 1, run = 0;
    }
}

const char *rules_regex_refused(const char *re)
{
    struct sizer z = { .s = re };
    size_t n = 0;
    int nullable, stars;
    for (;;) {
        n = cap(n + size_alt(&z, &nullable, &stars));
        if (!*z.s) break;
        z.s++;                                  /* an unmatched ')' */
    }
    if (z.why) return z.why;
    if (n > REGEX_MAX_NODES) return "regex too large once its repetitions are expanded (over 2000 elements):";
    return NULL;
}
