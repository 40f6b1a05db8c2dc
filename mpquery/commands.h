/* The commands (cmd_*.c), main.c's table: each takes its argv (argv[0]
 * the command's name) and returns the exit code; only main exits. */
#ifndef MPQUERY_COMMANDS_H
#define MPQUERY_COMMANDS_H

struct listing;

int cmd_record(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_fold(int argc, char **argv);
/* fold's lines to out (a FILE *), for fold and export --format folded. */
void fold_print(struct listing *l, void *out);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_leaks(int argc, char **argv);
int cmd_hist(int argc, char **argv);
int cmd_rss(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_push(int argc, char **argv);
int cmd_live(int argc, char **argv);
/* record --live: live's screen of path with its defaults until q, the exit
 * code (128 + N after signal N). pid_done(ctx) says each turn whether the
 * program that writes path has ended (then done_note on the help line, and
 * how, "killed by SIGKILL", on the line of process pid when its profile
 * does not say; pid 0: none). */
int live_record(const char *path, int (*pid_done)(void *ctx), void *ctx, const char *done_note, long pid,
                const char *how);

#endif
