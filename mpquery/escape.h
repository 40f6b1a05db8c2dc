/* What output.c's tables use of escape.c beyond the escapers themselves
 * (declared with the writers in mpquery.h). */
#ifndef MPQUERY_ESCAPE_H
#define MPQUERY_ESCAPE_H

#include <stddef.h>

/* Display width of s: the code points text_clean writes, not bytes. */
size_t text_width(const char *s);

#endif
