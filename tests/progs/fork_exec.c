/* Parent: parent_work 10 x 111 bytes (freed). Forks; the child runs
 * child_before_exec 20 x 222 bytes (leaked), then execs this program with
 * argument "exec": exec_work 30 x 333 bytes (freed). The parent waits and
 * exits with the child's status (5). Expected: three process rows (parent,
 * child before exec, same pid after exec) with exactly those counts. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void parent_work(void) { for (int i = 0; i < 10; i++) free(malloc(111)); }
void *leak[20];
void child_before_exec(void) { for (int i = 0; i < 20; i++) leak[i] = malloc(222); }
void exec_work(void) { for (int i = 0; i < 30; i++) free(malloc(333)); }

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "exec")) {
        exec_work();
        return 5;
    }
    parent_work();
    pid_t pid = fork();
    if (pid == 0) {
        child_before_exec();
        execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
