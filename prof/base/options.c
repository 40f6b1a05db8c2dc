/* MP_* environment variables, as optdefs.h declares them (the same table
 * mpquery record uses), and the recorder's messages. A bad value is
 * reported once on stderr, naming the variable and the default used
 * instead; the program runs on. Runs once at initialization, with the
 * profiler marked internal (getenv and friends do not allocate). */
#define _GNU_SOURCE
#include "base.h"
#include "debugcache.h"

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

#ifdef MP_DEBUG
void mp_assert_failed(const char *what, const char *file, int line)
{
    log_ok = 1;     /* whatever fd 2 is now */
    mp_log("bug", "%s:%d: %s does not hold", file, line, what);
    abort();
}
#endif

void mp_log(const char *level, const char *fmt, ...)
{
    if (mp_opt.quiet && !strcmp(level, "info")) return;
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

/* Where each row of the table (optdefs.h) goes in mp_opt. */
#define MP_OPTION_FIELD(name, kind, deflt, field, option, arg, help) { &mp_opt.field, sizeof mp_opt.field },
static const struct { void *dst; size_t size; } fields[] = { MP_OPTIONS(MP_OPTION_FIELD) };
#undef MP_OPTION_FIELD

/* Each field has the type its kind's parser stores (strings: any size). */
#define KIND_SIZE(k) ((k) == VAL_SECONDS ? sizeof(double) : (k) == VAL_LONG ? sizeof(long)          \
                      : (k) == VAL_SIZE || (k) == VAL_MEMORY ? sizeof(uint64_t)                    \
                      : (k) == VAL_PERCENTS ? MP_PERCENTS_MAX : sizeof(int))
#define MP_OPTION_CHECK(name, kind, deflt, field, option, arg, help)                               \
    _Static_assert(kind == VAL_PATH || kind == VAL_TEXT || sizeof mp_opt.field == KIND_SIZE(kind), \
                   #name ": field type");
MP_OPTIONS(MP_OPTION_CHECK)
#undef MP_OPTION_CHECK

/* Where the values come from: the environment, or the settings an
 * attach gives (attach.c: "NAME=VALUE" lines), which alone count then. */
static const char *settings_text;

void options_load_text(const char *settings)
{
    settings_text = settings;
    options_load();
}

static const char *option_value(const char *name)
{
    if (!settings_text) return getenv(name);
    static char value[sizeof mp_opt.out];
    size_t n = strlen(name);
    for (const char *line = settings_text; *line;) {
        const char *end = strchrnul(line, '\n');
        if ((size_t)(end - line) > n && !strncmp(line, name, n) && line[n] == '=') {
            size_t len = (size_t)(end - line) - n - 1;
            if (len >= sizeof value) return NULL;
            memcpy(value, line + n + 1, len);
            value[len] = 0;
            return value;
        }
        line = *end ? end + 1 : end;
    }
    return NULL;
}

int options_given(const char *name)
{
    const char *v = option_value(name);
    return v && *v;
}

void options_load(void)
{
    size_t pos = 0;
    for (size_t i = 0; i < MP_NOPTIONS; i++) {
        const struct mp_option_def *o = &mp_option_defs[i];
        const char *v = option_value(o->name);
        const char *used = o->deflt;
        if (*o->deflt) mp_option_parse(o->kind, o->deflt, fields[i].dst, fields[i].size);
        if (v && *v) {
            if (mp_option_parse(o->kind, v, fields[i].dst, fields[i].size) == 0) {
                used = v;
            } else {
                mp_log("warning", "%s=%s is not valid (%s); using the default %s",
                       o->name, v, o->help, *o->deflt ? o->deflt : "(none)");
                if (*o->deflt) mp_option_parse(o->kind, o->deflt, fields[i].dst, fields[i].size);
            }
        }
        /* process.settings: every effective value but the output path */
        if (o->kind != VAL_PATH && pos < sizeof mp_opt.settings) {
            int n = snprintf(mp_opt.settings + pos, sizeof mp_opt.settings - pos,
                             "%s%s=%s", pos ? " " : "", o->name, *used ? used : "none");
            if (n > 0) pos += (size_t)n;
        }
    }
    debugcache_enable(mp_opt.debuginfo_cache);     /* from the environment at start: the program may change HOME */
}
