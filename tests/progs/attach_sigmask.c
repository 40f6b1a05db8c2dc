/* A target of mpquery record --pid with signals of its own blocked
 * (tests/recorder/attach_sigmask.sh): its one thread blocks SIGUSR1 and
 * SIGRTMIN+3, prints "ready" and reads stdin (a line: "got"); the end of
 * stdin: "done", exit 0. Never preloaded. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGRTMIN + 3);
    if (sigprocmask(SIG_BLOCK, &set, NULL)) return 2;
    printf("ready\n");
    char buf[256];
    ssize_t n;
    while ((n = read(0, buf, sizeof buf)) > 0) printf("got\n");
    printf("done\n");
    return n == 0 ? 0 : 1;
}
