/* Hello, world through stdio: glibc's stdout buffer (_IO_file_doallocate)
 * is allocated on the first printf and never freed, a leak of the runtime
 * that mpquery leaks' built-in list suppresses. With an argument "leak" it
 * also leaks 3 blocks of 100 bytes of its own, in leak_some. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *kept[3];

void leak_some(void)
{
    for (int i = 0; i < 3; i++) kept[i] = malloc(100);
}

int main(int argc, char **argv)
{
    printf("hello, world\n");
    if (argc > 1 && !strcmp(argv[1], "leak")) leak_some();
    for (int i = 0; i < 3; i++) kept[i] = NULL;     /* nothing points to them */
    return 0;
}
