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
#include "runtime/local/runtime.h"
#include "server/logsrc.h"
#include "server/server.h"
#include "store/store.h"

/* The server's log source over the local runtime's log files, as
 * cmd_server joins them (through the backend interface there). */
static logsrc_stream *src_open(void *arg, const char *ns, const char *pod, const char *container,
                               bool previous, long tail_lines, ty_error *err)
{
    return (logsrc_stream *)rt_local_log_open(arg, ns, pod, container, previous, tail_lines,
                                              err);
}

static char *src_gets(logsrc_stream *s, char *buf, int len)
{
    return rt_local_log_gets((rt_log *)s, buf, len);
}

static bool src_rotated(logsrc_stream *s)
{
    return rt_local_log_rotated((rt_log *)s);
}

static void src_close(logsrc_stream *s)
{
    rt_local_log_close((rt_log *)s);
}

static json_t *src_containers(void *arg, const char *ns, const char *pod)
{
    return rt_local_log_containers(arg, ns, pod);
}

typedef struct fixture {
    logsrc logs;
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
    f->logs = (logsrc){.arg = f->dir, .open = src_open, .gets = src_gets,
                       .rotated = src_rotated, .close = src_close, .containers = src_containers};
    so.logs = &f->logs;
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

/* The endpoint asks its log source: a deleted pod's only logged container
 * is the default, one without a log is waiting to start, a previous run
 * that is not there is said so. */
static void test_asks_the_source(void **state)
{
    fixture *f = *state;
    long status;
    char *got;

    got = get_log(f, "", &status);
    assert_int_equal(status, 404); /* neither the pod nor a log */
    free(got);
    write_log(f, "", 1, 3);
    expect(f, "", 1, 3); /* the pod is gone: c is the one that left a log */
    expect(f, "timestamps=false&limitBytes=7", 1, 1);
    got = get_log(f, "container=d", &status);
    assert_int_equal(status, 400);
    assert_non_null(strstr(got, "is waiting to start: ContainerCreating"));
    free(got);
    got = get_log(f, "container=c&previous=true", &status);
    assert_int_equal(status, 400);
    assert_non_null(strstr(got, "previous terminated container"));
    free(got);
}

/* A source that fails otherwise than "no such log" is reported as such. */
static logsrc_stream *failing_open(void *arg, const char *ns, const char *pod,
                                   const char *container, bool previous, long tail_lines,
                                   ty_error *err)
{
    (void)arg, (void)ns, (void)pod, (void)container, (void)previous, (void)tail_lines;
    ty_seterr(err, TY_EINTERNAL, "the backend is unreachable");
    return NULL;
}

static void test_source_error(void **state)
{
    fixture *f = *state;
    long status;
    char *got;

    f->logs.open = failing_open; /* read per request */
    got = get_log(f, "container=c", &status);
    assert_int_equal(status, 500);
    assert_non_null(strstr(got, "the backend is unreachable"));
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rotated_then_current, setup, teardown),
        cmocka_unit_test_setup_teardown(test_asks_the_source, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_error, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
