/* Debug files by build-id from debuginfod servers, through elfutils'
 * libdebuginfod (debuginfod.h). Why the library and not mpquery's own
 * HTTP client (http.c): distributions serve over HTTPS, which http.c does
 * not speak, and the library is the ecosystem's client: $DEBUGINFOD_URLS
 * lists, the cache shared with gdb, perf and the others (cleaned by its
 * own rules), $DEBUGINFOD_TIMEOUT and the like. Why dlopen: it brings
 * libcurl and a TLS library, wanted only by `symbolize --debuginfod`.
 *
 * What the library does not do, this file does: a server that never
 * answers is given up after the timeout (curl's connect timeout is
 * minutes, and the library retries), and then no other module is asked; a
 * failure is said precisely (curl's own words, from the library's verbose
 * output); a file that is not the debug file asked for, and the "not
 * found" the library records in its cache for a server it could not ask,
 * are removed from the cache. */
#include "debuginfod.h"
#include "output.h"
#include "safeopen.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The library's API (elfutils/debuginfod.h, libdebuginfod-dev), declared
 * here: building mpquery needs no header of it. */
typedef struct debuginfod_client debuginfod_client;
typedef int (*debuginfod_progressfn_t)(debuginfod_client *c, long a, long b);
struct dbgd_lib {
    void *so;
    debuginfod_client *(*begin)(void);
    int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id, int id_len, char **path);
    void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t fn);
    void (*set_verbose_fd)(debuginfod_client *c, int fd);
    const char *(*get_url)(debuginfod_client *c);
    void (*end)(debuginfod_client *c);
};

#define SONAME "libdebuginfod.so.1"
#define DEFAULT_TIMEOUT 90          /* the library's default for $DEBUGINFOD_TIMEOUT */

static int load_library(struct dbgd_lib *l, char *err, size_t errsz)
{
    l->so = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!l->so) {
        snprintf(err, errsz, "--debuginfod needs %s (Debian package libdebuginfod1): %s", SONAME, dlerror());
        return EXIT_FAILED;
    }
    struct { void **fn; const char *name; } syms[] = {
        { (void **)&l->begin, "debuginfod_begin" },
        { (void **)&l->find_debuginfo, "debuginfod_find_debuginfo" },
        { (void **)&l->set_progressfn, "debuginfod_set_progressfn" },
        { (void **)&l->set_verbose_fd, "debuginfod_set_verbose_fd" },
        { (void **)&l->get_url, "debuginfod_get_url" },
        { (void **)&l->end, "debuginfod_end" },
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
        if (!(*syms[i].fn = dlsym(l->so, syms[i].name))) {
            snprintf(err, errsz, "--debuginfod: %s has no %s (elfutils 0.179 or later is needed)", SONAME,
                     syms[i].name);
            return EXIT_FAILED;
        }
    return 0;
}

/* The library's cache directory, by its rules (DEBUGINFOD_CACHE_PATH, an
 * existing ~/.debuginfod_client_cache, else the XDG cache's
 * debuginfod_client): set back into DEBUGINFOD_CACHE_PATH so that both
 * agree on it. */
static char *default_cache(void)
{
    const char *v = getenv("DEBUGINFOD_CACHE_PATH"), *home = getenv("HOME");
    struct strbuf sb = { 0 };
    if (v && *v) return xstrdup(v);
    if (!home) home = "/";
    sb_printf(&sb, "%s/.debuginfod_client_cache", home);
    struct stat st;
    if (stat(sb.s, &st) == 0) return sb.s;
    sb.len = 0;
    v = getenv("XDG_CACHE_HOME");
    if (v && *v) sb_printf(&sb, "%s/debuginfod_client", v);
    else sb_printf(&sb, "%s/.cache/debuginfod_client", home);
    return sb.s;
}

/* mkdir -p: the library makes the last level only, and says "not found"
 * when it cannot. */
static int make_dirs(char *path)
{
    for (char *p = path + 1; ; p++) {
        if (*p != '/' && *p) continue;
        char c = *p;
        *p = 0;
        int rc = mkdir(path, 0700) && errno != EEXIST ? -1 : 0;
        *p = c;
        if (rc || !c) return rc;
    }
}

/* The width of the terminal stderr is (COLUMNS when set), or 0 when it is
 * not a terminal: where a download's progress is shown. */
static int stderr_width(void)
{
    struct winsize ws;
    if (!isatty(STDERR_FILENO)) return 0;
    const char *c = getenv("COLUMNS");
    if (c && atoi(c) > 1) return atoi(c);
    return ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col : 80;
}

/* The client whose query is under way: the progress callback's (the
 * library passes only its own handle). */
static struct dbgd *querying;

static void clear_progress(struct dbgd *d)
{
    if (d->progress_shown) fprintf(stderr, "\r\033[K");
    d->progress_shown = 0;
}

