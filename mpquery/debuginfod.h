/* Separate debug files fetched by build-id from debuginfod servers
 * (debuginfod.c), for `mpquery symbolize --debuginfod`: elfutils' client
 * library, libdebuginfod.so.1, loaded at run time only when asked for, so
 * mpquery builds and runs without it and nothing else in mallocprof ever
 * touches the network. A fetched file is checked (an ELF file with the
 * build-id asked for) before it is used; each failure is one sentence for
 * the caller's one line per module. */
#ifndef MPQUERY_DEBUGINFOD_H
#define MPQUERY_DEBUGINFOD_H

#include "mpquery.h"

struct dbgd_lib;                    /* the library's entry points */

/* The least a server must send per $DEBUGINFOD_TIMEOUT seconds: the
 * library's figure (100K), applied here to the whole fetch, its retries
 * included, rather than to each of its connections. */
#define DBGD_PACE 102400L

struct dbgd {
    struct dbgd_lib *lib;
    void *client;                   /* its debuginfod_client */
    const char *urls;               /* the servers ($DEBUGINFOD_URLS's format), for messages */
    char *cache;                    /* the cache directory, as the library uses it */
    int timeout;                    /* $DEBUGINFOD_TIMEOUT: a fetch is given up when its server has not
                                     * sent DBGD_PACE bytes in that many seconds; 0: no limit */
    int log_fd;                     /* the library's verbose output for the query under way */
    char unreachable[600];          /* why the servers were not reached ("": not yet seen) */
    /* the query under way */
    const char *module;             /* its file name, for the progress line */
    double started, shown_at;
    double paced_at;                /* when the last DBGD_PACE bytes had come (or the start) */
    long paced_bytes;               /* the bytes received then */
    int timed_out, answered, progress_shown;
    int tty;                        /* stderr's terminal width, 0: not a terminal (no progress) */
};

enum dbgd_result { DBGD_FETCHED, DBGD_NOT_FOUND, DBGD_FAILED };

/* Loads the library and sets its environment: urls (NULL or "": the
 * caller's $DEBUGINFOD_URLS), the cache directory (NULL: the library's
 * default) created if missing. 0, or EXIT_BAD_INPUT (no URL, a cache
 * that cannot be made) / EXIT_FAILED (no library) with one sentence in err. */
int dbgd_open(struct dbgd *d, const char *urls, const char *cache, char *err, size_t errsz);

/* The debug file of build-id (hex) for module (a path, for messages):
 * DBGD_FETCHED with *path (malloc'd: in the cache), DBGD_NOT_FOUND (no
 * build-id, or no server has it: a 404) or DBGD_FAILED (a server not
 * reached, an error, a file that is not the one asked for), with why. Once
 * the servers could not be reached (connection refused, no answer within
 * the timeout), the later calls fail at once without asking again. */
enum dbgd_result dbgd_fetch(struct dbgd *d, const char *build_id, const char *module, char **path,
                            char *why, size_t whysz);

void dbgd_close(struct dbgd *d);

#endif
