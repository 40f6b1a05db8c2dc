/* Frees exactly what it allocates (own_alloc: 5 rounds of 1000 blocks of
 * 100 bytes) while the recorder takes interval and API snapshots; changes
 * its environment with setenv/unsetenv afterwards; a function with a C++
 * mangled name makes the recorder look for a demangler. Prints what
 * dlerror() says after the snapshots (the recorder's must not show) and
 * "done". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "mallocprof.h"

void mangled(void) __asm__("_Z7mangledv");

__attribute__((noinline)) void mangled(void)
{
    free(malloc(10));
}

void own_alloc(void)
{
    void *p[1000];
    for (int i = 0; i < 1000; i++) p[i] = malloc(100);
    for (int i = 0; i < 1000; i++) free(p[i]);
}

int main(void)
{
    mangled();
    for (int r = 0; r < 5; r++) {
        own_alloc();
        mp_snapshot("round");
        usleep(20000);
    }
    setenv("OWN_A", "1", 1);
    setenv("OWN_B", "2", 1);
    unsetenv("OWN_A");
    const char *e = dlerror();
    printf("dlerror: %s\n", e ? e : "none");
    puts("done");
    return 0;
}
