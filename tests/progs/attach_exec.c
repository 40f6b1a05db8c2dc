/* A program that runs another by one of the exec variants, for mpquery
 * record --pid (tests/recorder/attach_exec.sh): waits for a line on stdin
 * naming the variant (execl, execlp, execle, execv, execvp, execve,
 * execvpe), allocates 10 blocks of 1000 bytes in exec_marker (kept), then
 * runs "sleep 0.3" by that variant. Never preloaded: attached to. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

__attribute__((noinline)) static void exec_marker(void)
{
    for (int i = 0; i < 10; i++) {
        char *volatile p = malloc(1000);
        memset(p, 1, 1000);
    }
}

int main(void)
{
    char line[64];
    if (!fgets(line, sizeof line, stdin)) return 3;
    line[strcspn(line, "\n")] = 0;
    exec_marker();
    char *argv[] = { "sleep", "0.3", NULL };
    if (!strcmp(line, "execl")) execl("/bin/sleep", "sleep", "0.3", (char *)NULL);
    else if (!strcmp(line, "execlp")) execlp("sleep", "sleep", "0.3", (char *)NULL);
    else if (!strcmp(line, "execle")) execle("/bin/sleep", "sleep", "0.3", (char *)NULL, environ);
    else if (!strcmp(line, "execv")) execv("/bin/sleep", argv);
    else if (!strcmp(line, "execvp")) execvp("sleep", argv);
    else if (!strcmp(line, "execve")) execve("/bin/sleep", argv, environ);
    else if (!strcmp(line, "execvpe")) execvpe("sleep", argv, environ);
    else return 2;
    perror(line);
    return 1;
}
