/* The ledger (format version 5): where each snapshot's resident memory
 * went, one row per line (table ledger), read by profile.c when asked
 * (PROFILE_LEDGER) for mpquery rss and the report. Rows keep the
 * snapshot's index. The mappings' stacks are ordinary samples (their
 * counters nmap, mapped, maxmapped, rss). */
#ifndef MPQUERY_LEDGER_H
#define MPQUERY_LEDGER_H

#include <stdint.h>

#include "hists.h"

enum { PROFILE_LEDGER = 4 };        /* beside hists.h's PROFILE_PEAK_ROWS, PROFILE_HISTS */

struct ledger_row { uint32_t snapshot; const char *line; int64_t bytes, size; };

/* The ledger's lines in the recorder's order (prof/ledger.c). */
#define LEDGER_NLINES 10
extern const char *const ledger_lines[LEDGER_NLINES];

#endif
