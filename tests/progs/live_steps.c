/* A program that grows in known steps, for mpquery live and MP_OUT's
 * placeholders (tests/mpquery/live.sh, tests/recorder/out_placeholders.sh).
 * Prints "pid N" first. Each of STEPS steps (argv[1], default 4): grow_small
 * holds 100 more blocks of 1000 bytes, grow_large 10 more of 10000 bytes,
 * then a pause of MS milliseconds (argv[2], default 1000). argv[3] "fork":
 * a child forked first holds one block of 5000 bytes (child_block) and
 * leaves; "exec": the program runs itself again with 1 step first, as a
 * child process (fork, exec). LIVE_STEPS_GATE=DIR: the test drives the
 * steps (no timing to race): after step K the program makes DIR/done.K and
 * waits for DIR/go.K+1 before the next step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(long ms)
{
    struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };
    while (nanosleep(&ts, &ts) != 0) {}
}

/* LIVE_STEPS_GATE: step s done; then, unless it was the last, wait for the
 * next one's go (no allocation: the counts stay those of the steps) */
static void gate_step(const char *gate, int s, int last)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/done.%d", gate, s);
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
    snprintf(path, sizeof path, "%s/go.%d", gate, s + 1);
    while (!last && access(path, F_OK) != 0) pause_ms(5);
}

__attribute__((noinline)) void *grow_small(void) { return malloc(1000); }
__attribute__((noinline)) void *grow_large(void) { return malloc(10000); }
__attribute__((noinline)) void *child_block(void) { return malloc(5000); }

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 4;
    long ms = argc > 2 ? atol(argv[2]) : 1000;
    const char *mode = argc > 3 ? argv[3] : "";
    const char *gate = getenv("LIVE_STEPS_GATE");
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
        if (gate) gate_step(gate, s, s == steps - 1);
    }
    int status;
    if (child > 0 && waitpid(child, &status, 0) != child) return 1;
    for (size_t i = 0; i < n; i++) free(held[i]);
    return 0;
}
