/* push --follow's rounds (follow.h): the batches of every file due, built
 * into one writer and stored by one commit (one INSERT a table for all of
 * them, where a commit a file made ClickHouse write a part per table and
 * file: 1,000 files a snapshot every 10 s were 800 INSERTs a second);
 * then, and only then, each file's position moves and is kept in its
 * state file, replaced atomically. A failed commit leaves every file of
 * the round in doubt, to be read again. */
#include "follow.h"
#include "hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A round is committed before it holds more rows in a table than this
 * and a file's batch (BATCH_ROWS at most): ClickHouse's
 * max_insert_block_size is 1,048,576 rows, and an INSERT of one block is
 * stored whole or not at all. */
enum { ROUND_ROWS = 600000 };

void follow_set_stored(struct ffile *f, uint64_t key)
{
    int created;
    *idmap_put(&f->stored, key, &created) = 1;
}

/* ---------------------------------------------------------------- the state file */
void follow_state_load(struct agent *a, struct ffile *f)
{
    char *real = realpath(f->path, NULL);
    const char *name = real ? real : f->path;
    struct strbuf sb = { 0 };
    sb_printf(&sb, "%s/%016llx.state", a->o->state_dir, (unsigned long long)fnv1a(name, strlen(name)));
    free(real);
    f->state = xstrdup(sb.s);
    sb_free(&sb);
    f->doubt = 1;
    FILE *in = fopen(f->state, "re");
    if (!in) return;
    unsigned long long dev, ino;
    long long shipped;
    int finished;
    if (fscanf(in, "mpquery push --follow 1\ndev %llu\nino %llu\nshipped %lld\nfinished %d\n", &dev, &ino,
               &shipped, &finished) == 4)
        f->dev = dev, f->ino = ino, f->shipped = shipped, f->finished = finished;
    fclose(in);
}

int follow_state_save(struct ffile *f)
{
    struct strbuf tmp = { 0 };
    sb_printf(&tmp, "%s.tmp", f->state);
    FILE *out = fopen(tmp.s, "we");
    int ok = out && fprintf(out, "mpquery push --follow 1\ndev %llu\nino %llu\nshipped %lld\nfinished %d\npath %s\n",
                            (unsigned long long)f->dev, (unsigned long long)f->ino, (long long)f->shipped,
                            f->finished, f->path) > 0;
    ok = ok && fflush(out) == 0 && fsync(fileno(out)) == 0;
    if (out && fclose(out) != 0) ok = 0;
    ok = ok && rename(tmp.s, f->state) == 0;
    if (ok) {
        char *dir = xstrdup(f->state), *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) { fsync(fd); close(fd); }
        free(dir);
    } else if (!f->said) {
        warning("push: %s: cannot write %s (%s): the position is kept in memory only", f->path, f->state,
                strerror(errno));
        f->said = 1;
    }
    sb_free(&tmp);
    return ok ? 0 : -1;
}

/* ---------------------------------------------------------------- the round */
void follow_round_begin(struct agent *a)
{
    ch_writer_init(&a->w, &a->c, (size_t)-1, 0);     /* one INSERT a table: a block, stored whole */
    a->npend = 0;
}

int follow_round_full(const struct agent *a)
{
    for (int t = 0; t < CH_NTABLES; t++)
        if (a->w.buffered[t] >= ROUND_ROWS) return 1;
    return 0;
}

struct follow_pending *follow_pending_add(struct agent *a, struct ffile *f, int64_t last, size_t n)
{
    a->pend = array_grow(a->pend, a->npend, &a->cap_pend, sizeof *a->pend);
    struct follow_pending *pd = &a->pend[a->npend++];
    *pd = (struct follow_pending){ .f = f, .last = last, .n = n };
    return pd;
}

void follow_pending_key(struct follow_pending *pd, uint64_t key)
{
    pd->keys = array_grow(pd->keys, pd->nkeys, &pd->cap, sizeof *pd->keys);
    pd->keys[pd->nkeys++] = key;
}

/* The round stored: each file's position moved. */
static void stored(struct agent *a, struct follow_pending *pd)
{
    struct ffile *f = pd->f;
    for (size_t k = 0; k < pd->nkeys; k++) follow_set_stored(f, pd->keys[k]);
    f->doubt = 0;
    f->shipped = pd->last;
    follow_state_save(f);
    a->snapshots += pd->n;
    a->rows += pd->rows;
    if (pd->again) f->dirty = 1, f->due = 0, f->size = -1;   /* its end: read again, unchanged as it is */
}

int follow_round_end(struct agent *a, int commit)
{
    int rc = commit && a->npend ? ch_commit(&a->w, a->err, sizeof a->err) : 0;
    for (size_t i = 0; i < a->npend; i++) {
        struct follow_pending *pd = &a->pend[i];
        if (commit && !rc) stored(a, pd);
        else pd->f->doubt = 1, pd->f->dirty = 1, pd->f->due = 0;
        free(pd->keys);
    }
    a->npend = 0;
    ch_writer_free(&a->w);
    return rc;
}
