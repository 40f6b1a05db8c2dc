/* The MP_* settings, declared once for both programs: the recorder reads
 * them from the environment (options.c), `mpquery record` turns its
 * options into them and prints their help; prof/README.md's settings table is
 * checked against this list (tests/recorder/options_table.sh). No dependency on the
 * recorder's internals: mpquery compiles prof/optdefs.c in too. */
#ifndef MP_OPTDEFS_H
#define MP_OPTDEFS_H

#include <stddef.h>
#include <stdint.h>

/* What a value is, and where its parser (mp_option_parse) stores it:
 * PATH, TEXT: char[size]; SECONDS: double; LONG: long; SIZE, MEMORY:
 * uint64_t; DEPTH, BOOL, SIGNAL, UNWIND, TIMEOUT, STACKS: int; PERCENTS:
 * unsigned char[MP_PERCENTS_MAX], ascending, 0 after the last. */
enum mp_option_kind {
    VAL_PATH, VAL_TEXT, VAL_SECONDS, VAL_DEPTH, VAL_LONG, VAL_SIZE, VAL_BOOL,
    VAL_SIGNAL, VAL_UNWIND, VAL_MEMORY, VAL_TIMEOUT, VAL_STACKS, VAL_PERCENTS,
};
#define MP_PERCENTS_MAX 8                              /* VAL_PERCENTS: at most 8 of them */
enum { UNWIND_LIBUNWIND, UNWIND_FP, UNWIND_CFI };      /* VAL_UNWIND values */
enum { STACKS_UNWIND, STACKS_TAGS, STACKS_NONE };      /* VAL_STACKS values */

/* X(NAME, KIND, DEFAULT, FIELD of struct mp_options, mpquery record's
 *   option, its argument ("": a flag, setting the variable to 1), help on
 *   one line) */
#define MP_OPTIONS(X)                                                                              \
    X(MP_OUT, VAL_PATH, "profile.db", out, "-o, --out", "FILE",                                   \
      "the database to write (made absolute; several runs may share it); %p pid, %e executable " \
      "name, %h host name, %t start time (seconds since the epoch), %% a '%': one file per run")                          \
    X(MP_INTERVAL, VAL_SECONDS, "0", interval, "--interval", "S",                                  \
      "seconds between snapshots (or 250ms, 5m, 1h); 0 = only at exit")                                               \
    X(MP_TICK, VAL_SECONDS, "0.01", tick, "--tick", "S",                                           \
      "seconds between the first points of memory over time (process totals and RSS, no stacks); " \
      "doubled as the run grows, to keep 100 to 200 points; 0 = none")                             \
    X(MP_DEPTH, VAL_DEPTH, "256", depth, "--depth", "N",                                           \
      "deepest stack recorded (1..1024); deeper stacks are marked [truncated]")                    \
    X(MP_THRESHOLD, VAL_LONG, "0", threshold, "--threshold", "N",                                  \
      "N > 0: stacks only for blocks >= N bytes; -N: only for blocks < N bytes")                   \
    X(MP_SAMPLE, VAL_SIZE, "0", sample, "--sample", "BYTES",                                       \
      "0 = every allocation; BYTES = Poisson byte sampling, one sample per BYTES "                 \
      "on average, counters scaled (K, M, G suffixes)")                                            \
    X(MP_STACKS, VAL_STACKS, "unwind", stacks, "--stacks", "WHAT",                                 \
      "unwind = call stacks; tags = the mp_tag_push scope path only (no unwinding); "              \
      "none = process and thread totals only")                                                     \
    X(MP_ENABLED, VAL_BOOL, "1", enabled, "--enabled", "0|1",                                      \
      "0 = load inactive (the mallocprof.h API turns it on)")                                      \
    X(MP_SIGNAL, VAL_SIGNAL, "", signal, "--signal", "SIG",                                        \
      "a signal that requests a snapshot, e.g. USR2")                                              \
    X(MP_UNWIND, VAL_UNWIND, "cfi", unwind, "--unwind", "MODE",                                    \
      "cfi (cached .eh_frame rules), libunwind, or fp (frame pointers: needs -fno-omit-frame-pointer)") \
    X(MP_MAX_MEMORY, VAL_MEMORY, "4G", max_memory, "--max-memory", "SIZE",                         \
      "cap on the profiler's own memory (>= 16M; K, M, G suffixes); past it new "                  \
      "stacks are counted without a stack")                                                        \
    X(MP_DEBUGINFO_PATH, VAL_TEXT, ":.debug:/usr/lib/debug", debuginfo_path, "--debuginfo-path",  \
      "PATH", "where separate debug info files are searched (elfutils format)")                    \
    X(MP_DEBUGINFO_CACHE, VAL_BOOL, "1", debuginfo_cache, "--debuginfo-cache", "0|1",              \
      "1 = a compressed debug file (a -dbg or -dbgsym package's) is read from its uncompressed "   \
      "copy in $XDG_CACHE_HOME/mallocprof/debuginfo (~/.cache/...) when there is one, rather than " \
      "inflated by each process; mpquery record and symbolize make the copies (the recorder "      \
      "writes nothing there); 0 = neither")                                                         \
    X(MP_FATAL_TIMEOUT, VAL_TIMEOUT, "10", fatal_timeout, "--fatal-timeout", "S",                  \
      "seconds the last snapshot after a fatal signal may take (1..3600)")                        \
    X(MP_FINAL, VAL_BOOL, "1", final, "--final", "0|1",                                            \
      "0 = no snapshot when the process ends (exit, exec, fatal signal): only those asked for "   \
      "(MP_INTERVAL, MP_SIGNAL, mp_snapshot)")                                                     \
    X(MP_SYNC, VAL_BOOL, "0", sync, "--sync", "0|1",                                              \
      "1 = each snapshot on disk before the program goes on (fdatasync, several ms each); 0 = "    \
      "written without waiting, the file synced once as the run ends (its first process, record)") \
    X(MP_QUIET, VAL_BOOL, "0", quiet, "-q, --quiet", "",                                           \
      "1 = no 'mallocprof: info' lines on stderr (warnings and errors still); "                    \
      "mpquery record sets it unless --verbose, and -q also drops record's summary line")          \
    X(MP_TIME, VAL_BOOL, "0", time, "--time", "0|1",                                               \
      "1 = credit each thread's wall time between its allocations (sampled ones when sampling), " \
      "less the profiler's, to the stack of the allocation that ends it: the time counter")        \
    X(MP_MMAP, VAL_BOOL, "1", mmap, "--mmap", "0|1",                                               \
      "0 = do not record the program's own mappings (mmap, mremap, brk) per stack")                 \
    X(MP_LEDGER, VAL_BOOL, "1", ledger, "--ledger", "0|1",                                         \
      "0 = no ledger of the resident memory (smaps, mallinfo2) at each snapshot")                   \
    X(MP_COLD, VAL_BOOL, "0", cold, "--cold", "0|1",                                              \
      "1 = at each snapshot, the live bytes on pages not written since the previous one "          \
      "(memcold) and for how many snapshots (coldage), per stack; full capture only")          \
    X(MP_PYTHON, VAL_BOOL, "1", python, "--python", "0|1",                                        \
      "0 = CPython's frames not read (native frames only) and pymalloc's blocks not counted; "     \
      "1 (default) = both, when the program is CPython 3.11-3.13 or links its libpython")          \
    X(MP_NEAR_LIMIT, VAL_PERCENTS, "80,90,95", near_limit, "--near-limit", "P,P...",              \
      "a snapshot (near-limit) when the memory first reaches each of these percentages (1..99) "   \
      "of the process's limit: its memory cgroup's, RLIMIT_AS, RLIMIT_DATA; 0 or off = none")

