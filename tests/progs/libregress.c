/* A regression planted in any program (LD_PRELOAD, tests/runtimes/check_real.sh):
 * at load, regress_work allocates MP_TEST_WORK bytes in 64 KiB blocks,
 * each freed at once, and regress_hold MP_TEST_HOLD bytes in 64 KiB blocks
 * that stay live to the end. A baseline run sets both to the base amounts;
 * a regressed run to 10 % more work, or 1 MB more held. */
#include <stdlib.h>

enum { BLOCK = 64 * 1024 };

static size_t amount(const char *name)
{
    const char *v = getenv(name);
    return v ? strtoull(v, NULL, 10) : 0;
}

__attribute__((noinline)) void regress_work(size_t bytes)
{
    for (size_t done = 0; done < bytes; done += BLOCK) {
        volatile char *p = malloc(BLOCK);
        if (p) p[0] = 1;
        free((void *)p);
    }
}

__attribute__((noinline)) void regress_hold(size_t bytes)
{
    for (size_t done = 0; done < bytes; done += BLOCK) {
        volatile char *p = malloc(BLOCK);
        if (p) p[0] = 1;        /* never freed: live at exit */
    }
}

__attribute__((constructor)) static void regress_init(void)
{
    regress_work(amount("MP_TEST_WORK"));
    regress_hold(amount("MP_TEST_HOLD"));
}
