/* Memory over time (tests/recorder/ticks.sh): step_alloc holds 1000000
 * bytes more every 300 ms, four times (1, 2, 3, 4 MB live), frees them
 * all and sleeps 300 ms: about 1.5 s. With argument "fork", a child forked
 * first holds 500000 bytes (child_alloc) for 400 ms and leaves by _exit;
 * the parent waits for it at the end. No stdio. */
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

__attribute__((noinline)) void *step_alloc(void) { return malloc(1000000); }
__attribute__((noinline)) void *child_alloc(void) { return malloc(500000); }

int main(int argc, char **argv)
{
    pid_t child = -1;
    if (argc > 1 && !strcmp(argv[1], "fork") && (child = fork()) == 0) {
        void *c = child_alloc();
        pause_ms(400);
        free(c);
        _exit(0);
    }
    void *p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = step_alloc();
        pause_ms(300);
    }
    for (int i = 0; i < 4; i++) free(p[i]);
    pause_ms(300);
    int status;
    if (child > 0 && waitpid(child, &status, 0) != child) return 1;
    return 0;
}
