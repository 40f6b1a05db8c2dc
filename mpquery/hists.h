/* The size histograms of a profile: table hist (per snapshot, format
 * version 2) and stack_hist (per stack and thread, version 3), read by
 * profile.c (a file) or chquery.c (a store) when the loader is asked for
 * them (PROFILE_HISTS), and summed by mpquery hist. A row whose snapshot,
 * stack or thread the profile does not have keeps NONE there: no selection
 * reads it. */
#ifndef MPQUERY_HISTS_H
#define MPQUERY_HISTS_H

#include <stdint.h>

/* What profile_load reads besides the tables every command needs. */
enum { PROFILE_PEAK_ROWS = 1, PROFILE_HISTS = 2 };

/* A size class's counters: lo <= size < 2 * lo (lo 0: size 0). */
enum { H_NCALLS, H_MEMTOT, H_NLIVE, H_MEMLIVE, NH };
struct hist_row { uint32_t snapshot; int64_t lo, v[NH]; };
struct stack_hist_row { uint32_t snapshot, stack, thread; int64_t lo, v[NH]; };

#endif
