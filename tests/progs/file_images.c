/* file_images: stacks through libc and the program (2^10 paths, a
 * qsort's comparator allocating, strdup), a snapshot (mp_snapshot, which
 * names their return addresses with libdw), then what /proc/self/smaps says
 * of the files the profiler mapped whole to read them: private (rw-p)
 * mappings of a file at offset 0 (the loader maps no segment so). One line:
 * "images N resident KIB". smaps is read with plain system calls into a
 * static buffer, so that nothing here allocates after the snapshot (a new
 * stack would be unwound and read those files again). */
#include "mallocprof.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink;
void branch1(int level, int levels, unsigned long bits);
void path_end(void) { sink = strdup("a path's end"); free(sink); }
void branch0(int level, int levels, unsigned long bits)
{
    if (level == levels) path_end();
    else if (bits >> level & 1) branch1(level + 1, levels, bits);
    else branch0(level + 1, levels, bits);
}
void branch1(int level, int levels, unsigned long bits)
{
    if (level == levels) path_end();
    else if (bits >> level & 1) branch1(level + 1, levels, bits);
    else branch0(level + 1, levels, bits);
}

static int by_value(const void *a, const void *b)
{
    sink = malloc(16);
    free(sink);
    return *(const int *)a - *(const int *)b;
}

static char smaps[1 << 22];

int main(void)
{
    for (unsigned long bits = 0; bits < 1ul << 10; bits++) branch0(0, 10, bits);
    int v[64];
    for (int i = 0; i < 64; i++) v[i] = (i * 37) % 64;
    qsort(v, 64, sizeof *v, by_value);
    if (mp_snapshot("after") != 0) return 1;
    int fd = open("/proc/self/smaps", O_RDONLY), images = 0, image = 0;
    size_t n = 0;
    ssize_t got;
    while (fd >= 0 && n < sizeof smaps - 1 && (got = read(fd, smaps + n, sizeof smaps - 1 - n)) > 0) n += (size_t)got;
    smaps[n] = 0;
    long kib = 0;
    for (char *line = smaps, *end; *line; line = end + 1) {
        if (!(end = strchr(line, '\n'))) break;
        *end = 0;
        unsigned long lo, hi, off;
        char perms[8], path[8] = "";
        int fields = sscanf(line, "%lx-%lx %7s %lx %*s %*s %7s", &lo, &hi, perms, &off, path);
        if (fields >= 4) image = !strcmp(perms, "rw-p") && off == 0 && path[0] == '/', images += image;
        else if (image && !strncmp(line, "Rss:", 4)) kib += atol(line + 4);
    }
    printf("images %d resident %ld\n", images, kib);
    return 0;
}