/* The library's progress callback, each second at least: gives up on a
 * fetch whose servers have not sent DBGD_PACE bytes within the last
 * timeout seconds (the library alone applies that to each connection, then
 * tries again: 3 tries of a server that stalls took 9 s with
 * DEBUGINFOD_TIMEOUT=3), and shows a download that lasts on a terminal.
 * Nonzero cancels the query. */
static int progress(debuginfod_client *c, long done, long total)
{
    struct dbgd *d = querying;
    double now = monotonic_seconds();
    if (d->lib->get_url(c)) d->answered = 1;
    if (done >= d->paced_bytes + DBGD_PACE) d->paced_at = now;
    if (done >= d->paced_bytes + DBGD_PACE || done < d->paced_bytes) d->paced_bytes = done;    /* a retry starts at 0 */
    if (d->timeout > 0 && now - d->paced_at > d->timeout) return d->timed_out = 1;
    if (!d->lib->get_url(c)) return 0;
    if (!d->tty || now - d->started < 1 || now - d->shown_at < 0.2) return 0;
    d->shown_at = now;
    d->progress_shown = 1;
    char got[32], all[32], line[512];
    int n = snprintf(line, sizeof line, "mpquery: debuginfod: %s: %s%s%s", d->module,
                     fmt_size(1, done, got, sizeof got), total > 0 ? " of " : "",
                     total > 0 ? fmt_size(1, total, all, sizeof all) : "");
    /* one line, redrawn: never as wide as the terminal (it would wrap) */
    fprintf(stderr, "\r%.*s\033[K", n < d->tty - 1 ? n : d->tty - 1, line);
    return 0;
}

int dbgd_open(struct dbgd *d, const char *urls, const char *cache, char *err, size_t errsz)
{
    memset(d, 0, sizeof *d);
    d->log_fd = -1;
    if (urls && *urls) setenv("DEBUGINFOD_URLS", urls, 1);
    d->urls = getenv("DEBUGINFOD_URLS");
    if (!d->urls || !d->urls[strspn(d->urls, " \t")]) {
        snprintf(err, errsz, "--debuginfod needs a server's URL (--debuginfod=URL), or DEBUGINFOD_URLS set");
        return EXIT_BAD_INPUT;
    }
    d->cache = cache && *cache ? xstrdup(cache) : default_cache();
    if (make_dirs(d->cache)) {
        snprintf(err, errsz, "debuginfod cache %s: %s", d->cache, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    setenv("DEBUGINFOD_CACHE_PATH", d->cache, 1);
    const char *t = getenv("DEBUGINFOD_TIMEOUT");
    d->timeout = t && *t ? atoi(t) : DEFAULT_TIMEOUT;
    d->tty = stderr_width();
    d->lib = xcalloc(1, sizeof *d->lib);
    int rc = load_library(d->lib, err, errsz);
    if (rc) return rc;
    d->log_fd = memfd_create("debuginfod-log", MFD_CLOEXEC);
    if (d->log_fd < 0 || !(d->client = d->lib->begin())) {
        snprintf(err, errsz, "--debuginfod: cannot start the client: %s", strerror(errno));
        return EXIT_FAILED;
    }
    d->lib->set_verbose_fd(d->client, d->log_fd);
    d->lib->set_progressfn(d->client, progress);
    return 0;
}

/* The library's verbose output of the last query, NUL-terminated (copied
 * to stderr as well when DEBUGINFOD_VERBOSE asks for it). */
static char *query_log(struct dbgd *d)
{
    static char buf[16384];
    ssize_t n = pread(d->log_fd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = 0;
    const char *v = getenv("DEBUGINFOD_VERBOSE");
    if (v && *v && n > 0) fputs(buf, stderr);
    return buf;
}

/* curl's words on why the last transfer failed: the log's last "url N
 * <error>" line, else its last "server response <error>"; "" if none. */
static void curl_error(const char *log, char *out, size_t outsz)
{
    const char *found = NULL, *resp = NULL;
    for (const char *l = log; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        if (!strncmp(l, "url ", 4) && strchr(l + 4, ' ')) found = strchr(l + 4, ' ') + 1;
        if (!strncmp(l, "server response ", 16)) resp = l + 16;
    }
    const char *s = found ? found : resp ? resp : "";
    snprintf(out, outsz, "%.*s", (int)strcspn(s, "\n"), s);
}

/* Removes build_id's debug file from the cache: a file that is not the
 * one asked for (any), or else the empty "not found" the library leaves
 * after a query it gave up (for its own cache_miss_s: a server that was
 * not reached said nothing about the file). */
static void drop_cache_entry(const struct dbgd *d, const char *build_id, int any)
{
    struct strbuf sb = { 0 };
    sb_printf(&sb, "%s/%s/debuginfo", d->cache, build_id);
    struct stat st;
    if (stat(sb.s, &st) == 0 && (any || st.st_size == 0)) unlink(sb.s);
    sb.len = 0;
    sb_printf(&sb, "%s/%s", d->cache, build_id);
    rmdir(sb.s);
    sb_free(&sb);
}

/* Whether the file at path is an ELF file with the build-id asked for;
 * else why not, in why. */
static int is_debug_file(const char *path, const char *build_id, char *why, size_t whysz)
{
    struct stat st = { 0 };
    int fd = mp_open_regular(AT_FDCWD, path, 0, &st);
    if (fd < 0) {
        snprintf(why, whysz, "%s: %s", path, fd == -1 ? strerror(errno) : mp_file_kind(&st));
        return 0;
    }
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    const void *bits = NULL;
    ssize_t n = elf && elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
    char hex[2 * 64 + 1] = "";
    for (ssize_t i = 0; i < n && i < 64; i++) snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)bits)[i]);
    int ok = n > 0 && !strcmp(hex, build_id);
    if (!ok)
        snprintf(why, whysz, "%lld bytes, %s%s", (long long)st.st_size,
                 n < 0 ? "not ELF" : n == 0 ? "an ELF file without build-id" : "an ELF file with build-id ",
                 n > 0 ? hex : "");
    if (elf) elf_end(elf);
    close(fd);
    return ok;
}

