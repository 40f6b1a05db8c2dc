/* The processes of a profile as report, info and timeline show them
 * (procs.c): in the order they started, named as they were started, their
 * totals rows summed, their times as local dates. */
#ifndef MPQUERY_PROCS_H
#define MPQUERY_PROCS_H

#include "mpquery.h"
#include "profile.h"

/* qsort_r's comparison of process indexes (uint32_t, ctx the profile):
 * by start time, then by id. */
int procs_by_start(const void *a, const void *b, void *ctx);
/* A process's name (info calls it its role), as the loader set it
 * (procs_name_of); "?" when not known. */
const char *procs_name(const struct process *pr);
/* The name of a process as it was started, the name a user typed and ps
 * shows: the file name of its command line's first word, argv[0] ("cc" of
 * "cc -O2 a.c", "python3" of "/usr/bin/python3 job.py": a script's
 * interpreter as its #! line names it), a login shell's leading '-' and
 * a retitled process's trailing ':' left out ("-bash", "nginx: worker");
 * the executable's file name when there is no command line
 * ("x86_64-linux-gnu-gcc-12", "python3.11"); "?" when neither is known.
 * In text, or a string of pr's. */
const char *procs_name_of(const struct process *pr, struct arena *text);
/* The executable's file name, "" when not known. */
const char *procs_exe_name(const struct process *pr);
/* Whether --exe WANT names the process: a NAME (no '/') its name or its
 * executable's file name, a PATH its executable's path as recorded or
 * its command line's first word. */
int procs_exe_matches(const struct process *pr, const char *want);
/* Seconds since the epoch as the local "YYYY-MM-DD HH:MM:SS" in buf (the
 * number itself when it is no date). */
void procs_fmt_date(double t, char *buf, size_t n);
/* sum += t: the counters and the allocations without a stack, saturated
 * (counters_derive is the caller's). */
void procs_total_add(struct total *sum, const struct total *t);

#endif
