/* mpquery's string table (util.c: struct strtab), which interns names on
 * load: equal strings (by length and bytes) get the same dense id in order
 * of first sight, different ones different ids (prefixes, embedded NULs,
 * the empty string), the text a NUL-terminated copy that stays where it is
 * when the table grows. */
#include "mpquery.h"
#include "check.h"

/* strtab_intern(s, len) must give id, in this order */
struct intern_case { const char *s; size_t len; uint32_t id; };

static void intern_all(struct strtab *t, const struct intern_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t id = strtab_intern(t, c[i].s, c[i].len);
        if (id != c[i].id) {
            fprintf(stderr, "check failed: case %zu: strtab_intern(\"%s\", %zu) = %u, expected %u\n",
                    i, c[i].s, c[i].len, id, c[i].id);
            exit(1);
        }
    }
}

static void test_ids(void)
{
    static const struct intern_case cases[] = {
        { "main", 4, 0 }, { "malloc", 6, 1 }, { "main", 4, 0 },
        { "mainly", 4, 0 },                     /* the first 4 bytes */
        { "mainly", 6, 2 }, { "mai", 3, 3 }, { "", 0, 4 }, { "", 0, 4 },
    };
    struct strtab t;
    strtab_init(&t);
    intern_all(&t, cases, sizeof cases / sizeof *cases);
    CHECK_EQ(t.n, 5);
    CHECK_STR(t.str[0], "main");
    CHECK_STR(t.str[2], "mainly");
    CHECK_STR(t.str[4], "");
    CHECK_EQ(t.len[0], 4);
    CHECK_EQ(t.len[3], 3);
    strtab_free(&t);
    CHECK(t.str == NULL && t.n == 0 && t.slots == NULL);
    OK("ids 0, 1, 2... in order of first sight; prefixes and \"\" are strings of their own");
}

static void test_bytes(void)
{
    /* "a\0" and "\0": a string and itself with a NUL more, which the
     * stored copy's terminator must not make equal */
    static const struct intern_case cases[] = {
        { "a\0b", 3, 0 }, { "a", 1, 1 }, { "a\0c", 3, 2 }, { "a\0b", 3, 0 },
        { "a\0", 2, 3 }, { "\0", 1, 4 }, { "", 0, 5 }, { "a", 1, 1 },
    };
    struct strtab t;
    strtab_init(&t);
    intern_all(&t, cases, sizeof cases / sizeof *cases);
    CHECK(memcmp(t.str[0], "a\0b", 4) == 0);       /* the bytes and a NUL after them */
    /* the hash reads 8-byte words: strings differing only in their last
     * byte, at lengths around a word's end */
    char s[24], u[24];
    for (size_t len = 7; len <= 17; len++) {
        memset(s, 'x', len);
        memcpy(u, s, len);
        u[len - 1] = 'y';
        uint32_t a = strtab_intern(&t, s, len), b = strtab_intern(&t, u, len);
        CHECK(a != b);
        CHECK_EQ(strtab_intern(&t, s, len), a);
        CHECK_EQ(strtab_intern(&t, u, len), b);
        CHECK(memcmp(t.str[b], u, len) == 0 && t.str[b][len] == 0);
    }
    CHECK_EQ(t.n, 6 + 2 * 11);
    strtab_free(&t);
    OK("embedded NULs and the last byte of 7..17-byte strings tell strings apart");
}

static void test_growth(void)
{
    enum { N = 5000 };
    struct strtab t;
    strtab_init(&t);
    CHECK_EQ(t.nslots, 1024);
    CHECK_EQ(strtab_intern(&t, "first", 5), 0);
    const char *first = t.str[0];
    char name[32];
    for (uint32_t i = 0; i < N; i++) {
        int n = snprintf(name, sizeof name, "f%u", i);
        CHECK_EQ(strtab_intern(&t, name, (size_t)n), i + 1);
        CHECK(t.n * 2 <= t.nslots);
    }
    CHECK_EQ(t.nslots, 16384);      /* doubled at 513, 1025, 2049 and 4097 strings */
    CHECK(t.str[0] == first);       /* the text does not move: callers keep pointers */
    CHECK_STR(t.str[0], "first");
    for (uint32_t i = 0; i < N; i++) {
        int n = snprintf(name, sizeof name, "f%u", i);
        CHECK_EQ(strtab_intern(&t, name, (size_t)n), i + 1);
        CHECK_STR(t.str[i + 1], name);
    }
    CHECK_EQ(t.n, N + 1);
    strtab_free(&t);
    OK("%d strings: dense ids kept through the growth, text pointers stable", N + 1);
}

int main(void)
{
    test_ids();
    test_bytes();
    test_growth();
    return 0;
}
