/* The unit tests' checks: an assertion that names the file, line and failing
 * expression and ends the program with status 1 (heaptrack's tst_trace
 * style), and an "ok:" line per behaviour checked. No dependency on either
 * program's headers: the recorder's tests (unit.h) and mpquery's (mpq_*.c)
 * both include it. */
#ifndef MP_CHECK_H
#define MP_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(expr) do { \
        if (!(expr)) { \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #expr); \
            exit(1); \
        } \
    } while (0)

/* Both sides as unsigned 64-bit numbers, printed when they differ. */
#define CHECK_EQ(actual, expected) do { \
        unsigned long long a_ = (unsigned long long)(actual), e_ = (unsigned long long)(expected); \
        if (a_ != e_) { \
            fprintf(stderr, "%s:%d: check failed: %s == %s (got %llu = %#llx, expected %llu = %#llx)\n", \
                    __FILE__, __LINE__, #actual, #expected, a_, a_, e_, e_); \
            exit(1); \
        } \
    } while (0)

/* Two NUL-terminated strings, printed when they differ. */
#define CHECK_STR(actual, expected) do { \
        const char *a_ = (actual), *e_ = (expected); \
        if (strcmp(a_, e_) != 0) { \
            fprintf(stderr, "%s:%d: check failed: %s == %s (got [%s], expected [%s])\n", \
                    __FILE__, __LINE__, #actual, #expected, a_, e_); \
            exit(1); \
        } \
    } while (0)

#define OK(...) do { printf("  ok: " __VA_ARGS__); printf("\n"); fflush(stdout); } while (0)

#endif
