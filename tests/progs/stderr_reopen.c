/* Closes fd 2 and opens its data file (argv[1]) there, as daemons do, then
 * allocates (stderr_alloc: 10 blocks of 32 bytes) and writes one line of
 * data to fd 2. The file must hold that line and nothing else. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

void stderr_alloc(void)
{
    for (int i = 0; i < 10; i++) free(malloc(32));
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    close(2);
    if (open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644) != 2) return 3;
    stderr_alloc();
    static const char line[] = "data\n";
    if (write(2, line, sizeof line - 1) != sizeof line - 1) return 4;
    return 0;
}
