/* How a process mpquery live shows ended when its profile does not say
 * (process.ended "": no final snapshot, as after SIGKILL, which no
 * recorder sees): as record --live saw it (waitpid: "killed by SIGKILL"),
 * or, for a process of this host whose pid no longer runs (or runs a
 * later process, or only waits as a zombie for its parent), "killed"
 * (live.h). Another host's processes, and those /proc does not show, are
 * left as they are: nothing can be told of them. */
#include "mpquery.h"
#include "profile.h"
#include "live.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { RUNS = 0, GONE = 1, UNKNOWN = 2 };

/* Process pid of this machine: RUNS when it started at or before start
 * (seconds since the epoch: it may be the profile's), GONE when there is
 * none, a zombie or one started later (the pid used again), UNKNOWN when
 * /proc cannot tell. */
static int process_state(long pid, double start)
{
    if (pid <= 0) return UNKNOWN;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return GONE;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f) return UNKNOWN;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'), state;     /* the name may hold spaces and ')' */
    unsigned long long ticks;
    /* proc(5): state is field 3, starttime 22 (clock ticks since boot) */
    if (!p || sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
                     &state, &ticks) != 2)
        return UNKNOWN;
    if (state == 'Z' || state == 'X') return GONE;
    struct timespec real, boot;
    if (clock_gettime(CLOCK_REALTIME, &real) != 0 || clock_gettime(CLOCK_BOOTTIME, &boot) != 0) return UNKNOWN;
    double booted = (double)real.tv_sec + real.tv_nsec / 1e9 - ((double)boot.tv_sec + boot.tv_nsec / 1e9);
    double started = booted + (double)ticks / (double)sysconf(_SC_CLK_TCK);
    /* the recorder starts after its process (at exec, or at an attach):
     * a process started later is another one; 0.5 s for the clocks */
    return started > start + 0.5 ? GONE : RUNS;
}

/* live.h */
const char *live_process_ended(struct live *v, const struct process *pr)
{
    if (v->ended_how && *v->ended_how && pr->pid == v->ended_pid) return v->ended_how;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0 || strcmp(host, pr->host)) return NULL;
    /* its last commit may not be read yet: said once the copy is current */
    if (process_state(pr->pid, pr->start_time) == GONE && !live_file_changed(v))
        return "killed (gone, no final snapshot)";
    v->watch = array_grow(v->watch, v->nwatch + 1, &v->watch_cap, sizeof *v->watch);
    v->watch[v->nwatch++] = (struct live_watch){ (long)pr->pid, pr->start_time };
    return NULL;
}

int live_watched_gone(const struct live *v)
{
    for (size_t i = 0; i < v->nwatch; i++)
        if (process_state(v->watch[i].pid, v->watch[i].start) == GONE) return 1;
    return 0;
}
