/* Profile databases merged into one (merge.c): mpquery merge writes it,
 * and a command given several files reads the merge of them (load.c). */
#ifndef MPQUERY_MERGE_H
#define MPQUERY_MERGE_H

#include "mpquery.h"
#include "profile.h"

/* What a merge wrote: per input, its runs (db_file: ids in the output),
 * and the output's runs (those in more than one input: runs_shared),
 * processes, stacks and sample rows. */
struct merge_stats {
    struct db_file *files; size_t nfiles;
    int64_t runs, runs_shared, processes, stacks, samples;
};
/* Writes the profile databases inputs[0..n) into out, an empty file, as
 * one database of the current format that answers every query as the
 * inputs taken together; without peak_rows, every query but those of a
 * peak snapshot's rows (profile_load's peak_rows: the sample rows of peak
 * snapshots are left out). 0, or the exit code with "FILE: why" in err. */
int merge_build(char *const *inputs, size_t n, const char *out, int peak_rows, struct merge_stats *st, char *err,
                size_t errlen);
void merge_stats_free(struct merge_stats *st);
/* merge_build into a new temporary file under $TMPDIR (or /tmp), removed
 * when mpquery exits; *path is its name. */
int merge_temporary(char *const *inputs, size_t n, int peak_rows, const char **path, struct merge_stats *st,
                    char *err, size_t errlen);

#endif
