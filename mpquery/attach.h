/* mpquery record --pid (attach.c). */
#ifndef MPQ_ATTACH_H
#define MPQ_ATTACH_H

#include <sys/types.h>

/* Records process pid from now until duration seconds have passed (0:
 * until ^C, SIGTERM or its end) into out, with settings ("NAME=VALUE"
 * lines, MP_OUT and MP_RUN among them); says what it wrote (record_db.c)
 * unless quiet. 0, or the exit code, said. */
int record_attach(pid_t pid, const char *lib, const char *out, const char *settings, const char *token,
                  double duration, int quiet);

#endif
