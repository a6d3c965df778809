/* test_logfile.c - a container's log read as the server serves it
 * (server/logfile.c): tailLines counted from the end in blocks, the rotated
 * ".1" file read before the current one, and a follower crossing a rotation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/local/logfile.h"

typedef struct fixture {
    char dir[64], path[128], older[160];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    strcpy(f->dir, "/tmp/ty-logfile.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/c.log", f->dir);
    snprintf(f->older, sizeof(f->older), "%s.1", f->path);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    unlink(f->path);
    unlink(f->older);
    rmdir(f->dir);
    free(f);
    return 0;
}

static void write_file(const char *path, const char *mode, const char *text)
{
    FILE *fp = fopen(path, mode);

    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* Lines first..last as "l<i>\n". */
static void write_lines(const char *path, int first, int last)
{
    FILE *fp = fopen(path, "w");

    assert_non_null(fp);
    for (int i = first; i <= last; i++)
        fprintf(fp, "l%d\n", i);
    fclose(fp);
}

/* Everything a reader of path with tail gets, joined. */
static char *read_all(const char *path, long tail)
{
    logfile *lf = logfile_open(path, tail);
    size_t cap = 1 << 22, n = 0;
    char *out = calloc(1, cap), line[256];

    assert_non_null(lf);
    while (logfile_gets(lf, line, sizeof(line))) {
        size_t l = strlen(line);
        assert_true(n + l < cap);
        memcpy(out + n, line, l);
        n += l;
    }
    logfile_close(lf);
    return out;
}

static long offset_of(const char *path, long n, long *found)
{
    FILE *fp = fopen(path, "r");
    long off;

    assert_non_null(fp);
    off = logfile_tail_offset(fp, n, found);
    fclose(fp);
    return off;
}

static void test_tail_offset(void **state)
{
    fixture *f = *state;
    long found;

    write_file(f->path, "w", "a\nbb\nc\n");
    assert_int_equal(offset_of(f->path, 0, &found), 7);
    assert_int_equal(found, 0);
    assert_int_equal(offset_of(f->path, 1, &found), 5);
    assert_int_equal(found, 1);
    assert_int_equal(offset_of(f->path, 2, &found), 2);
    assert_int_equal(offset_of(f->path, 3, &found), 0);
    assert_int_equal(found, 3);
    assert_int_equal(offset_of(f->path, 1000000000, &found), 0);
    assert_int_equal(found, 3);
    /* The writer mid-line: the piece counts as the last line. */
    write_file(f->path, "w", "a\nbb");
    assert_int_equal(offset_of(f->path, 1, &found), 2);
    assert_int_equal(found, 1);
    write_file(f->path, "w", "");
    assert_int_equal(offset_of(f->path, 5, &found), 0);
    assert_int_equal(found, 0);
}

/* Many blocks: the line counts cross block edges. */
static void test_tail_large(void **state)
{
    fixture *f = *state;
    long found;
    char *all;

    write_lines(f->path, 1, 300000); /* ~2 MB, ~33 blocks */
    all = read_all(f->path, 100000);
    assert_int_equal(strncmp(all, "l200001\n", 8), 0);
    assert_non_null(strstr(all, "\nl300000\n"));
    free(all);
    assert_int_equal(offset_of(f->path, 300000, &found), 0);
    assert_int_equal(found, 300000);
    offset_of(f->path, 300001, &found);
    assert_int_equal(found, 300000);
}

static void test_rotated_file_read_first(void **state)
{
    fixture *f = *state;
    char *all;

    write_lines(f->older, 1, 5);
    write_lines(f->path, 6, 8);
    all = read_all(f->path, -1);
    assert_string_equal(all, "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n");
    free(all);
    all = read_all(f->path, 2);
    assert_string_equal(all, "l7\nl8\n");
    free(all);
    all = read_all(f->path, 3);
    assert_string_equal(all, "l6\nl7\nl8\n");
    free(all);
    all = read_all(f->path, 5); /* across the cut */
    assert_string_equal(all, "l4\nl5\nl6\nl7\nl8\n");
    free(all);
    all = read_all(f->path, 100);
    assert_string_equal(all, "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n");
    free(all);
    all = read_all(f->path, 0);
    assert_string_equal(all, "");
    free(all);
}

static void test_follow_across_rotation(void **state)
{
    fixture *f = *state;
    char line[64];
    logfile *lf;

    write_lines(f->path, 1, 2);
    lf = logfile_open(f->path, -1);
    assert_non_null(lf);
    assert_string_equal(logfile_gets(lf, line, sizeof(line)), "l1\n");
    assert_string_equal(logfile_gets(lf, line, sizeof(line)), "l2\n");
    assert_null(logfile_gets(lf, line, sizeof(line)));
    assert_false(logfile_rotated(lf));
    /* The writer: a last line into the old file, the rename; the new file
     * is not there yet. */
    write_file(f->path, "a", "l3\n");
    assert_int_equal(rename(f->path, f->older), 0);
    assert_false(logfile_rotated(lf));
    write_file(f->path, "w", "l4\n");
    /* What the old file still held, then the new one from its start. */
    assert_true(logfile_rotated(lf));
    assert_string_equal(logfile_gets(lf, line, sizeof(line)), "l3\n");
    assert_null(logfile_gets(lf, line, sizeof(line)));
    assert_true(logfile_rotated(lf));
    assert_string_equal(logfile_gets(lf, line, sizeof(line)), "l4\n");
    assert_null(logfile_gets(lf, line, sizeof(line)));
    assert_false(logfile_rotated(lf));
    logfile_close(lf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tail_offset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tail_large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rotated_file_read_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_follow_across_rotation, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
