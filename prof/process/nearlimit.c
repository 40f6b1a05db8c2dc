/* Snapshots before the OOM killer (issue 44, item 5): the process's memory
 * against its limits, looked at by the background thread, and a snapshot
 * (reason near-limit) the first time it reaches each of MP_NEAR_LIMIT's
 * percentages (default 80, 90, 95) of one of them. The limits: its memory
 * cgroup's (v1 memory.limit_in_bytes against memory.usage_in_bytes, v2
 * memory.max against memory.current), RLIMIT_AS (against the size of its
 * mappings, statm's first field) and RLIMIT_DATA (against statm's data).
 *
 * The cgroup's files are found and opened at init, in the program's
 * thread (fds.c's kept files: the background thread never opens one);
 * each look reads them with pread and the rlimits with getrlimit, so a
 * limit changed while the program runs counts from the next look. A look
 * costs three or four system calls; looks come at most every LOOK_MIN
 * seconds, only as near as the memory could get half way past the next
 * percentage growing at GROWTH_MIN bytes a second (or twice its last
 * growth), and at least every LOOK_MAX. None without a limit at start,
 * none once every percentage of every limit was reached (each is taken
 * once a process; a percentage passed before the process started is not
 * a crossing: a nearly full cgroup does not make each new process write a
 * snapshot). Only the background thread looks; `watching` is read by the
 * threads that start it. */
#define _GNU_SOURCE
#include "base.h"
#include "snapshot.h"
#include "process.h"
#include "record.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define LOOK_MIN 0.01
#define LOOK_MAX 1.0
#define GROWTH_MIN (1024.0 * 1024 * 1024)
/* A snapshot needs memory of its own (SQLite, libdw: megabytes). Under
 * RLIMIT_AS or RLIMIT_DATA, with less room than this left, it is not
 * tried: it would fail, and what it took on the way could cost the exit
 * snapshot the program, whose malloc fails there, still gets (ulimit -v
 * 48000, tests/recorder/process_limits.sh: the exit snapshot lost 3 runs
 * in 4). A cgroup's limit kills: there the snapshot is always tried. */
#define ROOM_MIN (16u << 20)

enum source { SRC_CGROUP, SRC_AS, SRC_DATA, NSRC };
struct reading { uint64_t use, limit; };        /* limit 0: none */

static int cgroup_version;              /* 0: no cgroup limit watched */
static _Atomic int watching;
static unsigned passed[NSRC];           /* the percentages each limit reached */
static uint64_t last_use[NSRC];
static double last_look, next_look;

static const char *source_name(enum source s)
{
    if (s == SRC_CGROUP) return cgroup_version == 1 ? "memory.limit_in_bytes" : "memory.max";
    return s == SRC_AS ? "RLIMIT_AS" : "RLIMIT_DATA";
}

/* ------------------------------------------------------------ finding the cgroup */

/* fn(line, arg) for each line of a file until it returns 1 (at init). */
static void each_line(const char *path, int (*fn)(char *, void *), void *arg)
{
    static char buf[8192];
    mp_each_line(path, buf, sizeof buf, fn, arg);
}

static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, word, n) && (p[n] == ',' || !p[n])) return 1;
    return 0;
}

/* The process's cgroup in each hierarchy: /proc/self/cgroup's lines
 * "ID:CONTROLLERS:PATH" (v2: "0::PATH"). */
struct cgroups { char v1[512], v2[512]; };

static int cgroup_line(char *line, void *arg)
{
    struct cgroups *c = arg;
    char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;
    if (!path || strlen(path + 1) >= sizeof c->v1) return 0;
    *path++ = 0;
    *ctl++ = 0;
    if (!strcmp(line, "0") && !*ctl) strcpy(c->v2, path);
    else if (has_word(ctl, "memory")) strcpy(c->v1, path);
    return 0;
}

/* Where each hierarchy is mounted (/proc/self/mountinfo: "ID PARENT DEV
 * ROOT MOUNTPOINT OPTIONS... - TYPE SOURCE SUPEROPTIONS"), and the
 * cgroup's directory under it: its path less the mount's root. One read
 * for both (70 us of a process's start, here). */
struct mount_find { const char *cgroup[3]; char dir[3][1024]; };    /* by version: 1, 2 */

