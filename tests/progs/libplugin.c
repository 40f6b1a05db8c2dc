/* Built as build/tests/libplugin.so. A static (non-exported) function
 * allocates: 42 blocks of 77 bytes, 40 freed at once, 2 kept until
 * plugin_release. dl_plugin dlcloses the library before exit. */
#include <stdlib.h>

static void *kept[2];

static __attribute__((noinline)) void plugin_static_alloc(void)
{
    for (int i = 0; i < 42; i++) {
        void *p = malloc(77);
        if (i < 2) kept[i] = p;
        else free(p);
    }
}

void plugin_run(void) { plugin_static_alloc(); }
void plugin_release(void) { free(kept[0]); free(kept[1]); }
