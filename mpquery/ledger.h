/* The ledger (format version 5): where each snapshot's resident memory
 * went, one row per line (table ledger), and the rss and mapped bytes of
 * the program's own mappings per stack (the sample rows of '[mmap]'
 * stacks), read by profile.c when asked (PROFILE_LEDGER) for mpquery rss
 * and the report. Rows keep the snapshot's and stack's indexes. */
#ifndef MPQUERY_LEDGER_H
#define MPQUERY_LEDGER_H

#include <stdint.h>

#include "hists.h"

enum { PROFILE_LEDGER = 4 };        /* beside hists.h's PROFILE_PEAK_ROWS, PROFILE_HISTS */

struct ledger_row { uint32_t snapshot; const char *line; int64_t bytes, size; };
/* A mapping sample row: its (stack, thread)'s resident and mapped bytes
 * as of that snapshot (the rows of a process chain as samples do). */
struct map_row { uint32_t snapshot, stack, thread; int64_t rss, mapped; };

/* The ledger's lines in the recorder's order (prof/ledger.c). */
#define LEDGER_NLINES 10
extern const char *const ledger_lines[LEDGER_NLINES];

#endif
