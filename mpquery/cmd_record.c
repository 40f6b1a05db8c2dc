/* mpquery record: runs a command under the profiler. Sets LD_PRELOAD to the
 * libmallocprof.so installed next to mpquery (prepended to an existing
 * LD_PRELOAD), MP_* variables from the options and an MP_RUN token, refuses
 * statically linked programs (LD_PRELOAD cannot reach them; a script whose
 * interpreter is static gets a warning) and an output it cannot write, then
 * says what the run wrote (record_db.c: one summary line) and exits with the
 * command's status (128 + N when a signal N killed it). The MP_* options are
 * the recorder's own table (prof/common/optdefs.h). The recorded processes
 * run with MP_QUIET=1 unless the user set MP_QUIET or asked --verbose: their
 * per-snapshot info lines are noise here (the summary says it once), their
 * warnings and errors still print. With --pid, a running process is
 * recorded from now instead (attach.c). */
#include "mpquery.h"
#include "profile.h"
#include "optdefs.h"
#include "commands.h"
#include "opt_groups.h"
#include "record_db.h"
#include "record_prog.h"
#include "output.h"
#include "attach.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The MP_* settings are prof/common/optdefs.h's table: the options are their
 * names there ("-o, --out", "--interval"...), each setting one variable,
 * validated with the recorder's own parsers; a row without an argument
 * ("-q, --quiet") is a flag setting its variable to 1. --verbose is
 * record's own. */
enum { OPT_VERBOSE = MP_NOPTIONS, OPT_LIVE, OPT_ATTACH_PID, OPT_ATTACH_DURATION };

/* How much record and the recorded processes say on stderr. */
static int verbose, quiet;
static int live;        /* --live: the live view while the program runs */
static char *pid_text, *duration_text;     /* --pid, --duration */

/* Prints text wrapped at 78 columns, each line indented by `indent`. */
static void print_wrapped(const char *text, int indent)
{
    int col = indent;
    printf("%*s", indent, "");
    for (const char *p = text; *p; ) {
        size_t word = strcspn(p, " ");
        if (col > indent && col + 1 + (int)word > 78) printf("\n%*s", col = indent, "");
        else if (col > indent) putchar(' '), col++;
        printf("%.*s", (int)word, p);
        col += (int)word;
        p += word;
        p += strspn(p, " ");
    }
    putchar('\n');
}

