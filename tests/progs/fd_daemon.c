/* A daemon's descriptors (tests/recorder/process_fd_daemon.sh): it closes every descriptor
 * but 0-2, then opens its own files, expecting the lowest numbers, and
 * writes to them; the recorder's descriptors, and those of the libraries
 * it uses (libunwind's pipe, libdw's files), must stay out of its way.
 *
 * fd_daemon PLUGIN DIR: allocates in a SIGUSR1 handler it raises (a stack
 * through a signal frame: libunwind checks the addresses it reads through
 * a pipe of its own), dlopens PLUGIN and calls plugin_run (new code:
 * unwind rules, libdw's files); closes 3..1023; opens DIR/f0 .. DIR/f7
 * (must get 3 .. 10); writes "fK\n" to each file 1000 times, raising
 * SIGUSR1 from a new stack depth every 100 lines, and in the middle
 * dlcloses PLUGIN (the recorder drops its libdw sessions) and takes a
 * snapshot; prints the descriptors it got and "ok", or where a write
 * failed (exit 3). */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mallocprof.h>

#define NFILES 8

static void on_usr1(int sig) { (void)sig; free(malloc(40)); }

/* raise from a new stack depth each time: libunwind checks only the
 * addresses it has not checked before */
__attribute__((noinline)) static void raise_at(int k)
{
    volatile char *pad = __builtin_alloca(64 * (size_t)k + 16);
    pad[0] = 0;
    raise(SIGUSR1);
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    raise_at(0);
    void *lib = dlopen(argv[1], RTLD_NOW);
    void (*run)(void) = lib ? (void (*)(void))dlsym(lib, "plugin_run") : NULL;
    if (!run) return 2;
    run();
    for (int fd = 3; fd < 1024; fd++) close(fd);
    int fds[NFILES];
    char path[4096], line[8];
    for (int k = 0; k < NFILES; k++) {
        snprintf(path, sizeof path, "%s/f%d", argv[2], k);
        fds[k] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    }
    for (int i = 0; i < 1000; i++) {
        for (int k = 0; k < NFILES; k++) {
            snprintf(line, sizeof line, "f%d\n", k);
            if (write(fds[k], line, 3) != 3) {
                printf("write %d to f%d (fd %d) failed\n", i, k, fds[k]);
                return 3;
            }
        }
        if (i == 500) {
            dlclose(lib);
            mp_snapshot("closed");
        }
        if (i % 100 == 0) raise_at(i / 100 + 1);
    }
    for (int k = 0; k < NFILES; k++) {
        if (close(fds[k])) return 4;
        printf("%d ", fds[k]);
    }
    printf("ok\n");
    return 0;
}
