/* A program that grows in known steps, for mpquery live and MP_OUT's
 * placeholders (tests/mpquery/live.sh, tests/recorder/out_placeholders.sh).
 * Prints "pid N" first. Each of STEPS steps (argv[1], default 4): grow_small
 * holds 100 more blocks of 1000 bytes, grow_large 10 more of 10000 bytes,
 * then a pause of MS milliseconds (argv[2], default 1000). argv[3] "fork":
 * a child forked first holds one block of 5000 bytes (child_block) and
 * leaves; "exec": the program runs itself again with 1 step first, as a
 * child process (fork, exec). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(long ms)
{
    struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };
    while (nanosleep(&ts, &ts) != 0) {}
}

__attribute__((noinline)) void *grow_small(void) { return malloc(1000); }
__attribute__((noinline)) void *grow_large(void) { return malloc(10000); }
__attribute__((noinline)) void *child_block(void) { return malloc(5000); }

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 4;
    long ms = argc > 2 ? atol(argv[2]) : 1000;
    const char *mode = argc > 3 ? argv[3] : "";
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
    pid_t child = -1;
    if (!strcmp(mode, "fork") && (child = fork()) == 0) {
        void *b = child_block();
        free(b);
        _exit(0);
    }
    if (!strcmp(mode, "exec") && (child = fork()) == 0) {
        execl("/proc/self/exe", argv[0], "1", "0", (char *)NULL);
        _exit(127);
    }
    static void *held[1000000];
    size_t n = 0;
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < 100; i++) held[n++] = grow_small();
        for (int i = 0; i < 10; i++) held[n++] = grow_large();
        pause_ms(ms);
    }
    int status;
    if (child > 0 && waitpid(child, &status, 0) != child) return 1;
    for (size_t i = 0; i < n; i++) free(held[i]);
    return 0;
}
