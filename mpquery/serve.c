/* mpquery serve: a local web server over profiles (libmicrohttpd, driven
 * from this thread's select loop: one request at a time, each view run
 * by serve_run). It listens on 127.0.0.1 by default, on a
 * free port unless --port, prints one line, the URL with a random token
 * (getrandom), and answers 403 to any request without that token (compared
 * in constant time). SIGINT and SIGTERM stop it: the port is closed and
 * the exit code is 0. */
#include "mpquery.h"
#include "commands.h"
#include "options.h"
#include "serve.h"
#include "opt_groups.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] =
"usage: mpquery serve DB... [--port N] [--bind ADDR] [--open]\n"
"\n"
"The profile in the browser: a local web server whose pages are the\n"
"views of the terminal commands (overview, timeline, flame graph, top-down\n"
"and bottom-up trees, callers, peak, leaks, temporaries, histogram, RSS,\n"
"threads, source, diff), each a URL whose query holds its whole state.\n"
"\n";

static const char more[] =
"\n"
"It prints one line, the URL to open: it carries a random token, without\n"
"which every request is refused (403), so that other users of the machine\n"
"cannot read the profile. Ctrl-C (SIGINT) or SIGTERM stops it (exit 0).\n"
"Each page reads the databases when it is asked for: tables show their\n"
"first rows (n=N), trees one node's children at a time, flame graphs the\n"
"frames wider than 1/1000 of the graph. A page's parameters are the\n"
"options of the same name (by, snapshot, filter, exclude, thread, pid,\n"
"image, exe, rules, depth, since, until, run; lines, native, no-inline,\n"
"module, no-default-rules =1): a bad value is the command's own message.\n"
"A drag across the chart of memory over time (/, /timeline) chooses a time\n"
"range (since, until: +S), shaded there, which every view's links keep.\n"
"/source shows only files the profile's frames name.\n"
"\n"
"example:\n"
"  mpquery serve app.db --port 8080\n";

/* ---------------------------------------------------------------- requests */
struct server { char token[33]; char *const *dbs; size_t ndbs; const char *url; };

struct params { struct serve_param *v; size_t n, cap; };

static enum MHD_Result add_param(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    struct params *p = cls;
    struct serve_param *e = array_push((void **)&p->v, &p->n, &p->cap, sizeof *p->v);
    e->key = key;
    e->value = value ? value : "";
    return MHD_YES;
}

/* The token given equals ours: same length, then every byte compared. */
static int token_ok(const char *given, const char *token)
{
    if (!given || strlen(given) != strlen(token)) return 0;
    unsigned char d = 0;
    for (size_t i = 0; token[i]; i++) d |= (unsigned char)(given[i] ^ token[i]);
    return d == 0;
}

static enum MHD_Result respond(struct MHD_Connection *conn, int status, struct strbuf *body, const char *type)
{
    size_t len = body->len;
    char *data = body->s ? body->s : xstrdup("");
    body->s = NULL;
    body->len = body->cap = 0;
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; "
                            "script-src 'unsafe-inline'; form-action 'self'");
    enum MHD_Result rc = MHD_queue_response(conn, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state)
{
    (void)version, (void)upload, (void)upload_size, (void)state;
    struct server *s = cls;
    struct strbuf body = { 0 };
    if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
        sb_puts(&body, "only GET\n");
        return respond(conn, 405, &body, "text/plain; charset=utf-8");
    }
    if (!token_ok(MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token"), s->token)) {
        sb_puts(&body, "403: this page needs the token of the URL mpquery serve printed\n");
        return respond(conn, 403, &body, "text/plain; charset=utf-8");
    }
    if (!s->url) serve_cache_refresh(s->dbs, s->ndbs);
    struct params p = { 0 };
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, add_param, &p);
    struct serve_req r = { .path = url, .params = p.v, .nparams = p.n, .token = s->token,
                           .dbs = s->dbs, .ndbs = s->ndbs, .server = s->url };
    struct serve_out out = { .status = 200, .type = "text/html; charset=utf-8" };
    serve_view(&r, &out);
    free(p.v);
    return respond(conn, out.status, &out.body, out.type);
}

/* ---------------------------------------------------------------- listening */
/* The socket bound to addr:port and listening; -1 with the reason (2). */
static int listen_on(const char *addr, long port, int *fd)
{
    struct sockaddr_storage ss = { 0 };
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    socklen_t len;
    if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET, a4->sin_port = htons((uint16_t)port), len = sizeof *a4;
    } else if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6, a6->sin6_port = htons((uint16_t)port), len = sizeof *a6;
    } else
        return bad_value("serve", "--bind", addr, "an IPv4 or IPv6 address, e.g. 127.0.0.1");
    int s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (s < 0) return error(EXIT_FAILED, "serve: socket: %s", strerror(errno));
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s, (struct sockaddr *)&ss, len) < 0 || listen(s, 64) < 0) {
        int e = errno;
        close(s);
        return error(EXIT_FAILED, "serve: cannot listen on %s port %ld: %s", addr, port, strerror(e));
    }
    *fd = s;
    return 0;
}

