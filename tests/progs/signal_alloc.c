/* A 50 us interval timer interrupts a malloc/free loop (handler_loop: 1.5 M
 * blocks of 40 bytes): often inside malloc or free. The SIGALRM handler
 * allocates and frees a block of 24 bytes, and allocates one of 8 bytes
 * that main frees at the end. Prints the number of signals handled. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define MAX_KEPT 200000
static volatile sig_atomic_t nsig;
static void *kept[MAX_KEPT];

static void on_alarm(int sig)
{
    (void)sig;
    if (nsig >= MAX_KEPT) return;
    free(malloc(24));
    kept[nsig] = malloc(8);
    nsig++;
}

void handler_loop(void)
{
    for (int i = 0; i < 1500000; i++) {
        char *volatile p = malloc(40);
        free(p);
    }
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, 50 }, { 0, 50 } }, off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &it, NULL);
    handler_loop();
    setitimer(ITIMER_REAL, &off, NULL);
    int n = nsig;
    for (int i = 0; i < n; i++) free(kept[i]);
    printf("%d\n", n);
    return 0;
}
