/* What commands read, as their options name it (load.c): a profile from
 * one database file or several (merged), or from a ClickHouse store with
 * --server; its selection; the rules (filters/ found next to the
 * executable); and the check that -o does not overwrite an input. Errors
 * are reported ("mpquery: FILE: what is wrong") and their exit code
 * returned. */
#ifndef MPQUERY_LOAD_H
#define MPQUERY_LOAD_H

#include "mpquery.h"
#include "profile.h"
#include "opt_groups.h"
#include "options.h"

/* Loads path (errors reported: "mpquery: PATH: why"); peak_rows as
 * profile_load's; 0 or the exit code. */
int load_profile(const char *path, int peak_rows, struct profile **p);
/* The database files of one profile: one is loaded as it is, several are
 * merged into a temporary database (merge_temporary) that is loaded, its
 * runs' files in p->sources, each file's latest run selected by default
 * (p->latest_runs), p->path "FIRST (and N more)" for messages. */
struct dbfiles { char *const *paths; size_t n; };
struct dbfiles dbfiles_of(int argc, char **argv, int first);     /* argv[first..argc) */
int load_profiles(const struct dbfiles *f, int peak_rows, struct profile **p);
/* When set (mpquery serve: the profile its server loaded once, while the
 * files are unchanged), what load_profiles returns for f and peak_rows's
 * flags instead of loading, or NULL: load. */
extern struct profile *(*load_preloaded)(const struct dbfiles *f, int peak_rows);
/* The profile a command reads: side's runs of the store with --server
 * (side -1: no diff), else the files (load_profiles). */
int load_selected(const struct common *c, const struct dbfiles *f, int side, int peak_rows, struct profile **p);
/* Applies the selection, reporting errors; 0 or the exit code. */
int select_or_report(const struct common *c, const struct profile *p, struct selection *s);
/* Builds the rule set from default.rules (unless disabled) and --rules
 * (also c->view.rules and c->sel.rules: thread names). */
int load_rules(struct common *c, struct ruleset **out);
/* --suppressions FILE...: one rule set (also c->view.suppress), NULL
 * without files; and with c->rules.builtin_suppressions the built-in list,
 * filters/suppressions.rules, into builtin (also c->view.builtin), else
 * NULL; 0 or the exit code. */
int load_suppressions(struct common *c, struct ruleset **out, struct ruleset **builtin);
/* 0, or 2 (reported: "OUT: the output (-o) is the input IN: refusing to
 * overwrite it") when out (-o; NULL: stdout) is one of the files the
 * command reads: the databases of files[0..n), the rules and suppressions
 * files. */
int check_output(const struct common *c, const char *out, const struct dbfiles *files, size_t n);
/* Locates the filters directory next to the executable (malloc'd) or NULL. */
char *filters_dir(void);

#endif
