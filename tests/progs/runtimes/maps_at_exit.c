/* Copies /proc/self/maps to the file named by argv[1] from an atexit
 * handler: the last code of the program's own (the recorder's exit
 * snapshot runs after it, in a destructor). Allocates 100 blocks of 64
 * bytes from keep_blocks on the way; prints their count. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *maps_copy;
void *blocks[100];   /* global: the stores (and the mallocs) stay */

static void copy_maps(void)
{
    char buf[4096];
    ssize_t n;
    int in = open("/proc/self/maps", O_RDONLY), out = open(maps_copy, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0) _exit(2);
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) _exit(2);
    close(in);
    close(out);
}

__attribute__((noinline)) void keep_blocks(void)
{
    for (int i = 0; i < 100; i++) blocks[i] = malloc(64);
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    maps_copy = argv[1];
    atexit(copy_maps);
    keep_blocks();
    printf("%d blocks\n", (int)(sizeof blocks / sizeof blocks[0]));
    return 0;
}