static void print_help(void)
{
    fputs("usage: mpquery record [options] [--] COMMAND [ARGS...]\n"
          "       mpquery record --pid PID [--duration S] [options]\n"
          "\n"
          "Runs COMMAND with LD_PRELOAD=libmallocprof.so (the one installed next to\n"
          "mpquery, or in ../lib) and exits with its exit status (128 + N when\n"
          "signal N killed it; as a shell's, 127 when COMMAND is not found, 126\n"
          "when it cannot run). Options set the MP_* variables the recorder reads;\n"
          "variables already in the environment apply when no option overrides them.\n"
          "\n"
          "options (each sets one variable):\n", stdout);
    for (size_t i = 0; i < MP_NOPTIONS; i++) {
        const struct mp_option_def *o = &mp_option_defs[i];
        char opt[48];
        snprintf(opt, sizeof opt, "%s%s%s", o->option, *o->arg ? " " : "", o->arg);
        printf("  %-22s  %s (default %s)\n", opt, o->name, *o->deflt ? o->deflt : "none");
        print_wrapped(o->help, 6);
    }
    fputs("  --verbose               the recorded processes' own lines too (MP_QUIET=0):\n"
          "      'mallocprof: info: wrote ...' for each snapshot of each process\n"
          "  --live                  the screen of 'mpquery live' while COMMAND runs\n"
          "      (MP_INTERVAL=1 unless set); COMMAND's stdin is /dev/null, its stdout and\n"
          "      stderr go to FILE.log beside the profile; when it ends the last frame\n"
          "      stays until q, and record exits with COMMAND's status. With --pid: the\n"
          "      screen during the session, q ends it; record's messages go to FILE.log\n"
          "\n-o FILE may hold placeholders: %p the program's pid, %e its file name, %h the\n"
          "host name, %t the second record started it, %% a '%' (the messages name the\n"
          "file they make).\n"
          "\nA statically linked COMMAND is refused: LD_PRELOAD cannot profile it (a script\n"
          "whose interpreter is statically linked gets a warning). So is an output that\n"
          "cannot be written (missing or read-only directory, a file that is not a\n"
          "mallocprof profile), before COMMAND starts. When COMMAND ends, one line on\n"
          "stderr says what its run wrote (processes, images, snapshots, seconds), or\n"
          "warns that nothing was; -q drops that line, not the warning. The recorded\n"
          "processes run with MP_QUIET=1 unless MP_QUIET is set or --verbose is given:\n"
          "their warnings and errors print, their per-snapshot info lines do not.\n"
          "\n"
          "\n"
          "--pid PID records the running process PID from now on, without restarting it:\n"
          "libmallocprof.so is loaded into it (ptrace: the same user, or root /\n"
          "CAP_SYS_PTRACE) and its allocator calls are redirected to the recorder until\n"
          "--duration S seconds have passed, ^C, SIGTERM or the process's end; then the\n"
          "snapshot is written and the process goes on as before (the library stays\n"
          "loaded, idle). x86-64, glibc 2.34 or later; a stopped, traced or static\n"
          "process is refused. Blocks allocated before count as unknown when freed.\n"
          "\n"
          "examples:\n"
          "  mpquery record -o app.db --interval 10 -- ./app --input data.txt\n"
          "  mpquery record --pid 4242 --duration 30 -o server.db\n", stdout);
}

/* Whether text is a valid value of the table's row i (the recorder's parser). */
static int valid(size_t i, const char *text)
{
    union { double d; long l; uint64_t u; int n; char s[4096]; } v;
    return mp_option_parse(mp_option_defs[i].kind, text, &v, sizeof v) == 0;
}

/* The long option of row i ("out" of "-o, --out"), and its short letter. */
static const char *long_name(size_t i, int *letter)
{
    const char *o = mp_option_defs[i].option, *dashes = strstr(o, "--");
    *letter = o[0] == '-' && o[1] != '-' ? o[1] : 0;
    return dashes ? dashes + 2 : o;
}

static char *find_library(void)
{
    char *dir = exe_dir();
    if (!dir) return NULL;
    static const char *const candidates[] = { "/libmallocprof.so", "/../lib/libmallocprof.so" };
    for (size_t i = 0; i < 2; i++) {
        struct strbuf sb = { 0 };
        sb_printf(&sb, "%s%s", dir, candidates[i]);
        if (access(sb.s, R_OK) == 0) {
            char *real = realpath(sb.s, NULL);
            sb_free(&sb);
            free(dir);
            return real;
        }
        sb_free(&sb);
    }
    free(dir);
    return NULL;
}

static int set_out(const char *path)
{
    if (path[0] == '/') return setenv("MP_OUT", path, 1);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return -1;
    struct strbuf sb = { 0 };
    sb_printf(&sb, "%s/%s", cwd, path);
    int rc = setenv("MP_OUT", sb.s, 1);
    sb_free(&sb);
    return rc;
}

/* The run's token: MP_RUN when it is already set (record runs inside a
 * profiled tree: its processes join that run, as any child would), a new
 * one otherwise. Shorter than the recorder's 64-byte limit. */
static int set_run(char *token, size_t size)
{
    const char *run = getenv("MP_RUN");
    if (run && *run && strlen(run) < size) {
        strcpy(token, run);
        return 0;
    }
    char host[64] = "";
    struct timespec now;
    gethostname(host, sizeof host - 1);
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(token, size, "%.20s-%d-%lld.%09ld", host, (int)getpid(), (long long)now.tv_sec, now.tv_nsec);
    return setenv("MP_RUN", token, 1);
}

