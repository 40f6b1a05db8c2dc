/* A target of mpquery record --pid where a call into it takes long
 * (tests/recorder/attach_kill.sh, issue 41): on each line "hold" on stdin
 * a second thread holds the dynamic loader's lock (in dl_iterate_phdr's
 * callback) for HOLD ms (argv[1]) once, so that a dlopen made by the main
 * thread meanwhile waits there; the main thread allocates and frees in a
 * loop, polling stdin. At its end: "done" and exit 7. Never preloaded. */
#define _GNU_SOURCE
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile int stop, holds;
static long hold_ms;

static int hold(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info, (void)size, (void)arg;
    struct timespec t = { hold_ms / 1000, hold_ms % 1000 * 1000000L };
    while (nanosleep(&t, &t) != 0) {
    }
    return 1;
}

static void *holder(void *arg)
{
    (void)arg;
    struct timespec ms = { 0, 1000000L };
    for (int done = 0; !stop; nanosleep(&ms, NULL))
        if (done < holds) {
            dl_iterate_phdr(hold, NULL);
            done++;
        }
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    hold_ms = argc > 1 ? atol(argv[1]) : 0;
    pthread_t t;
    if (hold_ms > 0 && pthread_create(&t, NULL, holder, NULL) != 0) return 2;
    void *ring[64] = { 0 };
    char line[64];
    for (unsigned long n = 0;; n++) {
        free(ring[n % 64]);
        ring[n % 64] = malloc(16 + n % 500);
        struct pollfd p = { 0, POLLIN, 0 };
        if (n % 16 || poll(&p, 1, 1) <= 0) continue;
        if (!fgets(line, sizeof line, stdin)) break;
        if (!strcmp(line, "hold\n")) holds++;
    }
    stop = 1;
    if (hold_ms > 0) pthread_join(t, NULL);
    for (int i = 0; i < 64; i++) free(ring[i]);
    printf("done\n");
    return 7;
}
