/* A vfork child runs in its parent's memory (tests/recorder/process_vfork.sh): what
 * it does on its way out must not end its parent's profile.
 *
 * vfork_child: main makes 1000 blocks of 100 bytes (before_vfork), then
 * vforks a child that execs a file that does not exist and leaves with
 * _exit(127); then 1000 more (between), vforks a child that execs
 * /bin/true; then 1000 more (after_vfork), frees nothing, and exits 3. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;
__attribute__((noinline)) void before_vfork(void) { for (int i = 0; i < 1000; i++) sink = malloc(100); }
__attribute__((noinline)) void between(void) { for (int i = 0; i < 1000; i++) sink = malloc(100); }
__attribute__((noinline)) void after_vfork(void) { for (int i = 0; i < 1000; i++) sink = malloc(100); }

static int run(const char *path)
{
    pid_t pid = vfork();
    if (pid == 0) {
        char *argv[] = { (char *)path, NULL };
        execv(path, argv);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

int main(void)
{
    before_vfork();
    if (run("/nonexistent/program") != 127) return 1;
    between();
    if (run("/bin/true") != 0) return 1;
    after_vfork();
    return 3;
}
