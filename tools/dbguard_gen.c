/* Build time: build/schema_ref.h, the current schema's sqlite_master rows
 * as this SQLite library makes them (dbguard.c's own reference_build, so
 * that they are the rows a process would build) and the library's
 * identity, which a process compares with its own library's before using
 * them (dbguard.c, reference_built_in). */
#define DBGUARD_GEN
#include "dbguard.c"

/* s as a C string literal, or NULL. */
static void literal(const char *s)
{
    if (!s) {
        fputs("NULL", stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c == '\n') fputs("\\n\"\n    \"", stdout);
        else if (c < 0x20 || c >= 0x7f) printf("\\%03o", c);
        else putchar(c);
    }
    putchar('"');
}

int main(void)
{
    struct reference *ref = reference_build(1);
    char id[4096];
    library_identity(id, sizeof id);
    if (!ref || !id[0]) {
        fprintf(stderr, "dbguard_gen: cannot build the schema's reference rows\n");
        return 1;
    }
    puts("/* Made by dbguard_gen (tools/dbguard_gen.c) from schema/profile.sql: do not edit. */");
    fputs("static const char SCHEMA_REF_LIBRARY[] = ", stdout);
    literal(id);
    puts(";\nstatic const char *const schema_ref_rows[][NCOLS] = {");
    for (size_t i = 0; i < ref->n; i++) {
        fputs("  { ", stdout);
        for (int c = 0; c < NCOLS; c++) {
            literal(ref->rows[i].col[c]);
            fputs(c + 1 < NCOLS ? ", " : " },\n", stdout);
        }
    }
    puts("};");
    reference_free(ref);
    return fflush(stdout) ? 1 : 0;
}
