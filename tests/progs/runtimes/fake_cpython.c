/* Looks like a CPython interpreter to the recorder
 * (tests/runtimes/python_frames.sh, built with -rdynamic): it exports
 * _PyRuntime and Py_Version = 3.10.0; with -DNO_VERSION none (3.10 and
 * older have none); with -DFAULTY 3.11's symbols, and a GIL holder's
 * thread state at an unmapped address, so reading the frames faults. It
 * allocates and exits 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

_Alignas(64) char _PyRuntime[4096];
#ifdef FAULTY
const unsigned long Py_Version = 0x030b02f0;
struct { void *refcnt, *type; } PyType_Type, PyCode_Type = { NULL, &PyType_Type };
void _PyEval_EvalFrameDefault(void) {}
#elif !defined NO_VERSION
const unsigned long Py_Version = 0x030a00f0;
#endif

int main(void)
{
#ifdef FAULTY
    *(uintptr_t *)(_PyRuntime + 576) = 0x1000;      /* 3.11's gilstate.tstate_current */
#endif
    char *p = malloc(1000);
    printf("%s\n", p ? "fake interpreter" : "no memory");
    free(p);
    return 0;
}