/* A query that failed (rc: the library's -errno) said in why: NOT_FOUND
 * for a 404 (or one remembered in the cache), else FAILED; a server not
 * reached is remembered, and no "not found" of the library stays. */
static enum dbgd_result failed(struct dbgd *d, const char *build_id, int rc, const char *log, char *why,
                               size_t whysz)
{
    char detail[512];
    curl_error(log, detail, sizeof detail);
    if (rc == ENOENT && !d->timed_out && !strstr(log, "init server")) {
        snprintf(why, whysz, "not found (a recent miss, remembered in %s)", d->cache);
        return DBGD_NOT_FOUND;
    }
    if (rc == ENOENT && !d->timed_out && (!*detail || strstr(detail, " 404"))) {
        snprintf(why, whysz, "not found at %s%s%s%s", d->urls, *detail ? " (" : "", detail, *detail ? ")" : "");
        return DBGD_NOT_FOUND;
    }
    drop_cache_entry(d, build_id, 0);
    if (d->timed_out && !d->answered)
        snprintf(d->unreachable, sizeof d->unreachable, "no answer from %s in %d s (DEBUGINFOD_TIMEOUT)",
                 d->urls, d->timeout);
    else if (d->timed_out)
        snprintf(d->unreachable, sizeof d->unreachable, "%s sent less than %ld KiB in %d s (DEBUGINFOD_TIMEOUT)",
                 d->urls, DBGD_PACE / 1024, d->timeout);
    else if (rc == ECONNREFUSED || rc == EHOSTUNREACH || rc == ENETUNREACH || rc == ETIME || rc == ECONNRESET)
        snprintf(d->unreachable, sizeof d->unreachable, "cannot reach %s (%s)", d->urls,
                 *detail ? detail : strerror(rc));
    if (*d->unreachable) {
        snprintf(why, whysz, "%s", d->unreachable);
    } else {
        snprintf(why, whysz, "%s failed (%s)", d->urls, *detail ? detail : strerror(rc));
    }
    return DBGD_FAILED;
}

enum dbgd_result dbgd_fetch(struct dbgd *d, const char *build_id, const char *module, char **path,
                            char *why, size_t whysz)
{
    *path = NULL;
    if (!*build_id) {
        snprintf(why, whysz, "no build-id recorded, nothing to ask for");
        return DBGD_NOT_FOUND;
    }
    if (*d->unreachable) {
        snprintf(why, whysz, "not asked: %s, above", d->unreachable);
        return DBGD_FAILED;
    }
    if (ftruncate(d->log_fd, 0) == 0) lseek(d->log_fd, 0, SEEK_SET);
    const char *slash = strrchr(module, '/');
    d->module = slash ? slash + 1 : module;
    d->started = d->paced_at = monotonic_seconds();
    d->shown_at = 0;
    d->paced_bytes = 0;
    d->timed_out = d->answered = 0;
    querying = d;
    /* a build-id length of 0: the id is given in hex */
    int fd = d->lib->find_debuginfo(d->client, (const unsigned char *)build_id, 0, path);
    querying = NULL;
    clear_progress(d);
    const char *log = query_log(d);
    if (fd < 0) {
        free(*path);
        *path = NULL;
        return failed(d, build_id, -fd, log, why, whysz);
    }
    close(fd);
    char not[256];
    if (is_debug_file(*path, build_id, not, sizeof not)) return DBGD_FETCHED;
    snprintf(why, whysz, "%s answered with what is not its debug file (%s); removed from the cache", d->urls, not);
    drop_cache_entry(d, build_id, 1);
    free(*path);
    *path = NULL;
    return DBGD_FAILED;
}

void dbgd_close(struct dbgd *d)
{
    if (d->client) d->lib->end(d->client);
    /* the library stays loaded: libcurl's exit handlers may still run */
    if (d->log_fd >= 0) close(d->log_fd);
    free(d->lib);
    free(d->cache);
    memset(d, 0, sizeof *d);
    d->log_fd = -1;
}
