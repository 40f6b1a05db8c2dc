/* A thread whose first allocation happens inside pthread_getattr_np, as in
 * Rust's runtime (glibc allocates the affinity mask while holding the
 * thread's lock): the main thread and 4 threads each call it first thing,
 * then getattr_alloc makes 100 blocks of 24 bytes, freed. Prints "ok". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void getattr_alloc(void)
{
    for (int i = 0; i < 100; i++) free(malloc(24));
}

static void *first_thing(void *arg)
{
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) pthread_attr_destroy(&attr);
    getattr_alloc();
    return arg;
}

int main(void)
{
    first_thing(NULL);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, first_thing, NULL);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    puts("ok");
    return 0;
}
