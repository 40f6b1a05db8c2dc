/* A daemon's double fork (tests/recorder/process_double_fork.sh): main forks a child,
 * which forks the daemon and leaves at once (_exit 0); main waits for the
 * child; the daemon waits until its parent is gone (getppid() is no longer
 * the child), makes 100 blocks of 50 bytes (daemon_work), writes its pid
 * to a pipe and exits 0; main prints that pid (the test waits for the
 * daemon's end) and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;
__attribute__((noinline)) void daemon_work(void) { for (int i = 0; i < 100; i++) sink = malloc(50); }

int main(void)
{
    int p[2];
    if (pipe(p)) return 1;
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
        pid_t me = getpid();
        pid_t d = fork();
        if (d < 0) _exit(1);
        if (d > 0) _exit(0);
        while (getppid() == me) usleep(1000);
        daemon_work();
        pid_t self = getpid();
        if (write(p[1], &self, sizeof self) != sizeof self) exit(1);
        exit(0);
    }
    close(p[1]);
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) return 1;
    pid_t daemon;
    if (read(p[0], &daemon, sizeof daemon) != sizeof daemon) return 1;
    printf("%d\n", (int)daemon);
    return 0;
}
