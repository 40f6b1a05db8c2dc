/* A libdwfl session over the loaded objects (dwfl_session.c). */
#ifndef MP_DWFL_SESSION_H
#define MP_DWFL_SESSION_H

#include <elfutils/libdwfl.h>

/* A libdwfl session (*d; the process's files, separate debug info found
 * along MP_DEBUGINFO_PATH) over the objects the loader has
 * loaded (dl_iterate_phdr, exact load biases), kept across calls so what was
 * read stays parsed, and re-reported when the loader's counts of loaded and
 * unloaded objects differ from `seen` (updated). NULL if it cannot be made. */
Dwfl *mp_dwfl_session(Dwfl **d, unsigned long long seen[2]);
/* The resident pages of the files the session has read (mapped images of
 * the modules and their debug files) given back; the session stays. */
void mp_dwfl_release_pages(Dwfl *d);

#endif