static int mount_line(char *line, void *arg)
{
    struct mount_find *m = arg;
    char *tail = strstr(line, " - "), *f[5], *save = NULL;
    if (!tail) return 0;
    *tail = 0;
    tail += 3;
    int n = 0;
    for (char *t = strtok_r(line, " ", &save); t && n < 5; t = strtok_r(NULL, " ", &save)) f[n++] = t;
    char *type = strtok_r(tail, " ", &save), *source = strtok_r(NULL, " ", &save), *opts = strtok_r(NULL, " ", &save);
    if (n < 5 || !type || !source || !opts) return 0;
    int v = !strcmp(type, "cgroup") && has_word(opts, "memory") ? 1 : !strcmp(type, "cgroup2") ? 2 : 0;
    const char *cgroup = m->cgroup[v];
    size_t root = strcmp(f[3], "/") ? strlen(f[3]) : 0;
    if (!v || !*cgroup || *m->dir[v] || strncmp(cgroup, f[3], root) || (cgroup[root] && cgroup[root] != '/')) return 0;
    if (snprintf(m->dir[v], sizeof m->dir[v], "%s%s", f[4], cgroup + root) >= (int)sizeof m->dir[v]) *m->dir[v] = 0;
    return (*m->dir[1] || !*m->cgroup[1]) && (*m->dir[2] || !*m->cgroup[2]);
}

static const char *const usage_file[3] = { "", "memory.usage_in_bytes", "memory.current" };
static const char *const limit_file[3] = { "", "memory.limit_in_bytes", "memory.max" };

/* A number as the cgroup's files write it; 0 for "max", for v1's "no
 * limit" (2^63 less a page, or about) and for what is not one. */
static uint64_t parse_number(const char *buf, ssize_t n)
{
    uint64_t v = 0;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) v = v * 10 + (uint64_t)(buf[i] - '0');
    return v >= (1ull << 62) ? 0 : v;
}

/* The cgroup's limit, read once without keeping the file (most processes
 * have none: they keep no descriptor for it); -1: no such file. */
static int64_t limit_at(int version, const char *dir)
{
    char path[1100], buf[32];
    if (!*dir || snprintf(path, sizeof path, "%s/%s", dir, limit_file[version]) >= (int)sizeof path) return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    return (int64_t)parse_number(buf, n);
}

/* The hierarchies where systemd, Docker and Kubernetes mount them, when
 * a cgroup file system is there and the cgroup's directory is in it: no
 * read of mountinfo (70 us) then. */
