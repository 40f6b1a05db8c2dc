/* A program whose every name is hostile text (tests/mpquery/escape.sh):
 *   hostile_names THREAD TAG LABEL...
 * names the main thread THREAD (pthread_setname_np: at most 15 bytes),
 * allocates 100 bytes in the tag scope TAG (a function name, "[tag]"
 * module), then per LABEL allocates 1000 bytes more and takes a snapshot
 * labelled LABEL (mp_snapshot). Every block stays live. Its command line
 * holds them all; its executable's name is the test's choice. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "mallocprof.h"

static void *keep[64];

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 60) {
        fprintf(stderr, "usage: hostile_names THREAD TAG LABEL...\n");
        return 2;
    }
    if (pthread_setname_np(pthread_self(), argv[1]) != 0) {
        fprintf(stderr, "hostile_names: cannot name the thread '%s'\n", argv[1]);
        return 1;
    }
    mp_tag_push(argv[2]);
    keep[0] = malloc(100);
    mp_tag_pop();
    for (int i = 3; i < argc; i++) {
        keep[i] = malloc(1000);
        if (mp_snapshot(argv[i]) != 0) return 1;
    }
    return 0;
}
