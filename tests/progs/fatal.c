/* Dies by a signal after fatal_alloc made 100 blocks of 64 bytes (kept):
 * fatal segv|bus|fpe|ill|abort|term|int|hup|kill-self SIG|own|reraise|
 * storm|corrupt|sleep.
 *   own:      installs its own SIGSEGV handler after start (prints, exits 3)
 *             and reports what sigaction said was installed before it
 *   reraise:  its SIGSEGV handler prints, restores SIG_DFL and re-raises
 *   storm:    allocates and frees forever (killed from outside)
 *   corrupt:  frees a block twice (glibc aborts inside free)
 *   sleep:    prints "ready" and sleeps (killed from outside) */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void *kept[100];

void fatal_alloc(void)
{
    for (int i = 0; i < 100; i++) kept[i] = malloc(64);
}

static void on_segv_exit(int sig)
{
    static const char msg[] = "handled\n";
    (void)sig;
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    _exit(3);
}

static void on_segv_reraise(int sig)
{
    static const char msg[] = "reraising\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void crash(const char *how)
{
    if (!strcmp(how, "segv")) *(volatile int *)16 = 1;
    if (!strcmp(how, "bus")) {
        FILE *f = tmpfile();
        char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(f), 0);   /* empty file */
        printf("%d\n", p[0]);
    }
    if (!strcmp(how, "fpe")) {
        volatile int zero = 0, one = 1;
        printf("%d\n", one / zero);
    }
    if (!strcmp(how, "ill")) __asm__ volatile("ud2");
    if (!strcmp(how, "abort")) abort();
    if (!strcmp(how, "term")) raise(SIGTERM);
    if (!strcmp(how, "int")) raise(SIGINT);
    if (!strcmp(how, "hup")) raise(SIGHUP);
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "segv";
    fatal_alloc();
    fflush(stdout);
    if (!strcmp(how, "own") || !strcmp(how, "reraise")) {
        struct sigaction before;
        sigaction(SIGSEGV, NULL, &before);
        printf("before: %s\n", before.sa_handler == SIG_DFL ? "SIG_DFL" : "a handler");
        fflush(stdout);
        signal(SIGSEGV, !strcmp(how, "own") ? on_segv_exit : on_segv_reraise);
        how = "segv";
    }
    if (!strcmp(how, "storm")) {
        puts("ready");
        fflush(stdout);
        for (;;) free(malloc(32));
    }
    if (!strcmp(how, "corrupt")) {
        char *volatile p = malloc(64);
        char *q = p;
        free(q);
        free(p);
    }
    if (!strcmp(how, "sleep")) {
        puts("ready");
        fflush(stdout);
        for (;;) pause();
    }
    crash(how);
    puts("survived");
    return 0;
}
