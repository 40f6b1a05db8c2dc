/* Parsers of the MP_* values (optdefs.h), shared by the recorder, which
 * runs them at start inside the first allocation (nothing here allocates),
 * and by mpquery record. */
#define _GNU_SOURCE
#include "optdefs.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_long(const char *s, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end) return -1;
    *v = x;
    return 0;
}

/* Sizes: a number of bytes, whole or with a fraction, with an optional
 * unit in powers of 1024 (K, M, G, T; "KB", "KiB" and lower case too):
 * 4096, 64K, 1.5M, 2GiB. Exported: every size a user gives goes here. */
int mp_parse_size(const char *s, uint64_t *v)
{
    static const char units[] = "KMGT";
    char *end;
    errno = 0;
    if (*s == '-' || *s == '+' || !*s || *s == ' ') return -1;
    double x = strtod(s, &end);
    if (errno || end == s || !(x >= 0)) return -1;
    const char *u = *end ? strchr(units, *end & ~0x20) : NULL;
    double scale = 1;
    if (u) {
        for (const char *k = units; k <= u; k++) scale *= 1024;
        end++;
        if (*end == 'i' && end[1] == 'B') end += 2;
        else if (*end == 'B' || *end == 'b') end++;
    } else if (*end == 'B' || *end == 'b') {
        end++;
    }
    if (*end) return -1;
    x *= scale;
    if (x >= 18446744073709551616.0 || x != (double)(uint64_t)x) return -1;   /* too large, or not whole bytes */
    *v = (uint64_t)x;
    return 0;
}

/* Durations: seconds, whole or with a fraction, with an optional unit
 * (ns, us, ms, s, m or min, h, d): 0.5, 250ms, 10s, 2m, 1h, 1d. */
int mp_parse_duration(const char *s, double *sec)
{
    static const struct { const char *name; double sec; } units[] = {
        { "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1 }, { "m", 60 }, { "min", 60 },
        { "h", 3600 }, { "d", 86400 }, { "", 1 },
    };
    char *end;
    errno = 0;
    if (*s == '-' || *s == '+' || !*s || *s == ' ') return -1;
    double x = strtod(s, &end);
    if (errno || end == s || !(x >= 0) || !(x < 1e300)) return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].name)) return *sec = x * units[i].sec, 0;
    return -1;
}

int mp_setting_value(const char *settings, const char *name, char *value, size_t size)
{
    size_t n = strlen(name);
    for (const char *s = settings; s && (s = strstr(s, name)); s += n) {
        if ((s != settings && s[-1] != ' ' && s[-1] != '\n') || s[n] != '=') continue;
        const char *v = s + n + 1;
        size_t len = strcspn(v, " \n");
        if (len >= size) return -1;
        memcpy(value, v, len);
        value[len] = 0;
        return 0;
    }
    return -1;
}

/* A relative path is made absolute now, for children that chdir. */
static int parse_path(const char *s, char *out, size_t size)
{
    if (!*s) return -1;
    if (s[0] == '/') {
        if (strlen(s) >= size) return -1;
        strcpy(out, s);
        return 0;
    }
    char cwd[2048];
    if (!getcwd(cwd, sizeof cwd)) return -1;
    size_t lc = strlen(cwd), ls = strlen(s);
    if (lc + 1 + ls >= size) return -1;
    memcpy(out, cwd, lc);
    out[lc] = '/';
    memcpy(out + lc + 1, s, ls + 1);
    return 0;
}

static int parse_signal(const char *s, int *sig)
{
    static const struct { const char *name; int sig; } names[] = {
        { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP },
        { "PROF", SIGPROF }, { "URG", SIGURG }, { "WINCH", SIGWINCH },
    };
    if (!strncmp(s, "SIG", 3)) s += 3;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name)) return *sig = names[i].sig, 0;
    long v;
    if (parse_long(s, &v) || v < 1 || v >= NSIG || v == SIGKILL || v == SIGSTOP) return -1;
    *sig = (int)v;
    return 0;
}

static int parse_word(const char *s, const char *const *words, int n, int *v)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, words[i])) return *v = i, 0;
    return -1;
}

static int parse_ranged(const char *s, long lo, long hi, int *v)
{
    long x;
    if (parse_long(s, &x) || x < lo || x > hi) return -1;
    *v = (int)x;
    return 0;
}

