/* A daemon's descriptors against the profiler's background thread
 * (tests/recorder/process_fd_daemon.sh): closes every descriptor but 0-2
 * (HOW: close, close_range or closefrom), then ROUNDS times opens 8 files
 * (each must get 3 + k) and closes them, allocating between; the profiler
 * reads /proc/self/statm every MP_TICK meanwhile. Its descriptor was
 * opened for each read, and a read that fell between two of the program's
 * opens took a number the program expected. Prints how many opens got
 * another number. A block kept live from the start holds the live bytes
 * at the peak: no peak snapshot is written ahead (its SQLite files). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int rounds = atoi(argv[2]);
    char *keep = malloc(1 << 20);
    if (!strcmp(argv[1], "close"))
        for (int fd = 3; fd < 1024; fd++) close(fd);
    else if (!strcmp(argv[1], "close_range"))
        close_range(3, ~0u, 0);
    else if (!strcmp(argv[1], "closefrom"))
        closefrom(3);
    else
        return 2;
    int moved = 0;
    for (int r = 0; r < rounds; r++) {
        int fds[8];
        for (int k = 0; k < 8; k++) {
            fds[k] = open("/dev/null", O_RDONLY);
            moved += fds[k] != 3 + k;
        }
        for (int k = 0; k < 8; k++) close(fds[k]);
        free(malloc(64));
    }
    printf("%d opens moved\n", moved + !keep);
    free(keep);
    return 0;
}
