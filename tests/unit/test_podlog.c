/* test_podlog.c - GET pods/{name}/log over HTTP against files laid out as
 * the supervisor writes them: a run's rotated ".1" served before its current
 * file, with tailLines across the cut, follow and previous; so that the
 * sanitizer builds cover the handler. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/client.h"
#include "server/server.h"
#include "store/store.h"

typedef struct fixture {
    char dir[64];
    ty_store *store;
    ty_server *srv;
    ty_client *cl;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    server_opts so = {.address = "127.0.0.1", .port = 0};
    ty_error err;
    char url[64];

    ty_error_init(&err);
    strcpy(f->dir, "/tmp/ty-test-podlog.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    f->store = store_open(f->dir, &err);
    assert_non_null(f->store);
    so.data_dir = f->dir;
    f->srv = server_start(f->store, &so, &err);
    assert_non_null(f->srv);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)server_port(f->srv));
    f->cl = client_new(url, &err);
    assert_non_null(f->cl);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char cmd[128];

    client_free(f->cl);
    server_stop(f->srv);
    store_close(f->store);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

/* <logs>/default/gone/c.log<suffix> with lines first..last, timestamped. */
static void write_log(fixture *f, const char *suffix, int first, int last)
{
    char path[256];
    FILE *fp;

    snprintf(path, sizeof(path), "%s/logs/default/gone", f->dir);
    mkdir(f->dir, 0755);
    snprintf(path, sizeof(path), "%s/logs", f->dir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/logs/default", f->dir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/logs/default/gone", f->dir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/logs/default/gone/c.log%s", f->dir, suffix);
    fp = fopen(path, "w");
    assert_non_null(fp);
    for (int i = first; i <= last; i++)
        fprintf(fp, "2026-11-28T01:00:00.%09dZ line %d\n", i, i);
    fclose(fp);
}

/* The body of GET .../pods/gone/log?<query>; *status gets the HTTP status. */
static char *get_log(fixture *f, const char *query, long *status)
{
    char path[256];
    client_resp resp = {0};
    ty_error err;
    char *out;

    ty_error_init(&err);
    snprintf(path, sizeof(path), "/api/v1/namespaces/default/pods/gone/log?%s", query);
    assert_int_equal(client_request(f->cl, "GET", path, NULL, NULL, 0, NULL, &resp, &err), 0);
    *status = resp.status;
    out = strdup(resp.body.data ? resp.body.data : "");
    client_resp_free(&resp);
    return out;
}

static char *lines(int first, int last)
{
    char *out = calloc(1, 16 * (size_t)(last - first + 2)), *p = out;

    for (int i = first; i <= last; i++)
        p += sprintf(p, "line %d\n", i);
    return out;
}

static void expect(fixture *f, const char *query, int first, int last)
{
    long status;
    char *got = get_log(f, query, &status), *want = lines(first, last);

    assert_int_equal(status, 200);
    if (strcmp(got, want))
        fail_msg("GET log?%s:\nwant:\n%s\ngot:\n%s", query, want, got);
    free(got);
    free(want);
}

static void test_rotated_then_current(void **state)
{
    fixture *f = *state;
    long status;
    char *got;

    write_log(f, ".1", 1, 50);
    write_log(f, "", 51, 60);
    expect(f, "container=c", 1, 60);
    expect(f, "container=c&follow=true", 1, 60); /* the pod is gone: ends */
    expect(f, "container=c&tailLines=3", 58, 60);
    expect(f, "container=c&tailLines=10", 51, 60);
    expect(f, "container=c&tailLines=25", 36, 60);
    expect(f, "container=c&tailLines=1000000000", 1, 60);
    expect(f, "container=c&tailLines=25&follow=true", 36, 60);
    got = get_log(f, "container=c&tailLines=0", &status);
    assert_int_equal(status, 200);
    assert_string_equal(got, "");
    free(got);
    got = get_log(f, "container=c&tailLines=-1", &status);
    assert_true(status >= 400 && status < 500); /* refused, not served */
    free(got);

    /* previous: that run's own two files, none of the current run's */
    write_log(f, ".prev.1", 100, 120);
    write_log(f, ".prev", 121, 125);
    expect(f, "container=c&previous=true", 100, 125);
    expect(f, "container=c&previous=true&tailLines=7", 119, 125);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rotated_then_current, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
