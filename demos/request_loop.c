/* A newcomer's first profile: a toy server loop that parses requests,
 * caches responses (and forgets to evict some: a leak), and builds logs.
 *   parse_request   10000 x 64 bytes, freed
 *   cache_response   2500 x 512 bytes, 2000 evicted, 500 leaked (256000 bytes)
 *   format_log      10000 x 200 bytes via realloc growth, freed
 * Each request runs in a tag scope "request", its phases in "parse",
 * "cache" and "log" (mpquery tree shows them). */
#include "mallocprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *cache[2500];

char *parse_request(int i)
{
    char *r = malloc(64);
    snprintf(r, 64, "GET /item/%d", i);
    return r;
}

void cache_response(int slot, const char *req)
{
    cache[slot] = malloc(512);
    strncpy(cache[slot], req, 511);
    cache[slot][511] = 0;
}

char *format_log(const char *req)
{
    char *line = malloc(100);
    snprintf(line, 100, "%s", req);
    line = realloc(line, 200);
    strcat(line, " -> 200 OK");
    return line;
}

int main(void)
{
    size_t logged = 0;
    for (int i = 0; i < 10000; i++) {
        mp_tag_push("request");
        mp_tag_push("parse");
        char *req = parse_request(i);
        mp_tag_pop();
        if (i % 4 == 0) {
            mp_tag_push("cache");
            cache_response(i / 4, req);
            mp_tag_pop();
        }
        mp_tag_push("log");
        char *log = format_log(req);
        mp_tag_pop();
        logged += strlen(log);
        free(log);
        free(req);
        mp_tag_pop();
    }
    for (int i = 0; i < 2000; i++) free(cache[i]);   /* the last 500 leak */
    printf("served 10000 requests, %zu bytes of log\n", logged);
    return 0;
}