static void usual_place(int version, const char *cgroup, char *dir, size_t size)
{
    static const char *const where[3][2] = {
        { NULL }, { "/sys/fs/cgroup/memory" }, { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" },
    };
    struct statfs fs;
    *dir = 0;
    for (int i = 0; i < 2 && where[version][i] && *cgroup; i++) {
        if (statfs(where[version][i], &fs) || (fs.f_type != CGROUP_SUPER_MAGIC && fs.f_type != CGROUP2_SUPER_MAGIC) ||
            snprintf(dir, size, "%s%s", where[version][i], strcmp(cgroup, "/") ? cgroup : "") >= (int)size)
            continue;
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return;    /* there: with a limit file or not */
    }
    *dir = 0;
}

/* The first cgroup (v1, then v2) with a limit: its usage and limit files
 * kept open. */
static void cgroup_find(void)
{
    struct cgroups c = { "", "" };
    each_line("/proc/self/cgroup", cgroup_line, &c);
    struct mount_find m = { { "", c.v1, c.v2 }, { "", "", "" } };
    for (int v = 1; v <= 2; v++) {
        usual_place(v, m.cgroup[v], m.dir[v], sizeof m.dir[v]);
        if (*m.dir[v]) m.cgroup[v] = "";        /* found: mountinfo need not say */
    }
    if (*m.cgroup[1] || *m.cgroup[2]) each_line("/proc/self/mountinfo", mount_line, &m);
    for (int v = 1; v <= 2; v++) {
        char path[1100];
        if (limit_at(v, m.dir[v]) <= 0) continue;
        snprintf(path, sizeof path, "%s/%s", m.dir[v], usage_file[v]);
        mp_kept_path(KEPT_CG_USAGE, path);
        snprintf(path, sizeof path, "%s/%s", m.dir[v], limit_file[v]);
        mp_kept_path(KEPT_CG_LIMIT, path);
        cgroup_version = v;
        return;
    }
}

/* ------------------------------------------------------------ reading */

/* A kept file's number (parse_number); 0 when it cannot be read. */
static uint64_t read_number(enum mp_kept_file which)
{
    char buf[32];
    int fd = mp_kept_fd_ours(which);
    return parse_number(buf, fd < 0 ? -1 : pread(fd, buf, sizeof buf, 0));
}

static uint64_t rlimit_of(int resource)
{
    struct rlimit rl;
    return getrlimit(resource, &rl) || rl.rlim_cur == RLIM_INFINITY ? 0 : (uint64_t)rl.rlim_cur;
}

/* statm's size (RLIMIT_AS's measure) and data (RLIMIT_DATA's: the
 * writable private mappings, and the stack), in bytes. */
static void read_statm(uint64_t *size, uint64_t *data)
{
    char buf[128];
    int fd = mp_kept_fd_ours(KEPT_STATM);
    ssize_t n = fd < 0 ? -1 : pread(fd, buf, sizeof buf - 1, 0);
    uint64_t field[6] = { 0 }, page = (uint64_t)sysconf(_SC_PAGESIZE);
    int f = 0;
    for (ssize_t i = 0; i < n && f < 6; i++) {
        if (buf[i] == ' ') f++;
        else if (buf[i] >= '0' && buf[i] <= '9') field[f] = field[f] * 10 + (uint64_t)(buf[i] - '0');
    }
    *size = field[0] * page;
    *data = field[5] * page;
}

static void read_now(struct reading r[NSRC])
{
    memset(r, 0, NSRC * sizeof *r);
    if (cgroup_version) r[SRC_CGROUP] = (struct reading){ read_number(KEPT_CG_USAGE), read_number(KEPT_CG_LIMIT) };
    r[SRC_AS].limit = rlimit_of(RLIMIT_AS);
    r[SRC_DATA].limit = rlimit_of(RLIMIT_DATA);
    if (r[SRC_AS].limit || r[SRC_DATA].limit) read_statm(&r[SRC_AS].use, &r[SRC_DATA].use);
}

/* How many of the percentages the reading reached. */
static unsigned reached(const struct reading *r)
{
    unsigned k = 0;
    while (k < MP_PERCENTS_MAX && mp_opt.near_limit[k] && r->limit &&
           (double)r->use * 100 >= (double)r->limit * mp_opt.near_limit[k])
        k++;
    return k;
}

static unsigned npercents(void)
{
    unsigned n = 0;
    while (n < MP_PERCENTS_MAX && mp_opt.near_limit[n]) n++;
    return n;
}

/* ------------------------------------------------------------ the looks */

void nearlimit_init(void)
{
    watching = 0;
    if (!mp_opt.near_limit[0]) return;
    cgroup_version = 0;
    cgroup_find();
    struct reading r[NSRC];
    read_now(r);
    int any = 0;
    for (int s = 0; s < NSRC; s++) {
        passed[s] = reached(&r[s]);
        last_use[s] = r[s].use;
        any |= r[s].limit && passed[s] < npercents();
    }
    watching = any;
    last_look = next_look = mp_now();
}

int nearlimit_watching(void)
{
    return watching;
}

/* The snapshot of the highest percentage reached, of the limit most used. */
static void take(const struct reading *r, enum source s)
{
    char label[128];
    snprintf(label, sizeof label, "%u%% of %s (%llu bytes)", mp_opt.near_limit[passed[s] - 1], source_name(s),
             (unsigned long long)r->limit);
    flush_snapshot(FLUSH_NEAR_LIMIT, label);
}

/* The seconds until the memory could be half way from the limit's next
 * percentage to the one after (or to the limit): a snapshot may come that
 * late, still well before the next one is due. A process that stays just
 * below a percentage is then looked at less often than every LOOK_MIN
 * where that half way is more than GROWTH_MIN * LOOK_MIN bytes. */
static double time_to_next(const struct reading *r, enum source s, double now)
{
    unsigned i = passed[s], next = mp_opt.near_limit[i];
    unsigned after = i + 1 < MP_PERCENTS_MAX && mp_opt.near_limit[i + 1] ? mp_opt.near_limit[i + 1] : 100;
    double need = (double)r->limit * (next + after) / 200 - (double)r->use;
    double growth = 2 * ((double)r->use - (double)last_use[s]) / (now - last_look + 1e-9);
    return need / (growth > GROWTH_MIN ? growth : GROWTH_MIN);
}

double nearlimit_look(double now)
{
    if (!watching || now < next_look) return watching ? next_look : 0;
    struct reading r[NSRC];
    read_now(r);
    int most = -1;
    double wait = LOOK_MAX, used = 0;
    unsigned n = npercents();
    int still = 0;
    for (int s = 0; s < NSRC; s++) {
        if (!r[s].limit) continue;
        unsigned k = reached(&r[s]);
        int room = s == SRC_CGROUP || (r[s].use < r[s].limit && r[s].limit - r[s].use >= ROOM_MIN);
        if (k > passed[s] && room && (double)r[s].use / (double)r[s].limit > used)
            most = s, used = (double)r[s].use / (double)r[s].limit;
        if (k > passed[s]) passed[s] = k;
        if (passed[s] < n) {
            double t = time_to_next(&r[s], s, now);
            if (t < wait) wait = t;
            still = 1;
        }
        last_use[s] = r[s].use;
    }
    last_look = now;
    watching = still;
    if (most >= 0) take(&r[most], most);
    next_look = mp_now() + (wait < LOOK_MIN ? LOOK_MIN : wait);
    return watching ? next_look : 0;
}
