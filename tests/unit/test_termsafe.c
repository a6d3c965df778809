/* test_termsafe.c - the CLI's terminal-safe output (cli/termsafe.h): what a
 * server sends cannot drive the terminal of whoever reads it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/termsafe.h"

typedef struct sink {
    char b[512];
    size_t n;
} sink;

static void put(void *ctx, const char *b, size_t len)
{
    sink *s = ctx;

    assert_true(s->n + len < sizeof(s->b));
    memcpy(s->b + s->n, b, len);
    s->n += len;
    s->b[s->n] = 0;
}

/* in, escaped in pieces of at most piece bytes */
static const char *escaped(sink *s, const char *in, size_t piece)
{
    size_t n = strlen(in);
    unsigned char carry = 0;

    s->n = 0;
    s->b[0] = 0;
    for (size_t i = 0; i < n; i += piece)
        cli_term_escape(in + i, n - i < piece ? n - i : piece, &carry, put, s);
    cli_term_escape("", 0, &carry, put, s);
    if (carry) {
        char c = (char)carry;
        put(s, &c, 1);
    }
    return s->b;
}

static void test_escape(void **state)
{
    sink s;
    (void)state;

    for (size_t piece = 1; piece <= 64; piece *= 4) {
        /* text, newlines, tabs and UTF-8 as they are */
        assert_string_equal(escaped(&s, "loss=0.1\tépoque 3\n日本\n", piece),
                            "loss=0.1\tépoque 3\n日本\n");
        /* kubectl's: ESC as ^[, CR as \r */
        assert_string_equal(escaped(&s, "loss\x1b[2J\x1b[31m=0.1\x1b]0;pwned\x07", piece),
                            "loss^[[2J^[[31m=0.1^[]0;pwned^G");
        assert_string_equal(escaped(&s, "ok\rFAKE", piece), "ok\\rFAKE");
        /* other C0 controls and DEL in caret notation */
        assert_string_equal(escaped(&s, "a\bb\x7f\x01", piece), "a^Hb^?^A");
        /* C1 controls (CSI is U+009B) as \\u escapes, split or not */
        assert_string_equal(escaped(&s, "x\xc2\x9b" "2Jy\xc2\xa0z", piece),
                            "x\\u009b2Jy\xc2\xa0z");
        /* a lone 0xC2 at the end is left for the caller */
        assert_string_equal(escaped(&s, "end\xc2", piece), "end\xc2");
    }
}

/* The streams main() installs: a child's stdout and stderr through a pipe,
 * colour escapes passed as they are, what it prints escaped. */
static void test_streams(void **state)
{
    int fds[2];
    pid_t pid;
    char b[256];
    ssize_t n, got = 0;
    int st;
    (void)state;

    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        if (cli_term_safe_stdio() < 0)
            _exit(3);
        printf("name=%s|", "job\x1b[2J");
        cli_term_raw(stdout, "\x1b[32m");
        printf("Running");
        fprintf(stderr, "|err\r");
        fflush(stdout);
        _exit(cli_term_fd(stdout) == 1 && cli_term_fd(stderr) == 2 ? 0 : 4);
    }
    close(fds[1]);
    while ((n = read(fds[0], b + got, sizeof(b) - 1 - (size_t)got)) > 0)
        got += n;
    b[got] = 0;
    close(fds[0]);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    /* stderr is unbuffered: it comes before what stdout still held */
    assert_string_equal(b, "name=job^[[2J|\x1b[32m|err\\rRunning");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_streams),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
