/* This process's rows in the database, inside the flush's transaction:
 * its run (by MP_RUN token), its process row (created at the first
 * snapshot, its end time and how it ended updated after) and its threads'
 * rows, with their ids kept (flush_ids) for the other rows of a snapshot. A fork
 * child starts them anew (process_rows_forget). */
#define _GNU_SOURCE
#include "flush.h"
#include "hot.h"       /* mp_cap_sampled_us */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct process_ids flush_ids;

/* new_process: a fork child (same run, new process row); else another
 * database altogether. */
void process_rows_forget(int new_process)
{
    if (!new_process) flush_ids.run = 0;
    flush_ids.process = flush_ids.snapshot_seq = 0;
    free(flush_ids.threads), flush_ids.threads = NULL, flush_ids.nthreads = 0;
}

/* Our process row must still be there (the same database). */
int process_rows_check(struct writer *w)
{
    if (!flush_ids.process) return 0;
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT pid FROM process WHERE id = %lld", (long long)flush_ids.process);
    return query_int(w, sql, -1) != mp_pid;
}

static void read_cmdline(char *buf, size_t size)
{
    buf[0] = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0) return;
    if (buf[n - 1] == 0) n--;
    for (ssize_t i = 0; i < n; i++) if (!buf[i]) buf[i] = ' ';
    buf[n] = 0;
}

/* After a failed flush (or the file replaced by a copy) this process
 * forgot what it knew of the database: its row, when the file has it
 * (same run, pid and start), is taken up again with its snapshots' count,
 * so that the process is never counted twice. */
static int find_process(struct writer *w)
{
    sqlite3_stmt *st = prepare(w, "SELECT id, (SELECT max(seq) FROM snapshot WHERE process = p.id)"
                                  " FROM process p WHERE run = ? AND pid = ? AND start_time = ?");
    if (!st) return -1;
    sqlite3_bind_int64(st, 1, flush_ids.run);
    sqlite3_bind_int64(st, 2, mp_pid);
    sqlite3_bind_double(st, 3, mp_start_time);
    if (sqlite3_step(st) == SQLITE_ROW) {
        flush_ids.process = sqlite3_column_int64(st, 0);
        flush_ids.snapshot_seq = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return 0;
}

/* process.settings: the effective values, and when full capture moved to
 * sampling at MP_MAX_MEMORY, " MP_SAMPLED_FROM=S MP_SAMPLED_EVERY=BYTES"
 * (seconds after the start, the period; mpquery info and check read them) */
static const char *settings_text(char *buf, size_t size)
{
    int64_t us = atomic_load(&mp_cap_sampled_us);
    if (us < 0) return mp_opt.settings;
    snprintf(buf, size, "%s MP_SAMPLED_FROM=%.3f MP_SAMPLED_EVERY=%llu", mp_opt.settings, (double)us / 1e6,
             (unsigned long long)mp_opt.sample);
    return buf;
}

int process_rows_write(struct writer *w, double now)
{
    char settings[sizeof mp_opt.settings + 64];
    if (!flush_ids.run) {
        sqlite3_stmt *st = prepare_insert(w, "INSERT OR IGNORE", FT_run, 1);
        if (!st) return -1;
        sqlite3_bind_text(st, FORMAT_PARAM(run, token), mp_run_token, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, FORMAT_PARAM(run, start_time), now);
        int rc = step_done(w, st);
        sqlite3_finalize(st);
        if (rc) return -1;
        st = prepare(w, "SELECT id FROM run WHERE token = ?");
        if (!st) return -1;
        sqlite3_bind_text(st, 1, mp_run_token, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) flush_ids.run = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (!flush_ids.run) return fail(w, "cannot create the run row");
    }
    sqlite3_stmt *st;
    if (!flush_ids.process && find_process(w)) return -1;
    if (!flush_ids.process) {
        char exe[4096] = "", cmdline[8192], host[256] = "";
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        read_cmdline(cmdline, sizeof cmdline);
        gethostname(host, sizeof host - 1);
        st = prepare_insert(w, "INSERT", FT_process, 1);
        if (!st) return -1;
        sqlite3_bind_int64(st, FORMAT_PARAM(process, run), flush_ids.run);
        sqlite3_bind_int64(st, FORMAT_PARAM(process, pid), mp_pid);
        sqlite3_bind_int64(st, FORMAT_PARAM(process, ppid), mp_ppid ? mp_ppid : getppid());
        sqlite3_bind_text(st, FORMAT_PARAM(process, exe), exe, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, FORMAT_PARAM(process, cmdline), cmdline, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, FORMAT_PARAM(process, host), host, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, FORMAT_PARAM(process, start_time), mp_start_time);
        sqlite3_bind_double(st, FORMAT_PARAM(process, end_time), now);
        sqlite3_bind_text(st, FORMAT_PARAM(process, settings), settings_text(settings, sizeof settings), -1,
                          SQLITE_STATIC);
        sqlite3_bind_text(st, FORMAT_PARAM(process, ended), mp_ended, -1, SQLITE_STATIC);
        int rc = step_done(w, st);
        sqlite3_finalize(st);
        if (rc) return -1;
        flush_ids.process = sqlite3_last_insert_rowid(w->db);
        return 0;
    }
    st = prepare(w, "UPDATE process SET end_time = ?, ended = ?, settings = ? WHERE id = ?");
    if (!st) return -1;
    sqlite3_bind_double(st, 1, now);
    sqlite3_bind_text(st, 2, mp_ended, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, settings_text(settings, sizeof settings), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, flush_ids.process);
    int rc = step_done(w, st);
    sqlite3_finalize(st);
    return rc;
}

static void thread_name(struct mp_thread *t, char *name, size_t size)
{
    if (atomic_load(&t->exited)) {
        snprintf(name, size, "%s", t->name);
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)t->tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, name, size - 1) : -1;
    if (fd >= 0) close(fd);
    if (n > 0 && name[n - 1] == '\n') n--;
    name[n > 0 ? n : 0] = 0;
}