/* LD_PRELOAD (lib first), the MP_* variables given as options, MP_QUIET
 * (see the top of the file), MP_RUN. */
static int set_environment(const char *lib, const char *const *value, char *token, size_t size)
{
    const char *old = getenv("LD_PRELOAD");
    struct strbuf preload = { 0 };
    sb_puts(&preload, lib);
    if (old && *old) { sb_putc(&preload, ':'); sb_puts(&preload, old); }
    int rc = setenv("LD_PRELOAD", preload.s, 1);
    sb_free(&preload);
    for (size_t i = 0; !rc && i < MP_NOPTIONS; i++) {
        if (!value[i]) continue;
        rc = mp_option_defs[i].kind == VAL_PATH ? set_out(value[i]) : setenv(mp_option_defs[i].name, value[i], 1);
    }
    /* the processes' info lines: only with --verbose, or as MP_QUIET says */
    if (!rc && verbose) rc = setenv("MP_QUIET", "0", 1);
    else if (!rc && !getenv("MP_QUIET")) rc = setenv("MP_QUIET", "1", 1);
    if (!rc) rc = set_run(token, size);
    return rc ? error(EXIT_FAILED, "record: cannot set the environment: %s", strerror(errno)) : 0;
}

/* The profile the recorder will write, as the user named it. */
static const char *out_path(const char *const *value)
{
    for (size_t i = 0; i < MP_NOPTIONS; i++)
        if (mp_option_defs[i].kind == VAL_PATH && value[i]) return value[i];
    const char *env = getenv("MP_OUT");
    return env && *env ? env : "profile.db";
}

/* The row of MP_INTERVAL (record --live sets it to 1 unless given). */
static size_t interval_row(void)
{
    size_t i = 0;
    while (i + 1 < MP_NOPTIONS && strcmp(mp_option_defs[i].name, "MP_INTERVAL")) i++;
    return i;
}

/* Where record --live sends the program's output: beside the profile,
 * named after it (placeholders and all: one a run). */
static char *log_name(const char *out)
{
    struct strbuf sb = { 0 };
    sb_printf(&sb, "%s.log", out);
    return sb.s;
}

/* -o's placeholders (optdefs.h), put in by record for the program it
 * starts as pid (the recorder's first process would, but record's MP_RUN
 * makes the program a process of record's run): %e is the file run (a
 * script's own name), %t the second record started it. The parent and
 * the child (before exec, for its MP_OUT) make the same name. */
static long start_second;
static char *placed_out(const char *pattern, long pid, const char *exe, char *unknown)
{
    char host[256] = "", path[4096];
    gethostname(host, sizeof host - 1);
    char *real = realpath(exe, NULL);
    const char *name = real ? real : exe, *slash = strrchr(name, '/');
    struct mp_out_values v = { pid, start_second, slash ? slash + 1 : name, host };
    int rc = mp_out_expand(pattern, &v, path, sizeof path, unknown);
    free(real);
    return rc ? NULL : xstrdup(path);
}

/* Starts the program (its pid, or -1 reported); with_log, its stdin is
 * /dev/null and its stdout and stderr go to log_name(its profile): record
 * --live's screen is the terminal's. */
