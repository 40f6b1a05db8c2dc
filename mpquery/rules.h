/* The rules (rules.c): files of lines that rewrite, drop, prune, root or
 * hide frames by name and rename threads, run in order on each name; and their
 * options (--rules, --no-default-rules, leaks' --suppressions), which
 * load.c turns into rule sets (load_rules). */
#ifndef MPQUERY_RULES_H
#define MPQUERY_RULES_H

#include "options.h"
#include "util.h"

/* NULL when glibc can compile re in bounded time, memory and stack and
 * match it without backtracking (no back-reference), else why not (a
 * message ending in ':', the regex follows it). Asked before every regcomp
 * of a regex a user gives: rules, --filter, --exclude, --thread, mpquery
 * live's filter. */
const char *rules_regex_refused(const char *re);

/* What rules_apply says of a name: the stack rules (drop, prune, root),
 * and hide (a label's attribute: left out of one-line stack labels). */
enum { RULE_DROP = 1, RULE_PRUNE = 2, RULE_ROOT = 4, RULE_HIDE = 16 };
struct ruleset;
struct ruleset *rules_new(void);
/* Appends the rules of a file; on error returns 2 with "FILE:LINE: why". */
int rules_load(struct ruleset *rs, const char *path, char *err, size_t errlen);
/* The same from memory: len bytes of a rules file, errors as "NAME:LINE: why". */
int rules_parse(struct ruleset *rs, const char *text, size_t len, const char *name,
                char *err, size_t errlen);
size_t rules_count(const struct ruleset *rs);
/* The rules that mark frames: drop, prune, root. */
size_t rules_count_marks(const struct ruleset *rs);
/* The last collapse-templates line's DEPTH, or -1 (none, or off; rs NULL). */
int rules_collapse_depth(const struct ruleset *rs);
/* Runs the rules in order on name; the rewritten name goes to out, the
 * stack flags (RULE_*) are returned. */
unsigned rules_apply(const struct ruleset *rs, const char *name, size_t len,
                     struct strbuf *out);
/* Runs the `thread replace` lines in order on a thread name, into out. */
void rules_apply_thread(const struct ruleset *rs, const char *name, size_t len, struct strbuf *out);
void rules_free(struct ruleset *rs);

/* ---------------------------------------------------------------- options */
/* The rules' options, each entry tagged OPTG_RULES: parse_rules parses it
 * (options.h), --help lists it under Rules. */
#define OPTG_RULES .parse = parse_rules, .place = PLACE_RULES
enum { OPT_RULES = 2 << 8, OPT_NO_DEFAULT_RULES, OPT_SUPPRESSIONS };
struct rules_opts {
    const char *files[64]; size_t nfiles;   /* --rules, after filters/default.rules */
    int no_default;                         /* --no-default-rules */
    const char *suppressions[64]; size_t nsuppressions;     /* leaks --suppressions */
    int builtin_suppressions;               /* leaks: filters/suppressions.rules too (unless
                                               --no-default-suppressions) */
};
#define OPTIONS_RULES(h) \
    { OPTG_RULES, .name = "rules", .id = OPT_RULES, .arg = "FILE", .help = (h) }, \
    { OPTG_RULES, .name = "no-default-rules", .id = OPT_NO_DEFAULT_RULES, .advanced = 1, .help = "do not apply filters/default.rules" }
/* One of the options above into o; 0, or 2 (reported) past 64 files. */
int rules_option(struct rules_opts *o, const char *cmd, int id, const char *arg);
opt_parser parse_rules;             /* the entries': rules_option into c->rules */

#endif
