/* timeit: runs a command and reports its wall time and peak memory, for the
 * benchmark. Usage: timeit RESULT_FILE CMD [ARGS...]
 * stdin/stdout/stderr are the command's own; one line "WALL_S MAXRSS_KB STATUS"
 * is written to RESULT_FILE. The peak is wait4's ru_maxrss: the largest
 * single process among the command and the descendants it waited for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: timeit RESULT_FILE CMD [ARGS...]\n");
        return 2;
    }
    double start = now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("timeit: fork");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "timeit: %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("timeit: wait4");
            return 1;
        }
    }
    double wall = now() - start;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE *out = fopen(argv[1], "w");
    if (!out) {
        fprintf(stderr, "timeit: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    fprintf(out, "%.4f %ld %d\n", wall, ru.ru_maxrss, code);
    fclose(out);
    return code;
}