static struct sigaction old_int, old_quit;
static pid_t start(char **args, const char *exe, int with_log)
{
    struct sigaction ign = { .sa_handler = SIG_IGN };
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);      /* ^C goes to the child, which flushes */
    sigaction(SIGQUIT, &ign, &old_quit);
    pid_t pid = fork();
    if (pid < 0) return error(EXIT_FAILED, "record: fork: %s", strerror(errno)), -1;
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        const char *pattern = getenv("MP_OUT");
        char unknown, *out = pattern && strchr(pattern, '%') ? placed_out(pattern, (long)getpid(), exe, &unknown) : NULL;
        if (out) setenv("MP_OUT", out, 1);
        char *log = with_log ? log_name(getenv("MP_OUT") ? getenv("MP_OUT") : "profile.db") : NULL;
        int in = log ? open("/dev/null", O_RDONLY) : -1, fd = log ? open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
        if (in >= 0) dup2(in, 0), close(in);
        if (fd >= 0) dup2(fd, 1), dup2(fd, 2), close(fd);
        execv(exe, args);
        fprintf(stderr, "mpquery: %s: %s\n", args[0], strerror(errno));
        _exit(EXIT_NOT_FOUND);
    }
    return pid;
}

/* The program's exit code (128 + N when signal N killed it). */
static int exit_code(int status)
{
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static int wait_for(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return error(EXIT_FAILED, "record: waitpid: %s", strerror(errno));
    }
    return exit_code(status);
}

/* record --live: the live view of out while the program runs (live_view
 * asks ended() each turn); it stays on the last frame until q. */
struct live_child { pid_t pid; int status, ended; const char *what; char note[128], how[64]; };
static int ended(void *ctx)
{
    struct live_child *k = ctx;
    if (!k->ended && waitpid(k->pid, &k->status, WNOHANG) == k->pid) {
        k->ended = 1;
        const char *sig = WIFSIGNALED(k->status) ? sigabbrev_np(WTERMSIG(k->status)) : NULL;
        if (sig) snprintf(k->how, sizeof k->how, "killed by SIG%s", sig);     /* as info says it */
        else if (WIFSIGNALED(k->status)) snprintf(k->how, sizeof k->how, "killed by signal %d", WTERMSIG(k->status));
        snprintf(k->note, sizeof k->note, "%s %s%s%s(exit code %d): q to quit", k->what ? k->what : "the program",
                 *k->how ? "was " : "ended ", k->how, *k->how ? " " : "", exit_code(k->status));
    }
    return k->ended;
}

static int run_live(pid_t pid, const char *out, const char *log)
{
    struct live_child k = { .pid = pid };
    int rc = live_record(out, ended, &k, k.note, (long)pid, k.how);
    if (!ended(&k)) {
        warning("record: the live view closed; %s (pid %d) runs on, its output in %s: waiting for it (^C stops it)",
                out, (int)pid, log);
        return wait_for(pid);
    }
    if (rc > 128) return rc;
    status_line("the program's output is in %s", log);
    return exit_code(k.status);
}

/* An option of the MP_* table: row o->value, validated by the recorder's
 * own parser before it is stored in value[]; a flag row's value is "1". */
static int take_value(void *ctx, const struct opt *o, const char *arg)
{
    const char **value = ctx;
    size_t i = (size_t)o->value;
    if (!arg) arg = "1";
    if (!valid(i, arg)) return usage_error("record", "bad value '%s' for %s", arg, mp_option_defs[i].option);
    value[i] = arg;
    return 0;
}

/* The options into value[]: one entry per row of the MP_* table. PARSE_OK
 * to go on, or the exit code (0 after --help). */