/* "80,90,95": up to MP_PERCENTS_MAX whole percentages 1..99, in any
 * order, stored ascending without repeats; "0" or "off": none. */
static int parse_percents(const char *s, unsigned char *out)
{
    unsigned char v[MP_PERCENTS_MAX] = { 0 };
    int n = 0;
    if (!strcmp(s, "0") || !strcmp(s, "off")) return memcpy(out, v, sizeof v), 0;
    for (const char *p = s;; p++) {
        char num[4];
        size_t len = strcspn(p, ",");
        long x;
        if (len == 0 || len >= sizeof num || n == MP_PERCENTS_MAX) return -1;
        memcpy(num, p, len);
        num[len] = 0;
        if (parse_long(num, &x) || x < 1 || x > 99) return -1;
        int i = n++;
        for (; i > 0 && v[i - 1] > x; i--) v[i] = v[i - 1];     /* insertion: ascending */
        if (i > 0 && v[i - 1] == x) return -1;                  /* said twice */
        v[i] = (unsigned char)x;
        p += len;
        if (!*p) break;
    }
    memcpy(out, v, sizeof v);
    return 0;
}

int mp_option_parse(enum mp_option_kind kind, const char *s, void *dst, size_t size)
{
    static const char *const unwinders[] = { [UNWIND_LIBUNWIND] = "libunwind", [UNWIND_FP] = "fp", [UNWIND_CFI] = "cfi" };
    static const char *const stacks[] = { [STACKS_UNWIND] = "unwind", [STACKS_TAGS] = "tags", [STACKS_NONE] = "none" };
    static const char *const bools[] = { "0", "1", "no", "yes", "off", "on" };    /* false, true in turn */
    switch (kind) {
    case VAL_PATH: return parse_path(s, dst, size);
    case VAL_TEXT:
        if (strlen(s) >= size) return -1;
        strcpy(dst, s);
        return 0;
    case VAL_SECONDS: {
        double x;
        if (mp_parse_duration(s, &x) || x > 1e7) return -1;
        *(double *)dst = x;
        return 0;
    }
    case VAL_DEPTH: return parse_ranged(s, 1, 1024, dst);
    case VAL_TIMEOUT: return parse_ranged(s, 1, 3600, dst);
    case VAL_LONG: return parse_long(s, dst);
    case VAL_SIZE: return mp_parse_size(s, dst);
    case VAL_MEMORY: {
        uint64_t v;
        if (mp_parse_size(s, &v) || v < (16u << 20)) return -1;
        *(uint64_t *)dst = v;
        return 0;
    }
    case VAL_BOOL:
        if (parse_word(s, bools, 6, dst)) return -1;
        *(int *)dst %= 2;
        return 0;
    case VAL_SIGNAL: return parse_signal(s, dst);
    case VAL_UNWIND: return parse_word(s, unwinders, 3, dst);
    case VAL_STACKS: return parse_word(s, stacks, 3, dst);
    case VAL_PERCENTS: return size < MP_PERCENTS_MAX ? -1 : parse_percents(s, dst);
    }
    return -1;
}

/* Appends n bytes of s at out[*len]; -1 when they do not fit. */
static int put(char *out, size_t size, size_t *len, const char *s, size_t n)
{
    if (*len + n >= size) return -1;
    memcpy(out + *len, s, n);
    *len += n;
    return 0;
}

int mp_out_expand(const char *pattern, const struct mp_out_values *v, char *out, size_t size, char *unknown)
{
    size_t len = 0;
    *unknown = 0;
    for (const char *p = pattern; *p; p++) {
        char num[32];
        const char *s = p;
        size_t n = 1;
        if (*p == '%') {
            char c = p[1];
            if (c == 'p' || c == 't') n = (size_t)snprintf(num, sizeof num, "%ld", c == 'p' ? v->pid : v->start), s = num;
            else if (c == 'e' || c == 'h') s = c == 'e' ? v->exe : v->host, n = strlen(s);
            else if (c == '%') s = "%";
            else if (!*unknown) *unknown = c ? c : '%';
            if (s != p) p++;    /* a known placeholder: both characters read */
        }
        if (put(out, size, &len, s, n)) return -1;
    }
    out[len] = 0;
    return 0;
}
