/* What every mpquery file takes first: _GNU_SOURCE, the version, the exit
 * codes and the limits on what a file may hold, and util.h's containers.
 * Nothing else: each module has its header, by role (docs/layout.md):
 * counters.h (a stack's counters), profile.h (the in-memory profile and
 * its loader), select.h, rules.h, view.h, output.h, escape.h, listing.h,
 * load.h, symdb.h, merge.h, server.h, options.h, opt_groups.h,
 * commands.h. */
#ifndef MPQUERY_H
#define MPQUERY_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE         /* qsort_r, memmem, REG_STARTEND: every .c includes this first */
#endif

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define MPQ_VERSION "1.0"
#define NAME_MAX_BYTES 65536       /* longer names are cut on load (with "...") */
/* The deepest stack the recorder writes, in frames: MP_DEPTH (at most 1024)
 * return addresses of RES_MAX_INLINE (32, prof/common/resolve.h) inline levels
 * each, the [truncated] marker and MP_MAX_TAGS (16, prof/record.h) tags. A
 * deeper one is a corrupt file (refused on load: output that lists paths
 * grows with the square of the depth). */
#define STACK_DEPTH_MAX (1024 * 32 + 1 + 16)

/* Exit codes: 2 bad input or usage, 1 failed operation. */
enum { EXIT_BAD_INPUT = 2, EXIT_FAILED = 1 };

#endif