struct mp_option_def {
    const char *name, *deflt, *option, *arg, *help;
    enum mp_option_kind kind;
};
#define MP_OPTION_ROW(name, kind, deflt, field, option, arg, help) { #name, deflt, option, arg, help, kind },
static const struct mp_option_def mp_option_defs[] = { MP_OPTIONS(MP_OPTION_ROW) };
#undef MP_OPTION_ROW
#define MP_NOPTIONS (sizeof mp_option_defs / sizeof mp_option_defs[0])

/* Parses `text` as a value of `kind` into dst (see above; size is dst's
 * size, for the strings). 0, or -1 when the text is not valid. Pure: no
 * state, no allocation (VAL_PATH reads the working directory). */
int mp_option_parse(enum mp_option_kind kind, const char *text, void *dst, size_t size);

/* The one parser of sizes (bytes: 4096, 64K, 1.5M, 2GiB; powers of
 * 1024) and of durations (seconds: 0.5, 250ms, 10s, 2m, 1h, 1d) for
 * both programs: the MP_* variables, mpquery's options, the settings a
 * profile recorded. 0, or -1 when the text is not one. */
int mp_parse_size(const char *text, uint64_t *bytes);
int mp_parse_duration(const char *text, double *seconds);
/* The value of NAME in a process's recorded settings ("NAME=VALUE"
 * separated by spaces or newlines: process.settings, mp_attach's text)
 * into value (size bytes). 0, or -1 when absent or too long. */
int mp_setting_value(const char *settings, const char *name, char *value, size_t size);

/* MP_OUT's placeholders, as core(5)'s core_pattern spells them: %p the
 * pid, %e the executable's base name, %h the host name, %t the start time
 * (seconds since the epoch), %% a '%'. The values a run's first process
 * (or mpquery record, for the program it starts) puts in. */
struct mp_out_values { long pid, start; const char *exe, *host; };
/* pattern with its placeholders replaced into out (size bytes); an
 * unknown one (%x, or a '%' at the end) is kept as it is, and the first
 * such letter goes into *unknown ('%' for a trailing one; 0: none).
 * 0, or -1 when the result does not fit. Pure: no allocation. */
int mp_out_expand(const char *pattern, const struct mp_out_values *v, char *out, size_t size, char *unknown);

#endif
