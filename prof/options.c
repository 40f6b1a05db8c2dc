/* MP_* environment variables: one table (name, default, parser, help).
 * A bad value is reported once on stderr, naming the variable and the
 * default used instead; the program runs on. Runs once at initialization,
 * with the profiler marked internal (getenv and friends do not allocate). */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct mp_options mp_opt;

/* Messages go to the stderr the process started with, and only there: a
 * program that closed fd 2 and opened its own file there must not find our
 * lines in it. */
static dev_t log_dev;
static ino_t log_ino;
static int log_ok;

void mp_log_init(void)
{
    struct stat st;
    log_ok = fstat(2, &st) == 0;
    log_dev = st.st_dev;
    log_ino = st.st_ino;
}

void mp_log(const char *level, const char *fmt, ...)
{
    struct stat st;
    if (!log_ok || fstat(2, &st) != 0 || st.st_dev != log_dev || st.st_ino != log_ino) return;
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "mallocprof: %s: ", level);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
    va_end(ap);
    n += m < 0 ? 0 : (m > (int)(sizeof buf - n - 2) ? (int)(sizeof buf - n - 2) : m);
    buf[n++] = '\n';
    ssize_t w = write(2, buf, n);
    (void)w;
}

/* A parser stores the value of `text` and returns 0, or returns -1. */
typedef int (*opt_parser)(const char *text, void *dst);

static int parse_long(const char *s, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end) return -1;
    *v = x;
    return 0;
}

static int parse_path(const char *s, void *dst)
{
    char *out = dst;
    if (!*s) return -1;
    if (s[0] == '/') {
        if (strlen(s) >= sizeof mp_opt.out) return -1;
        strcpy(out, s);
        return 0;
    }
    char cwd[2048];
    if (!getcwd(cwd, sizeof cwd)) return -1;
    int n = snprintf(out, sizeof mp_opt.out, "%s/%s", cwd, s);
    return n > 0 && n < (int)sizeof mp_opt.out ? 0 : -1;
}

static int parse_seconds(const char *s, void *dst)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || !(x >= 0) || x > 1e7) return -1;
    *(double *)dst = x;
    return 0;
}

static int parse_depth(const char *s, void *dst)
{
    long v;
    if (parse_long(s, &v) || v < 1 || v > 1024) return -1;
    *(int *)dst = (int)v;
    return 0;
}

static int parse_threshold(const char *s, void *dst)
{
    return parse_long(s, dst);
}

/* Sizes accept a K, M or G suffix (powers of 1024). */
static int parse_size(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    if (*s == '-') return -1;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s) return -1;
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10, end++;
    else if (*end == 'M' || *end == 'm') shift = 20, end++;
    else if (*end == 'G' || *end == 'g') shift = 30, end++;
    if (*end || x > (~0ull >> shift)) return -1;
    *v = x << shift;
    return 0;
}

static int parse_sample(const char *s, void *dst)
{
    return parse_size(s, dst);
}

static int parse_bool(const char *s, void *dst)
{
    if (!strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "on")) *(int *)dst = 1;
    else if (!strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "off")) *(int *)dst = 0;
    else return -1;
    return 0;
}

static int parse_signal(const char *s, void *dst)
{
    static const struct { const char *name; int sig; } names[] = {
        { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP },
        { "PROF", SIGPROF }, { "URG", SIGURG }, { "WINCH", SIGWINCH },
    };
    if (!strncmp(s, "SIG", 3)) s += 3;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name)) return *(int *)dst = names[i].sig, 0;
    long v;
    if (parse_long(s, &v) || v < 1 || v >= NSIG || v == SIGKILL || v == SIGSTOP) return -1;
    *(int *)dst = (int)v;
    return 0;
}

static int parse_timeout(const char *s, void *dst)
{
    long v;
    if (parse_long(s, &v) || v < 1 || v > 3600) return -1;
    *(unsigned *)dst = (unsigned)v;
    return 0;
}

static int parse_unwind(const char *s, void *dst)
{
    if (!strcmp(s, "libunwind")) *(int *)dst = UNWIND_LIBUNWIND;
    else if (!strcmp(s, "fp")) *(int *)dst = UNWIND_FP;
    else if (!strcmp(s, "cfi")) *(int *)dst = UNWIND_CFI;
    else return -1;
    return 0;
}

static int parse_memory(const char *s, void *dst)
{
    uint64_t v;
    if (parse_size(s, &v) || v < (16u << 20)) return -1;
    *(uint64_t *)dst = v;
    return 0;
}

static int parse_text(const char *s, void *dst)
{
    if (strlen(s) >= sizeof mp_opt.debuginfo_path) return -1;
    strcpy(dst, s);
    return 0;
}

/* The table. README.md and `mpquery record --help` document the same rows;
 * tests/options_bad_values.sh checks every one. */
static const struct option_def {
    const char *name, *deflt, *help;
    opt_parser parse;
    void *dst;
} options[] = {
    { "MP_OUT", "profile.db", "database to write (appended as a new run)", parse_path, mp_opt.out },
    { "MP_INTERVAL", "0", "seconds between snapshots, 0 = only at exit", parse_seconds, &mp_opt.interval },
    { "MP_DEPTH", "128", "maximum frames per stack (1..1024)", parse_depth, &mp_opt.depth },
    { "MP_THRESHOLD", "0", "N: stacks for blocks >= N bytes; -N: for blocks < N", parse_threshold, &mp_opt.threshold },
    { "MP_SAMPLE", "0", "mean bytes between sampled blocks, 0 = every block", parse_sample, &mp_opt.sample },
    { "MP_ENABLED", "1", "0 = start inactive until mp_activate()", parse_bool, &mp_opt.enabled },
    { "MP_SIGNAL", "", "signal that requests a snapshot (e.g. USR2)", parse_signal, &mp_opt.signal },
    { "MP_UNWIND", "cfi", "cfi | libunwind | fp (frame pointers)", parse_unwind, &mp_opt.unwind },
    { "MP_MAX_MEMORY", "4G", "cap on the profiler's own memory", parse_memory, &mp_opt.max_memory },
    { "MP_DEBUGINFO_PATH", ":.debug:/usr/lib/debug", "where separate debug info is searched (elfutils format)",
      parse_text, mp_opt.debuginfo_path },
    { "MP_FATAL_TIMEOUT", "10", "seconds the last snapshot of a fatal signal may take (1..3600)", parse_timeout,
      &mp_opt.fatal_timeout },
};

void options_load(void)
{
    size_t pos = 0;
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        const struct option_def *o = &options[i];
        const char *v = getenv(o->name);
        const char *used = o->deflt;
        if (*o->deflt) o->parse(o->deflt, o->dst);
        if (v && *v) {
            if (o->parse(v, o->dst) == 0) {
                used = v;
            } else {
                mp_log("warning", "%s=%s is not valid (%s); using the default %s",
                       o->name, v, o->help, *o->deflt ? o->deflt : "(none)");
                if (*o->deflt) o->parse(o->deflt, o->dst);
            }
        }
        /* process.settings: every effective value but the output path */
        if (strcmp(o->name, "MP_OUT") && pos < sizeof mp_opt.settings) {
            int n = snprintf(mp_opt.settings + pos, sizeof mp_opt.settings - pos,
                             "%s%s=%s", pos ? " " : "", o->name, *used ? used : "none");
            if (n > 0) pos += (size_t)n;
        }
    }
}
