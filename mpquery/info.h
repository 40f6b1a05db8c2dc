/* What mpquery info's files share: info.c gathers (the totals at the
 * selected snapshot, the process tree) into struct info and has the words
 * for settings and endings; info_json.c and info_text.c only print it;
 * cmd_info.c, the command, calls both. */
#ifndef MPQUERY_INFO_H
#define MPQUERY_INFO_H

#include "mpquery.h"
#include "profile.h"
#include "procs.h"

struct pid_node { size_t first, nimages; uint32_t depth; };

/* Totals as of the selection, per process and per thread. */
struct info {
    const struct profile *p;
    const struct selection *sel;
    uint32_t *proc_total, *thread_total;    /* index into p->totals, NONE */
    uint32_t *order;                        /* selected processes, tree order */
    uint32_t *depth;                        /* tree depth per process */
    size_t norder;
    struct pid_node *pids;                  /* the tree, one node a pid (process_tree) */
    size_t npids;
    struct total sum;
    const char *since, *until;              /* --since, --until as given (NULL: none) */
    struct total *window;                   /* with them: p->totals, the rows picked at the window's
                                               end less those of the same process or thread at its
                                               start (info_total_at reads them); else NULL */
    counters *proc_samples;                 /* per process: its sample rows summed (the mappings'
                                               counters: the totals rows have none; not shown
                                               for p->aggregate) */
    counters samples_sum;
    int64_t profiler_memory;
    int human;                              /* text: sizes in units (not --bytes) */
    int all;                                /* --all: every process's section, every row */
};
/* Text: the processes with a section of their own, and the rows of a
 * process's threads and snapshots tables, without --all. */
enum { INFO_SECTIONS = 5, INFO_ROWS = 10 };

/* in->p, in->sel (and human, all, since, until) set: the rest of in
 * gathered; info_free frees it. With a window (in->sel's proc_since),
 * the totals are the window's: at its end less at its start. */
void info_gather(struct info *in);
void info_free(struct info *in);
/* The mappings' line of a process (c: its summed samples) or of the
 * totals, "5 mappings, 67.9 MiB mapped, 35.9 MiB resident" into buf; 0
 * when the profile has none (the line is then not shown). */
int info_mappings_text(const struct info *in, const counters *c, char *buf, size_t n);
/* p->totals[idx], NULL for NONE. */
const struct total *info_total_at(const struct info *in, uint32_t idx);
size_t info_stacks_with_samples(const struct info *in);
/* The token of the run of that id, "" when none. */
const char *info_run_token(const struct profile *p, int64_t id);
size_t info_processes_of_run(const struct profile *p, size_t run);
/* "requested" or "allocator": how the recorder counted live bytes, from
 * its settings; info_live_bytes_text[0 or 1] says it in words. */
const char *info_live_bytes(const char *settings);
extern const char *const info_live_bytes_text[2];
/* Whether a process sampled (MP_SAMPLE not 0): its stacks' counters are
 * estimates from samples, its totals exact; any process of p. */
int info_sampled(const char *settings);
/* Seconds after its start from which a process sampled because it reached
 * MP_MAX_MEMORY in full capture (its settings' MP_SAMPLED_FROM); -1: not. */
double info_cap_sampled(const char *settings);
int info_any_sampled(const struct profile *p);
/* process.ended in words; ended_text: as the database has it where that
 * says enough. Both may write into buf. */
const char *info_ended_words(const struct profile *p, const char *ended, char *buf, size_t n);
const char *info_ended_text(const struct profile *p, const char *ended, char *buf, size_t n);
/* A pid's last image (its last exec'd program). */
const struct process *info_last_image(const struct info *in, const struct pid_node *t);

/* The outputs: JSON (info_json.c); text, CSV a row a process (info_text.c). */
void info_print_json(const struct info *in);
void info_print_text(const struct info *in);
void info_print_processes(const struct info *in, int format);

#endif
