/* The process layer's interface, for itself and entry/ above it: start
 * and end (lifecycle.c, ending.c), fork (fork.c, clone.c), signals
 * (signals.c), the profiler's thread (lifecycle.c), the limits' watch
 * (nearlimit.c), attach sessions (attach.c, attach_tree.c) and GOT
 * patching (got.c). Nothing below process/ includes it: the lower layers
 * know the top only through the hooks process/ installs (mp_tick_hook)
 * and the state it sets (mp_background, base.h). */
#ifndef MP_PROCESS_H
#define MP_PROCESS_H

#include "base.h"

void signals_init(void);        /* the program's handlers wrapped; fatal signals at SIG_DFL managed */
/* ------------------------------------------------------------ lifecycle.c */
void background_after_fork_child(void);
void fork_init(void);           /* fork.c: the atfork handlers */
/* fork.c's handlers for a process made without fork (clone.c): before,
 * then after in the parent (child 0) or the child (1) */
void fork_before(void);
void fork_after(int child);
void mp_ensure_init(void);
/* The last snapshot of a session that ends while the process goes on
 * (attach.c's detach: reason detach; clone.c's child about to leave
 * with the exit system call: reason exit): process.ended = how. */
void lifecycle_end_session(int detach, const char *how);
void ending_init(void);             /* at init: quick_exit's snapshot (ending.c) */
void background_pause(int stop);    /* the profiler's thread stopped (1) or started again (0) */
void background_run(void (*job)(void));  /* job run by the profiler's thread (or the caller without one), waited for */
/* nearlimit.c: snapshots as the memory nears the process's limits (MP_NEAR_LIMIT) */
void nearlimit_init(void);          /* at init, in the program's thread: the limits found, the cgroup's files opened */
int nearlimit_watching(void);       /* a limit to watch: the background thread has work */
double nearlimit_look(double now);  /* the thread's look, a snapshot at a percentage reached; the next one's time (0: none) */

/* ------------------------------------------------------------ attach.c, got.c */
int attach_dormant(void);           /* the constructor: loaded by dlopen, not preloaded (1) */
int attach_idle(void);             /* loaded by mpquery, no session under way: nothing to do */
int attach_run_start(void);         /* the session's run token (the settings' MP_RUN); 1 */
void attach_after_fork_child(void);  /* fork.c: the child's locks; a child of a session watches it */
void got_after_fork_child(void);     /* got.c's lock, the child's */
void attach_end_here(void);          /* a session's child: its session over, recording ends (its thread) */
/* attach_tree.c: the processes of a session */
void tree_session_start(void);      /* mp_attach: a new session id, live */
void tree_session_ending(void);     /* mp_detach: the children end, their last snapshots wanted */
void tree_session_wait(double seconds);     /* mp_detach: for them; none writes after */
void tree_fork_child(void);         /* fork.c: a child recording for the session */
int tree_watching(void);            /* this process is such a child */
int tree_session_over(void);        /* and its session has ended */
int tree_may_write(void);           /* its last snapshot is still wanted (1 outside a session's children) */
void tree_process_ended(void);      /* its last snapshot written: not waited for */
void fork_new_session(void);        /* fork.c: every counter reset, as a fork child's, all threads kept */
int got_patch(void);                /* every loaded module's allocator slots to our hooks */
void got_restore(void);             /* and back */
void got_forget(void);              /* after got_restore, before arena_forget: its list forgotten */

#endif
