/* test_guard.c - the front door's Host rule and its configuration (the
 * requests themselves are tried from outside in tests/e2e/t0120). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/dirlock.h"
#include "server/guard.h"
#include "server/http.h"
#include "tmpdir.h"

static void test_loopback_and_ip_hosts(void **state)
{
    server_opts so = {0};
    ty_error err;
    http_guard *g;
    (void)state;

    ty_error_init(&err);
    g = guard_new(&so, &err);
    assert_non_null(g);
    assert_true(guard_host_allowed(g, "127.0.0.1:8080"));
    assert_true(guard_host_allowed(g, "127.0.0.1"));
    assert_true(guard_host_allowed(g, "10.1.2.3:80"));
    assert_true(guard_host_allowed(g, "[::1]:8080"));
    assert_true(guard_host_allowed(g, "[::1]"));
    assert_true(guard_host_allowed(g, "localhost:8080"));
    assert_true(guard_host_allowed(g, "LOCALHOST."));
    assert_true(guard_host_allowed(g, "api.localhost:1"));
    /* names a page could rebind to 127.0.0.1 */
    assert_false(guard_host_allowed(g, "attacker.example:8080"));
    assert_false(guard_host_allowed(g, "localhost.attacker.example"));
    assert_false(guard_host_allowed(g, "127.0.0.1.nip.io:8080"));
    assert_false(guard_host_allowed(g, "notlocalhost"));
    /* malformed */
    assert_false(guard_host_allowed(g, ""));
    assert_false(guard_host_allowed(g, ":8080"));
    assert_false(guard_host_allowed(g, "::1"));
    assert_false(guard_host_allowed(g, "[::1"));
    assert_false(guard_host_allowed(g, "[::1]x"));
    guard_free(g);
}

static void test_configured_hosts(void **state)
{
    server_opts so = {.allowed_hosts = "trainyard.lab,,*.corp.example"};
    ty_error err;
    http_guard *g;
    (void)state;

    ty_error_init(&err);
    g = guard_new(&so, &err);
    assert_non_null(g);
    assert_true(guard_host_allowed(g, "trainyard.lab:8080"));
    assert_true(guard_host_allowed(g, "TrainYard.Lab"));
    assert_true(guard_host_allowed(g, "gpu1.corp.example:443"));
    assert_false(guard_host_allowed(g, "corp.example"));
    assert_false(guard_host_allowed(g, "trainyard.lab.attacker.example"));
    guard_free(g);
}

static void test_bad_configuration(void **state)
{
    server_opts so = {.cors_allowed_origins = "^https://ok$,(unclosed"};
    char many[4096] = "";
    ty_error err;
    (void)state;

    ty_error_init(&err);
    assert_null(guard_new(&so, &err));
    assert_non_null(strstr(err.text, "(unclosed"));
    for (int i = 0; i < 40; i++)
        strcat(many, "h.example,");
    so = (server_opts){.allowed_hosts = many};
    ty_error_init(&err);
    assert_null(guard_new(&so, &err));
    assert_non_null(strstr(err.text, "more than"));
}

/* One server per data directory: the second taker is told who holds it. */
static void test_dirlock(void **state)
{
    char dir[64];
    ty_error err;
    int fd;
    (void)state;

    ty_error_init(&err);
    strcpy(dir, "/tmp/ty-test-dirlock.XXXXXX");
    assert_non_null(mkdtemp(dir));
    assert_int_equal(ty_dirlock_holder(dir), 0);
    fd = ty_dirlock_take(dir, &err);
    assert_true(fd >= 0);
    /* record locks belong to the process: ask from a child */
    pid_t child = fork();
    if (child == 0) {
        ty_error e2;
        ty_error_init(&e2);
        int ok = ty_dirlock_take(dir, &e2) < 0 && e2.code == TY_ECONFLICT &&
                 strstr(e2.text, "in use by another trainyard server (pid ") &&
                 ty_dirlock_holder(dir) == getppid();
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(fd);
    assert_int_equal(ty_dirlock_holder(dir), 0);
    tmpdir_remove(dir);
}

/* A message cut mid-character (input quoted into it) still reaches the
 * client: the Status had no message at all. */
static void test_status_message_not_utf8(void **state)
{
    ty_error err;
    json_t *st;
    (void)state;

    ty_error_init(&err);
    ty_seterr(&err, TY_EBADREQUEST, "key \"ab\xe2\x82\" is not allowed");
    st = status_from_error(&err, NULL, NULL);
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "key \"ab??\" is not allowed");
    json_decref(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loopback_and_ip_hosts),
        cmocka_unit_test(test_configured_hosts),
        cmocka_unit_test(test_bad_configuration),
        cmocka_unit_test(test_dirlock),
        cmocka_unit_test(test_status_message_not_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
