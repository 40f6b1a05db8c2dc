/* Allocates while a 100 us interval timer interrupts it with SIGALRM (the
 * handler counts, SA_RESTART off, so sleeps are interrupted and resumed),
 * and asks the profiler for two snapshots with raise(SIGUSR2) (run with
 * MP_SIGNAL=USR2), waiting 300 ms after each. storm_alloc: 3 x 20000 blocks
 * of 40 bytes, freed. Prints "ok" and exits 0 if the program saw signals. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t alarms;
static void on_alarm(int sig) { (void)sig; alarms++; }

void storm_alloc(void)
{
    for (int i = 0; i < 20000; i++) {
        char *p = malloc(40);
        p[0] = (char)i;
        free(p);
    }
}

static void pause_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000 }, rem;
    while (nanosleep(&t, &rem) != 0) t = rem;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, 100 }, { 0, 100 } };
    setitimer(ITIMER_REAL, &it, NULL);
    storm_alloc();
    raise(SIGUSR2);
    pause_ms(300);
    storm_alloc();
    raise(SIGUSR2);
    pause_ms(300);
    storm_alloc();
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    puts(alarms > 0 ? "ok" : "no alarms");
    return 0;
}
