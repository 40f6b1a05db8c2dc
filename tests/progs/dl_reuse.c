/* Loads ./liba.so, calls alpha_alloc (10 blocks of 100 bytes, freed) and
 * unloads it, then the same with ./libb.so and beta_alloc (200 bytes): the
 * two libraries have the same layout, so the loader maps each where the
 * other was, and the same return addresses mean alpha's frames, then
 * beta's. Argument: rounds (default 10). Relative names on purpose. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    const char *libs[2] = { "./liba.so", "./libb.so" }, *fns[2] = { "alpha_alloc", "beta_alloc" };
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 2; k++) {
            void *h = dlopen(libs[k], RTLD_NOW);
            if (!h) {
                fprintf(stderr, "%s\n", dlerror());
                return 1;
            }
            void *(*f)(int) = (void *(*)(int))dlsym(h, fns[k]);
            for (int i = 0; i < 10; i++) free(f(k ? 200 : 100));
            dlclose(h);
        }
    }
    puts("ok");
    return 0;
}
