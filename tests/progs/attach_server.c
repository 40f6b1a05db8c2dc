/* A server-like program for mpquery record --pid (tests/mpquery/record_pid.sh):
 * answers each request line of stdin (a number) with one line, allocating
 * and freeing a buffer per request (request) and leaking one block per
 * session of 50 requests (session). Never preloaded: attached to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void **leaked;
static size_t nleaked;

/* One session's state, never freed. */
static void session(unsigned long n)
{
    leaked = realloc(leaked, (nleaked + 1) * sizeof *leaked);
    leaked[nleaked] = malloc(100);
    memset(leaked[nleaked], (int)(n & 0xff), 100);
    nleaked++;
}

static unsigned long request(unsigned long n)
{
    char *buf = malloc(64 + n % 64);
    int len = snprintf(buf, 64, "request %lu", n);
    unsigned long sum = 0;
    for (int i = 0; i < len; i++) sum = sum * 31 + (unsigned char)buf[i];
    free(buf);
    return sum;
}

int main(void)
{
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        unsigned long n = strtoul(line, NULL, 10);
        if (n % 50 == 0) session(n);
        printf("%lu %lu\n", n, request(n));
        fflush(stdout);
    }
    printf("%zu sessions\n", nleaked);
    return 3;
}