int64_t process_rows_thread(struct writer *w, struct mp_thread *t)
{
    if (grow_array(&flush_ids.threads, &flush_ids.nthreads, t->seq + 1, sizeof *flush_ids.threads)) return 0;
    char name[64];
    thread_name(t, name, sizeof name);
    sqlite3_stmt *st;
    if (!flush_ids.threads[t->seq] && (st = prepare(w, "SELECT id FROM thread WHERE process = ? AND seq = ?"))) {
        sqlite3_bind_int64(st, 1, flush_ids.process);    /* its row before a failed flush (find_process) */
        sqlite3_bind_int64(st, 2, t->seq);
        if (sqlite3_step(st) == SQLITE_ROW) flush_ids.threads[t->seq] = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    if (flush_ids.threads[t->seq]) {
        st = prepare(w, "UPDATE thread SET name = ? WHERE id = ? AND name != ?");
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, flush_ids.threads[t->seq]);
        sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    } else {
        st = prepare_insert(w, "INSERT", FT_thread, 1);
        sqlite3_bind_int64(st, FORMAT_PARAM(thread, process), flush_ids.process);
        sqlite3_bind_int64(st, FORMAT_PARAM(thread, seq), t->seq);
        sqlite3_bind_int64(st, FORMAT_PARAM(thread, tid), t->tid);
        sqlite3_bind_text(st, FORMAT_PARAM(thread, name), name, -1, SQLITE_STATIC);
    }
    if (!st) return 0;
    int rc = step_done(w, st);
    sqlite3_finalize(st);
    if (rc) return 0;
    if (!flush_ids.threads[t->seq]) flush_ids.threads[t->seq] = sqlite3_last_insert_rowid(w->db);
    return flush_ids.threads[t->seq];
}
