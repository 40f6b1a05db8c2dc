/* Temporary files mpquery makes (the merge of several files a command
 * reads; merge -o's output until it is renamed): removed when mpquery
 * exits (atexit), and when a signal that ends it arrives (the handler
 * removes them, then dies of the signal as before). */
#include "mpquery.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The paths are fixed buffers: the handler only reads them. */
#define MAX_TEMPS 8
static char temps[MAX_TEMPS][4096];
static volatile sig_atomic_t ntemps;

static void remove_temps(void)
{
    for (int i = 0; i < ntemps; i++)
        if (temps[i][0]) unlink(temps[i]);
}

static void die_of(int sig)
{
    remove_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void remove_at_exit(void)
{
    static const int fatal[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE };
    static int done;
    if (done) return;
    done = 1;
    atexit(remove_temps);
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) {
        struct sigaction old, sa = { .sa_handler = die_of };
        if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) sigaction(fatal[i], &sa, NULL);
    }
}

int temp_create(const char *prefix, const char **path, char *err, size_t errlen)
{
    remove_at_exit();
    if (ntemps == MAX_TEMPS || snprintf(temps[ntemps], sizeof temps[0], "%sXXXXXX", prefix) >= (int)sizeof temps[0]) {
        snprintf(err, errlen, "%s: cannot create a temporary file (name too long)", prefix);
        return EXIT_FAILED;
    }
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);     /* created and listed, or neither */
    int fd = mkstemp(temps[ntemps]);
    if (fd >= 0) *path = temps[ntemps++];
    int saved = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        snprintf(err, errlen, "%sXXXXXX: cannot create (%s)", prefix, strerror(saved));
        return EXIT_BAD_INPUT;
    }
    close(fd);
    return 0;
}

void temp_forget(const char *path, int remove)
{
    for (int i = 0; i < ntemps; i++)
        if (temps[i] == path) {
            if (remove) unlink(temps[i]);
            temps[i][0] = 0;
        }
}
