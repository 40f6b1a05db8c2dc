/* A target of mpquery record --pid whose one thread waits in read with a
 * buffer on its stack full of stale return addresses into malloc
 * (tests/recorder/attach_stale_stack.sh): calls into malloc and free at
 * every depth of a recursion first fill the stack below main with them;
 * then main's callee waits for stdin with 64 KiB of that stack as its
 * (unwritten) buffer. A byte read: "got" and it waits again; the end of
 * stdin: "done", exit 0. Never preloaded. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* malloc and free called from every depth down to n frames */
__attribute__((noinline)) static size_t dirty(int n)
{
    void *p = malloc(24 + (size_t)n * 40);
    size_t sum = (size_t)p + (n > 0 ? dirty(n - 1) : 0);
    free(p);
    return sum;
}

__attribute__((noinline)) static int wait_input(void)
{
    char buf[65536];
    ssize_t n;
    while ((n = read(0, buf, sizeof buf)) > 0) printf("got\n");
    return (int)n;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    size_t s = 0;
    for (int i = 0; i < 100; i++) s += dirty(400);
    printf("ready\n");
    if (s == 1) return 2;       /* never: s kept */
    return wait_input() == 0 && printf("done\n") > 0 ? 0 : 1;
}
