/* Looks like a CPython interpreter of another version to the recorder
 * (tests/runtimes/python_frames.sh, built with -rdynamic): it exports
 * _PyRuntime and, unless built with -DNO_VERSION (3.10 and older have
 * none), Py_Version = 3.10.0. It allocates and exits 0. */
#include <stdio.h>
#include <stdlib.h>

char _PyRuntime[4096];
#ifndef NO_VERSION
const unsigned long Py_Version = 0x030a00f0;
#endif

int main(void)
{
    char *p = malloc(1000);
    printf("%s\n", p ? "fake interpreter" : "no memory");
    free(p);
    return 0;
}
