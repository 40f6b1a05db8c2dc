/* A small steady program for mpquery record --pid's memory test
 * (tests/recorder/attach_memory.sh): allocates and frees in a loop,
 * holding a ring of 256 blocks; on a line "fork" on stdin it forks a child
 * that prints its pid, waits 1 s and exits. Never preloaded: attached to.
 * Exits 7 at the end of stdin. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

static void child(void)
{
    printf("child %d\n", (int)getpid());
    fflush(stdout);
    void *p = malloc(1000);
    sleep(1);
    free(p);
    exit(0);
}

int main(void)
{
    void *ring[256] = { 0 };
    unsigned long n = 0;
    char line[64];
    for (;;) {
        for (int i = 0; i < 16; i++, n++) {
            free(ring[n % 256]);
            ring[n % 256] = malloc(16 + n % 500);
            memset(ring[n % 256], 1, 16);
        }
        struct pollfd p = { 0, POLLIN, 0 };
        if (poll(&p, 1, 1) <= 0) continue;
        if (!fgets(line, sizeof line, stdin)) break;
        if (!strcmp(line, "fork\n")) {
            fflush(stdout);
            pid_t c = fork();
            if (c == 0) child();
            if (c > 0) waitpid(c, NULL, 0);
        }
    }
    for (int i = 0; i < 256; i++) free(ring[i]);
    printf("%lu blocks\n", n);
    return 7;
}