static int parse_record_options(int argc, char **argv, const char **value)
{
    struct opt opts[MP_NOPTIONS + 5] = { { 0 } };
    for (size_t i = 0; i < MP_NOPTIONS; i++) {
        int letter;
        opts[i].name = long_name(i, &letter);
        opts[i].letter = (char)letter;
        opts[i].arg = *mp_option_defs[i].arg ? mp_option_defs[i].arg : NULL;
        opts[i].value = (int)i;
    }
    opts[OPT_VERBOSE] = (struct opt){ .name = "verbose", .flag = &verbose, .value = 1 };
    opts[OPT_LIVE] = (struct opt){ .name = "live", .flag = &live, .value = 1 };
    opts[OPT_ATTACH_PID] = (struct opt){ .name = "pid", .arg = "PID", .str = &pid_text };
    opts[OPT_ATTACH_DURATION] = (struct opt){ .name = "duration", .arg = "S", .str = &duration_text };
    const struct cmd_opts d = { .cmd = "record", .opts = opts, .missing = "missing COMMAND (or --pid PID)",
                                .in_order = 1, .operands_optional = 1, .help = print_help, .own = take_value,
                                .ctx = value };
    struct common c;
    int rc = parse_options(&c, &d, argc, argv);
    for (size_t i = 0; i < MP_NOPTIONS; i++)
        if (!strcmp(mp_option_defs[i].name, "MP_QUIET") && value[i]) quiet = !strcmp(value[i], "1");
    if (rc == PARSE_OK && quiet && verbose) return usage_error("record", "--quiet and --verbose exclude each other");
    if (rc == PARSE_OK && !pid_text && optind >= argc) return usage_error("record", "missing COMMAND (or --pid PID)");
    if (rc == PARSE_OK && pid_text && optind < argc)
        return usage_error("record", "--pid records a running process: no COMMAND with it ('%s')", argv[optind]);
    if (rc == PARSE_OK && duration_text && !pid_text) return usage_error("record", "--duration goes with --pid");
    return rc;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* The settings mp_attach reads: the options given, MP_OUT (abs_out, an
 * absolute path), MP_QUIET as for a command, the run's token. */
static char *attach_settings(const char *const *value, const char *abs_out, const char *token)
{
    struct strbuf sb = { 0 };
    sb_printf(&sb, "MP_OUT=%s\n", abs_out);
    for (size_t i = 0; i < MP_NOPTIONS; i++)
        if (value[i] && mp_option_defs[i].kind != VAL_PATH) sb_printf(&sb, "%s=%s\n", mp_option_defs[i].name, value[i]);
    int quiet_given = 0;
    for (size_t i = 0; i < MP_NOPTIONS; i++) quiet_given |= value[i] && !strcmp(mp_option_defs[i].name, "MP_QUIET");
    if (!quiet_given) sb_printf(&sb, "MP_QUIET=%d\n", verbose ? 0 : 1);
    sb_printf(&sb, "MP_RUN=%s\n", token);
    return sb.s;
}

/* record --pid: checks the values, then attach.c. */
static int record_pid(const char *const *value, const char *lib, const char *out)
{
    char *end;
    long pid = strtol(pid_text, &end, 10);
    if (*end || pid <= 0 || pid > 1 << 30) return usage_error("record", "bad value '%s' for --pid (a process id)", pid_text);
    double duration = 0;
    if (duration_text) {
        if (mp_parse_duration(duration_text, &duration) || !(duration > 0))
            return usage_error("record", "bad value '%s' for --duration (seconds > 0, or 500ms, 10m, 1h)", duration_text);
    }
    for (size_t i = 0; i < MP_NOPTIONS; i++)
        if (value[i] && !strcmp(mp_option_defs[i].name, "MP_SIGNAL"))
            return usage_error("record", "--signal does not go with --pid (the process's signals are left alone)");
    char token[64];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(token, sizeof token, "attach-%ld-%d-%lld.%09ld", pid, (int)getpid(), (long long)now.tv_sec, now.tv_nsec);
    char abs_out[4200], cwd[4096];
    if (out[0] == '/') snprintf(abs_out, sizeof abs_out, "%s", out);
    else snprintf(abs_out, sizeof abs_out, "%s/%s", getcwd(cwd, sizeof cwd) ? cwd : ".", out);
    char *settings = attach_settings(value, abs_out, token);
    int rc = record_attach((pid_t)pid, lib, abs_out, settings, token, duration, quiet);
    record_cache_debuginfo(abs_out);
    free(settings);
    return rc;
}

/* record --pid --live: the session runs in a child of record, its
 * messages in FILE.log, the live view of FILE in front; q ends the session
 * as ^C does (SIGINT: attach.c ends it once the process is let go, and the
 * detach writes the snapshot). */
static int record_pid_live(const char *const *value, const char *lib, const char *out)
{
    char *log = log_name(out);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        free(log);
        return error(EXIT_FAILED, "record: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644), nul = open("/dev/null", O_RDONLY);
        if (fd >= 0) dup2(fd, STDOUT_FILENO), dup2(fd, STDERR_FILENO);
        if (nul >= 0) dup2(nul, STDIN_FILENO);
        _exit(record_pid(value, lib, out));
    }
    struct live_child k = { .pid = pid, .what = "the session" };
    int rc = live_record(out, ended, &k, k.note, 0, NULL);
    if (!ended(&k)) {
        kill(pid, SIGINT);
        waitpid(pid, &k.status, 0);
    }
    status_line("record --pid's messages are in %s", log);
    free(log);
    return rc > 128 ? rc : exit_code(k.status);
}

int cmd_record(int argc, char **argv)
{
    const char *value[MP_NOPTIONS] = { 0 };
    int rc = parse_record_options(argc, argv, value);
    if (rc != PARSE_OK) return rc;
    if (live && (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)))
        return error(EXIT_BAD_INPUT, "record: --live needs a terminal (stdin and stdout)");
    char **args = argv + optind;
    char *exe = NULL, *lib = NULL, token[64], err[4400], unknown, *placed = NULL, *log = NULL;
    const char *out = out_path(value);
    struct run_count before;
    if (!pid_text && (rc = record_find_program(args[0], &exe))) goto done;
    if (!(lib = find_library())) {
        rc = error(EXIT_FAILED, "record: libmallocprof.so not found next to mpquery (nor in ../lib)");
        goto done;
    }
    /* -o's placeholders: checked in the name they make for record's own pid
     * (the same directory; the program's is made once it has one) */
    start_second = (long)time(NULL);
    if (strchr(out, '%')) {
        char target_exe[64];        /* --pid: the process's executable */
        snprintf(target_exe, sizeof target_exe, "/proc/%.20s/exe", pid_text ? pid_text : "self");
        if (!(placed = placed_out(out, pid_text ? atol(pid_text) : (long)getpid(), pid_text ? target_exe : exe, &unknown))) {
            rc = error(EXIT_BAD_INPUT, "record: %s: too long once its placeholders are put in", out);
            goto done;
        }
        if (unknown) warning("record: -o %s: unknown placeholder %%%c, kept as it is (%%p pid, %%e executable, "
                             "%%h host, %%t start time, %%%% a '%%')", out, unknown);
    }
    if (live && !getenv("MP_INTERVAL")) value[interval_row()] = value[interval_row()] ? value[interval_row()] : "1";
    if ((rc = record_cache_setup(value))) goto done;
    if (pid_text) {
        if (!(rc = record_check_out(placed ? placed : out)))
            rc = (live ? record_pid_live : record_pid)(value, lib, placed ? placed : out);
        goto done;
    }
    if ((rc = record_check_out(placed ? placed : out)) || (rc = set_environment(lib, value, token, sizeof token)))
        goto done;
    if ((rc = record_count(placed ? placed : out, token, &before, err, sizeof err))) {
        rc = error(rc, "%s: %s", placed ? placed : out, err);
        goto done;
    }
    double begin = now_seconds();
    pid_t pid = start(args, exe, live);
    if (pid < 0) { rc = EXIT_FAILED; goto done; }
    free(placed);
    placed = strchr(out, '%') ? placed_out(out, (long)pid, exe, &unknown) : NULL;
    if (placed) out = placed;
    if (live) log = log_name(out);
    rc = live ? run_live(pid, out, log) : wait_for(pid);
    record_report(out, token, &before, now_seconds() - begin, quiet);
    record_cache_debuginfo(out);
done:
    free(placed);
    free(log);
    free(lib);
    free(exe);
    return rc;
}
