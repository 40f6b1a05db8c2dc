/* What rules.c (the rule set: parsing, applying) asks of rules_regex.c
 * (a regex looked at before regcomp sees it). Never included elsewhere. */
#ifndef MPQUERY_RULES_INTERNAL_H
#define MPQUERY_RULES_INTERNAL_H

#include <stddef.h>

/* The longest run of characters that every match of re must contain
 * (malloc'd, its length in *len), found only where that is certain
 * (top-level sequence, no top-level '|'); NULL when there is none. */
char *rules_required_literal(const char *re, size_t *len);

#endif
