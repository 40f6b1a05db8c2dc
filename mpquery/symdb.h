/* symbolize's access to the database it rewrites: its reads are at the
 * end of profile.c, its writes in profile_write.c. Each call returns 0, or
 * EXIT_FAILED with "WHAT: sqlite's message" in err (symdb_max_id: -1). */
#ifndef MPQUERY_SYMDB_H
#define MPQUERY_SYMDB_H

#include "mpquery.h"

struct sqlite3_stmt;
struct symdb {
    struct sqlite3 *db;
    struct sqlite3_stmt *frame_update, *frame_insert;   /* prepared on first use */
    char err[1024];
};
/* A frame row as symbolize works on it; function, file: 0 = NULL. */
struct frow {
    int64_t id, module, offset, function, file;
    int depth, line;
    int64_t addr;                   /* symbolize's: index of its address */
};
struct stack_row { int64_t id, parent, frame; };
int64_t symdb_max_id(struct symdb *d, const char *table);
int symdb_each_name(struct symdb *d, int files, void (*fn)(void *ctx, int64_t id, const char *name),
                    void *ctx);
/* Sorted by (module, offset, inline_depth): an address's rows are consecutive. */
int symdb_frames(struct symdb *d, struct frow **out, size_t *n);
int symdb_stacks(struct symdb *d, struct stack_row **out, size_t *n);
/* The modules that are files (not [tag], [unknown]...), by id; their
 * strings in text. */
struct module_row { int64_t id; const char *path, *build_id; };
int symdb_modules(struct symdb *d, struct module_row **out, size_t *n, struct arena *text);
/* BEGIN IMMEDIATE, COMMIT, ROLLBACK */
int symdb_exec(struct symdb *d, const char *sql);
int symdb_insert_name(struct symdb *d, int is_file, int64_t id, const char *name);
/* Sets frame f->id's function, file and line; with insert, adds f whole. */
int symdb_write_frame(struct symdb *d, const struct frow *f, int insert);
/* The stack table becomes rows[0..nrows); sample rows move from stack
 * old[i].id to new_ids[i]; frames no stack uses any more are deleted. */
int symdb_replace_stacks(struct symdb *d, const struct stack_row *old, const int64_t *new_ids, size_t nold,
                         const struct stack_row *rows, size_t nrows);
/* Finalizes its statements (the connection stays open); then closes. */
void symdb_finish(struct symdb *d);
void symdb_close(struct symdb *d);

#endif