static int bound_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) return -1;
    return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                          : ((struct sockaddr_in *)&ss)->sin_port);
}

static int make_token(char *out)
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0 && errno != EINTR) return error(EXIT_FAILED, "serve: getrandom: %s", strerror(errno));
        if (n > 0) got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof b; i++) sprintf(out + 2 * i, "%02x", b[i]);
    return 0;
}

/* xdg-open URL, its output discarded, in a grandchild (no zombie left
 * while the server runs); failing to is not an error. */
static void open_browser(const char *url)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (fork() != 0) _exit(0);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) dup2(null, 1), dup2(null, 2);
        execlp("xdg-open", "xdg-open", url, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) waitpid(pid, NULL, 0);
}

/* Requests until SIGINT or SIGTERM (sfd, a signalfd); 0, or 1. */
static int serve_loop(struct MHD_Daemon *d, int sfd)
{
    for (;;) {
        fd_set rs, ws, es;
        FD_ZERO(&rs);
        FD_ZERO(&ws);
        FD_ZERO(&es);
        MHD_socket max = 0;
        if (MHD_get_fdset(d, &rs, &ws, &es, &max) != MHD_YES) return error(EXIT_FAILED, "serve: MHD_get_fdset failed");
        FD_SET(sfd, &rs);
        if (sfd > max) max = sfd;
        MHD_UNSIGNED_LONG_LONG ms;
        struct timeval tv, *tvp = NULL;
        if (MHD_get_timeout(d, &ms) == MHD_YES) tv.tv_sec = (time_t)(ms / 1000), tv.tv_usec = (long)(ms % 1000) * 1000, tvp = &tv;
        if (select(max + 1, &rs, &ws, &es, tvp) < 0) {
            if (errno == EINTR) continue;
            return error(EXIT_FAILED, "serve: select: %s", strerror(errno));
        }
        if (FD_ISSET(sfd, &rs)) return 0;
        MHD_run_from_select(d, &rs, &ws, &es);
    }
}

static int start(struct server *s, const char *bind_addr, long port, int open)
{
    int lfd = -1, rc = listen_on(bind_addr, port, &lfd);
    if (rc) return rc;
    if ((rc = make_token(s->token))) return close(lfd), rc;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    struct MHD_Daemon *d = MHD_start_daemon(MHD_NO_FLAG, 0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET, lfd,
                                            MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_END);
    if (sfd < 0 || !d) {
        close(lfd);
        return error(EXIT_FAILED, "serve: cannot start the server on %s port %ld", bind_addr, port);
    }
    char url[128];
    int v6 = strchr(bind_addr, ':') != NULL;
    snprintf(url, sizeof url, "http://%s%s%s:%d/?token=%s", v6 ? "[" : "", bind_addr, v6 ? "]" : "",
             bound_port(lfd), s->token);
    printf("%s\n", url);
    fflush(stdout);
    if (open) open_browser(url);
    rc = serve_loop(d, sfd);
    MHD_stop_daemon(d);
    close(lfd);
    close(sfd);
    return rc;
}

int cmd_serve(int argc, char **argv)
{
    struct common c;
    char *port_arg = NULL, *bind_arg = NULL, *server_arg = NULL;
    int open = 0;
    const struct opt opts[] = {
        { .name = "port", .arg = "N", .str = &port_arg, .help = "listen on port N (default: a free one)" },
        { .name = "bind", .arg = "ADDR", .str = &bind_arg,
          .help = "listen on this address (default 127.0.0.1: this machine only)" },
        { .name = "open", .flag = &open, .value = 1, .help = "open the URL in the browser (xdg-open)" },
        { .name = "server", .arg = "URL", .str = &server_arg,
          .help = "a ClickHouse store's profiles (mpquery push) instead of files" },
        { 0 }
    };
    const struct cmd_opts d = { .cmd = "serve", .usage = usage, .more = more, .opts = opts,
                                .missing = "missing DB (or --server URL)", .operands_optional = 1 };
    int rc = parse_options(&c, &d, argc, argv);
    if (rc != PARSE_OK) return rc;
    int64_t port = 0;
    if (port_arg && (parse_int64(port_arg, &port) || port < 1 || port > 65535))
        return bad_value("serve", "--port", port_arg, "a port number, 1 to 65535");
    if (!server_arg == (optind == argc))
        return usage_error("serve", server_arg ? "DB files or --server URL, not both" : "missing DB (or --server URL)");
    if (server_arg && strncmp(server_arg, "http://", 7) && strncmp(server_arg, "https://", 8))
        return bad_value("serve", "--server", server_arg, "a ClickHouse HTTP URL, e.g. http://127.0.0.1:8123");
    for (int i = optind; i < argc; i++)
        if (access(argv[i], R_OK)) return error(EXIT_BAD_INPUT, "%s: %s", argv[i], strerror(errno));
    struct server s = { .dbs = argv + optind, .ndbs = (size_t)(argc - optind), .url = server_arg };
    return start(&s, bind_arg ? bind_arg : "127.0.0.1", (long)port, open);
}
