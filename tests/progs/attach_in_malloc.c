/* A target of mpquery record --pid whose main thread sleeps in a signal
 * handler that interrupted malloc or free (tests/recorder/attach_in_malloc.sh,
 * issue 41): the main thread allocates and frees in a loop; a second
 * thread sends it SIGUSR1 every millisecond until the handler finds the
 * interrupted instruction inside libc (the loop calls nothing else there),
 * then the handler sleeps for SLEEP seconds (argv[1]) holding whatever
 * lock the allocator held. The second thread prints "caught", then waits
 * for the end of stdin and ends the loop: "done", exit 0. Never preloaded. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static uintptr_t libc_lo, libc_hi;
static volatile int caught, stop;
static double sleep_s = 5;

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    if (!strstr(info->dlpi_name, "libc.so")) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
            libc_lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            libc_hi = libc_lo + info->dlpi_phdr[i].p_memsz;
        }
    return 1;
}

static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)si;
    uintptr_t ip = (uintptr_t)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
    if (caught || ip < libc_lo || ip >= libc_hi) return;
    caught = 1;
    struct timespec t = { (time_t)sleep_s, (long)((sleep_s - (time_t)sleep_s) * 1e9) };
    while (nanosleep(&t, &t) != 0) {
    }
}

static void *sender(void *main_thread)
{
    struct timespec ms = { 0, 1000000L };
    while (!caught) {
        pthread_kill(*(pthread_t *)main_thread, SIGUSR1);
        nanosleep(&ms, NULL);
    }
    printf("caught\n");
    char c;
    while (read(0, &c, 1) > 0) {
    }
    stop = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1) sleep_s = atof(argv[1]);
    dl_iterate_phdr(find_libc, NULL);
    struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_RESTART };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t self = pthread_self(), t;
    void *ring[64] = { 0 };
    if (!libc_lo || pthread_create(&t, NULL, sender, &self) != 0) return 2;
    for (unsigned long n = 0; !stop; n++) {
        free(ring[n % 64]);
        ring[n % 64] = malloc(16 + n % 3000);
    }
    pthread_join(t, NULL);
    for (int i = 0; i < 64; i++) free(ring[i]);
    printf("done\n");
    return 0;
}
